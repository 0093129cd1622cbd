/**
 * A model name is one name, never a path: a channel's glob (`gemini-2.5-flash*`) does not match a name with a `..`
 * segment, `?`, `#` or `%`, which put in Gemini's `models/{model}:generateContent` reached another model, another
 * collection (`cachedContents`) or another query with the channel's key. A name the operator wrote goes in the URL
 * encoded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { geminiPath } from '../../../src/protocols/gemini/request'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startGeminiMock, type VendorMock } from '../../mocks'

let app: TestApp
let ge: VendorMock

beforeAll(async () => {
	ge = await startGeminiMock({ apiKey: 'up-ge' })
	app = await startTestApp({
		config: { channels: [{ name: 'flash', type: 'gemini', base_url: ge.url, api_key: 'up-ge', models: ['gemini-2.5-flash*'] }], models: [] },
		env: { ALLOW_UNPRICED_MODELS: 'true' },
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await ge.stop()
})

const TRAVERSALS = ['gemini-2.5-flash/../gemini-2.5-pro', 'gemini-2.5-flash/../../cachedContents#', 'gemini-2.5-flash/../../files?pageSize=1&x=', 'gemini-2.5-flash%2F..%2Fgemini-2.5-pro']

describe('a model name that is a path', () => {
	it('should be no model of a glob, for an OpenAI client: 404, nothing sent', async () => {
		const { key } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const before = ge.requests.length
		for (const model of TRAVERSALS) {
			const err = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.NotFoundError)
		}
		expect(ge.requests.length).toBe(before)
		// The glob still serves its models.
		const ok = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] })
		expect(ok.choices[0]!.message.content).toBe('Hello! You said: x')
	})

	it('should be no model of a glob, for a Gemini client whose path encodes it', async () => {
		const { key } = await app.account(1)
		const before = ge.requests.length
		const res = await fetch(`${app.url}/v1beta/models/gemini-2.5-flash%2F..%2Fgemini-2.5-pro:generateContent`, {
			method: 'POST',
			headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
			body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }),
		})
		expect(res.status).toBe(404)
		expect(((await res.json()) as { error: { status: string } }).error.status).toBe('NOT_FOUND')
		expect(ge.requests.length).toBe(before)
		const ok = await new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } }).models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' })
		expect(ok.text).toBe('Hello! You said: x')
	})

	it("should put a name in Gemini's URL as one path segment", () => {
		expect(geminiPath('gemini-2.5-flash', false)).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
		expect(geminiPath('a/../b?c#d', true)).toBe('/v1beta/models/a%2F..%2Fb%3Fc%23d:streamGenerateContent?alt=sse')
	})
})
