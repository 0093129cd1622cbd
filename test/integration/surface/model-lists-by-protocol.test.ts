/**
 * Each protocol's model list offers what its clients can call (QA of a fresh clone): the Anthropic SDK's
 * `models.list` named whisper-1, tts-1 and dall-e-3, which `/v1/messages` cannot reach, and `@google/genai`'s listed
 * them with `generateContent` among their `supportedActions`. OpenAI's list keeps every model, as OpenAI's does. An
 * alias is of the family of the name its channel sends upstream, on the lists and on the public model list alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startAnthropicMock, startGeminiMock, startOpenAIMock, type VendorMock } from '../../mocks'

let oa: VendorMock
let an: VendorMock
let ge: VendorMock
let app: TestApp
let key: string

const OPENAI_MODELS = ['gpt-4o-mini', 'whisper-1', 'tts-1', 'dall-e-3', 'text-embedding-3-small', 'gpt-3.5-turbo-instruct', 'omni-moderation-latest']
const GEMINI_MODELS = ['gemini-2.5-flash', 'imagen-4.0-generate-001', 'veo-3.0-generate-001']
const ALL = [...OPENAI_MODELS, ...GEMINI_MODELS, 'claude-haiku-4-5', 'house-vectors'].sort()

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	an = await startAnthropicMock({ apiKey: 'up-an' })
	ge = await startGeminiMock({ apiKey: 'up-ge' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: [...OPENAI_MODELS, 'house-vectors'], model_map: { 'house-vectors': 'text-embedding-3-small' } },
				{ name: 'an', type: 'anthropic', base_url: an.url, api_key: 'up-an', models: ['claude-haiku-4-5'] },
				{ name: 'ge', type: 'gemini', base_url: ge.url, api_key: 'up-ge', models: GEMINI_MODELS },
			],
			models: ALL.map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
		},
	})
	key = (await app.account(5)).key
}, 120_000)
afterAll(async () => {
	await app.close()
	for (const m of [oa, an, ge]) await m.stop()
})

describe('model lists by protocol', () => {
	it('should list every model to the openai SDK', async () => {
		const openai = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const ids: string[] = []
		for await (const m of openai.models.list()) ids.push(m.id)
		expect(ids).toEqual(ALL)
		expect((await openai.models.retrieve('whisper-1')).id).toBe('whisper-1')
	})

	it('should list to the anthropic SDK the chat models of every vendor, and 404 the others', async () => {
		const anthropic = new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 })
		const ids: string[] = []
		for await (const m of anthropic.models.list()) ids.push(m.id)
		expect(ids).toEqual(['claude-haiku-4-5', 'gemini-2.5-flash', 'gpt-4o-mini'])
		expect((await anthropic.models.retrieve('gpt-4o-mini')).id).toBe('gpt-4o-mini')
		const err = await anthropic.models.retrieve('whisper-1').catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.NotFoundError)
		// And what it lists, it can call.
		const msg = await anthropic.messages.create({ model: 'gemini-2.5-flash', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] })
		expect(msg.content[0]?.type).toBe('text')
	})

	it("should list to @google/genai what Gemini's protocol reaches, each with its methods", async () => {
		const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } })
		const actions: Record<string, string[] | undefined> = {}
		for await (const m of await genai.models.list()) actions[m.name!.replace(/^models\//, '')] = m.supportedActions
		const chat = ['generateContent', 'streamGenerateContent', 'countTokens']
		const embed = ['embedContent', 'batchEmbedContents', 'countTokens']
		expect(actions).toEqual({
			'claude-haiku-4-5': chat,
			'gemini-2.5-flash': chat,
			'gpt-4o-mini': chat,
			'imagen-4.0-generate-001': ['predict'],
			'house-vectors': embed,
			'text-embedding-3-small': embed,
			'veo-3.0-generate-001': ['predictLongRunning'],
		})
		const err = await genai.models.get({ model: 'tts-1' }).catch((e: unknown) => e as { status?: number })
		expect(err).toMatchObject({ status: 404 })
		// The alias embeds through Gemini's protocol as listed.
		const out = await genai.models.embedContent({ model: 'house-vectors', contents: 'hello' })
		expect(out.embeddings?.[0]?.values?.length).toBeGreaterThan(0)
	})

	it("should show an alias on the public model list with its upstream model's routes", async () => {
		const data = ((await (await fetch(`${app.url}/api/pricing`)).json()) as { data: Array<{ name: string; endpoints: string[] }> }).data
		expect(data.find((m) => m.name === 'house-vectors')!.endpoints).toEqual(['POST /v1/embeddings', 'POST /v1beta/models/{model}:embedContent', 'POST /v1beta/models/{model}:batchEmbedContents'])
		expect(data.find((m) => m.name === 'whisper-1')!.endpoints).toEqual(['POST /v1/audio/transcriptions', 'POST /v1/audio/translations'])
	})
})
