/**
 * AI SDK calls that reach a route the gateway does not serve must say so: the SDK showed a bare "Not found"; the 404
 * now names the method and path, in the caller's protocol shape. @ai-sdk/google's `transcription()` model posts to
 * Gemini's Interactions API (`/v1beta/interactions`), which the gateway now serves: a model it does not serve is
 * Gemini's 404, naming the model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { createOpenAI } from '@ai-sdk/openai'
import { APICallError, generateText, transcribe } from 'ai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { rawPieces, rawPost } from '../../helpers/raw-pieces'
import { wav } from '../../helpers/wav'

let app: TestApp

beforeAll(async () => {
	app = await startTestApp({ config: { channels: [], models: [] } })
}, 30_000)

afterAll(async () => {
	await app.close()
})

async function failure(p: Promise<unknown>): Promise<APICallError> {
	try {
		await p
	} catch (e) {
		expect(APICallError.isInstance(e)).toBe(true)
		return e as APICallError
	}
	throw new Error('the call succeeded')
}

describe('routes the gateway does not serve', () => {
	it("should answer @ai-sdk/google's transcription (Gemini Interactions API) of a model not served 404 naming it, in Gemini's shape", async () => {
		const { key } = await app.account(1)
		const google = createGoogleGenerativeAI({ apiKey: key, baseURL: `${app.url}/v1beta` })
		const e = await failure(transcribe({ model: google.transcription('gemini-3.5-transcribe'), audio: wav(1) }))
		expect(e.statusCode).toBe(404)
		expect(e.message).toBe('The model "gemini-3.5-transcribe" does not exist or is not served here')
		expect(JSON.parse(e.responseBody!).error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
	})

	it("should name an unknown /v1 route in OpenAI's shape", async () => {
		const { key } = await app.account(1)
		const res = await fetch(`${app.url}/v1/assistants`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })
		expect(res.status).toBe(404)
		expect((await res.json()).error).toMatchObject({ message: 'No route POST /v1/assistants on this gateway (GET /docs lists the routes it serves)', code: 'not_found' })
		// The OpenAI provider's own calls still reach their routes (this one answers 404 for the unknown model, not the route).
		const openai = createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const e = await failure(transcribe({ model: openai.transcription('whisper-1'), audio: wav(1), maxRetries: 0 } as Parameters<typeof transcribe>[0]))
		expect(e.statusCode).toBe(404)
		expect(e.message).not.toContain('No route')
	})

	it('should keep the bare "Not found" on the management API (the console reads it as a route missing on an older server)', async () => {
		const res = await fetch(`${app.url}/api/nothing-here`, { headers: { authorization: 'Bearer x' } })
		expect(res.status).toBe(404)
		expect((await res.json()).error.message).toBe('Not found')
	})
})

describe('a base URL without the API prefix', () => {
	// @ai-sdk/anthropic appends only `/messages` and @ai-sdk/google only `/models/…`: given the root, as the Anthropic SDK
	// and @google/genai take it, they got a bare "Not found" that did not say what to change.
	it('should tell @ai-sdk/anthropic given the root that the route is /v1/messages', async () => {
		const { key } = await app.account(1)
		const anthropic = createAnthropic({ apiKey: key, baseURL: app.url })
		const e = await failure(generateText({ model: anthropic('claude-sonnet-5'), prompt: 'hi', maxRetries: 0 }))
		expect(e.statusCode).toBe(404)
		expect(e.message).toBe('No route POST /messages on this gateway: the model API is under /v1 and /v1beta (POST /v1/messages here); check the base URL of the client')
	})

	it('should tell @ai-sdk/google given the root that the route is under /v1beta, in Gemini shape', async () => {
		const { key } = await app.account(1)
		const google = createGoogleGenerativeAI({ apiKey: key, baseURL: app.url })
		const e = await failure(generateText({ model: google('gemini-2.5-flash'), prompt: 'hi', maxRetries: 0 }))
		expect(e.statusCode).toBe(404)
		expect(e.message).toBe('No route POST /models/gemini-2.5-flash:generateContent on this gateway: the model API is under /v1 and /v1beta (POST /v1beta/models/gemini-2.5-flash:generateContent here); check the base URL of the client')
		expect(JSON.parse(e.responseBody!).error).toMatchObject({ code: 404, status: 'NOT_FOUND' })
	})
})

describe('a base URL ending in a slash', () => {
	// A client that joins `http://host/` and `/v1/chat/completions` as strings (curl scripts, hand-written ones) sends a
	// path with an empty segment: the 404 says so, in the caller's shape, with the path meant.
	it('should name the double slash and the path meant, for each protocol', async () => {
		const { key } = await app.account(1)
		// Raw HTTP: Bun's fetch would send the path with the empty segment dropped.
		const port = Number(new URL(app.url).port)
		const post = async (path: string, headers: Record<string, string>) => {
			const text = (await rawPieces(port, rawPost(`127.0.0.1:${port}`, path, { 'content-type': 'application/json', ...headers }, '{}'))).map((p) => p.text).join('')
			return { status: Number(text.split(' ')[1]), json: async () => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) }
		}
		const chat = await post('//v1/chat/completions', { authorization: `Bearer ${key}` })
		expect(chat.status).toBe(404)
		expect((await chat.json()).error.message).toBe(
			'No route POST //v1/chat/completions on this gateway: the path has an empty segment (//); check the base URL of the client for a trailing slash (POST /v1/chat/completions here)',
		)
		const messages = await post('//v1/messages', { 'x-api-key': key })
		expect((await messages.json()).error).toMatchObject({ type: 'not_found_error', message: expect.stringContaining('(POST /v1/messages here)') })
		const gemini = await post('//v1beta/models/gemini-2.5-flash:generateContent', { 'x-goog-api-key': key })
		expect((await gemini.json()).error).toMatchObject({ code: 404, status: 'NOT_FOUND', message: expect.stringContaining('(POST /v1beta/models/gemini-2.5-flash:generateContent here)') })
	})
})
