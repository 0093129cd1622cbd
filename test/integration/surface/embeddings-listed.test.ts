/**
 * The Models page and /pricing list where an embedding model can be called (QA of a fresh clone): `@google/genai`'s
 * `embedContent` worked for OpenAI's and Gemini's embedding models alike, but the list named only OpenAI's
 * `/v1/embeddings`, so a Gemini SDK user read them as not served to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

let oa: VendorMock
let ge: VendorMock
let app: TestApp
let key: string

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	ge = await startGeminiMock({ apiKey: 'up-ge' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['text-embedding-3-small'] },
				{ name: 'ge', type: 'gemini', base_url: ge.url, api_key: 'up-ge', models: ['gemini-embedding-001'] },
			],
			models: [
				{ name: 'text-embedding-3-small', input_per_mtok: 0.02 },
				{ name: 'gemini-embedding-001', input_per_mtok: 0.15 },
			],
		},
	})
	key = (await app.account(5)).key
}, 120_000)
afterAll(async () => {
	await app.close()
	await oa.stop()
	await ge.stop()
})

describe('embedding models in the public model list', () => {
	for (const model of ['text-embedding-3-small', 'gemini-embedding-001']) {
		it(`should list for ${model} both the OpenAI and the Gemini routes its SDKs embed through`, async () => {
			const openai = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
			const viaOpenAI = await openai.embeddings.create({ model, input: 'fresh clone' })
			expect(viaOpenAI.data[0]!.embedding.length).toBeGreaterThan(0)
			const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url } })
			const viaGemini = await genai.models.embedContent({ model, contents: 'fresh clone' })
			expect(viaGemini.embeddings?.[0]?.values?.length).toBeGreaterThan(0)

			const listed = ((await (await fetch(`${app.url}/api/pricing`)).json()) as { data: Array<{ name: string; endpoints: string[]; protocols: string[] }> }).data.find((m) => m.name === model)!
			expect(listed.endpoints).toEqual(['POST /v1/embeddings', 'POST /v1beta/models/{model}:embedContent', 'POST /v1beta/models/{model}:batchEmbedContents'])
			expect(listed.protocols).toEqual(['OpenAI Embeddings', 'Gemini Embeddings'])
		})
	}
})
