/**
 * Azure OpenAI channels (`type: "azure"`) through the real `openai` and `@anthropic-ai/sdk` clients, against a mock
 * Azure resource (test/mocks/azure): deployment URLs with `api-version`, the `api-key` header, the v1 API, and
 * Azure's content filter (a stream's first chunk with `choices: []` and `prompt_filter_results`, `finish_reason:
 * "content_filter"`, a filtered prompt refused 400 `content_filter` with `innererror`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { FinishReason, GoogleGenAI } from '@google/genai'
import OpenAI, { toFile } from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { wav } from '../../helpers/wav'
import { FILTERED_ANSWER, FILTERED_PROMPT, startAzureMock } from '../../mocks/azure'
import type { VendorMock } from '../../mocks'
import { chat, messages } from './clients'
import { SETUP_MS } from './harness'

const KEY = 'az-key'
const DEPLOYMENTS = { 'prod-4o': 'gpt-4o', 'prod-embed': 'text-embedding-3-small', 'prod-tts': 'tts-1', 'prod-whisper': 'whisper-1', 'prod-image': 'dall-e-3' }
const DEFAULT_VERSION = '2025-04-01-preview'

let app: TestApp
let azure: VendorMock
/** A second resource, tried after the first: a refusal of the prompt must not reach it. */
let standby: VendorMock
beforeAll(async () => {
	azure = startAzureMock({ apiKey: KEY, deployments: DEPLOYMENTS })
	standby = startAzureMock({ apiKey: KEY, deployments: DEPLOYMENTS })
	const chatPrice = { input_per_mtok: 1, output_per_mtok: 4 }
	app = await startTestApp({
		config: {
			channels: [
				{
					name: 'az',
					type: 'azure',
					base_url: azure.url,
					api_key: KEY,
					models: ['az-4o', 'az-embed', 'az-tts', 'az-whisper', 'az-image'],
					model_map: { 'az-4o': 'prod-4o', 'az-embed': 'prod-embed', 'az-tts': 'prod-tts', 'az-whisper': 'prod-whisper', 'az-image': 'prod-image' },
				},
				{ name: 'az-standby', type: 'azure', base_url: `${standby.url}/openai/`, api_key: KEY, models: ['az-4o', 'az-moved'], model_map: { 'az-4o': 'prod-4o', 'az-moved': 'prod-4o' }, priority: 1 },
				// A deployment this resource does not have (deleted, or made on the other resource only).
				{ name: 'az-stale', type: 'azure', base_url: azure.url, api_key: KEY, models: ['az-moved', 'az-nowhere'], model_map: { 'az-moved': 'prod-gone', 'az-nowhere': 'prod-gone' } },
				{ name: 'az-pinned', type: 'azure', base_url: azure.url, api_key: KEY, models: ['az-pinned'], model_map: { 'az-pinned': 'prod-4o' }, settings: { api_version: '2024-10-21' } },
				{ name: 'az-v1', type: 'azure', base_url: `${azure.url}/openai/v1`, api_key: KEY, models: ['az-v1'], model_map: { 'az-v1': 'prod-4o' } },
				{ name: 'az-v1-openai', type: 'openai', base_url: `${azure.url}/openai/v1/`, api_key: KEY, models: ['oa-v1'], model_map: { 'oa-v1': 'prod-4o' } },
			],
			models: [
				{ name: 'az-4o', ...chatPrice },
				{ name: 'az-pinned', ...chatPrice },
				{ name: 'az-moved', ...chatPrice },
				{ name: 'az-nowhere', ...chatPrice },
				{ name: 'az-v1', ...chatPrice },
				{ name: 'oa-v1', ...chatPrice },
				{ name: 'az-embed', input_per_mtok: 0.02 },
				{ name: 'az-tts', per_mchar: 15 },
				{ name: 'az-whisper', per_minute: 0.006 },
				{ name: 'az-image', per_image: 0.04 },
			],
		},
	})
}, SETUP_MS)
afterAll(async () => {
	await app?.close()
	await azure?.stop()
	await standby?.stop()
})

async function clients() {
	const a = await app.account(10)
	return {
		...a,
		openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }),
		anthropic: new Anthropic({ apiKey: a.key, baseURL: app.url, maxRetries: 0 }),
		genai: new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } }),
	}
}

const last = (m: VendorMock) => m.requests[m.requests.length - 1]!

type Row = { model: string; input_tokens: number; output_tokens: number; status: number; end_reason: string; cost: number }
async function rows(accountId: number): Promise<Row[]> {
	const r = await app.admin(`/api/usage?account_id=${accountId}`)
	return r.body.data as Row[]
}

describe('azure channel: deployment URLs', () => {
	for (const stream of [false, true]) {
		it(`should send chat to the deployment with api-version and api-key (${stream ? 'stream' : 'non-stream'})`, async () => {
			const c = await clients()
			const a = await chat(c.openai, { model: 'az-4o', messages: [{ role: 'user', content: 'hello there' }] }, stream)
			expect(a.text).toContain('hello there')
			expect(a.stop).toBe('stop')
			expect(a.usage.input).toBeGreaterThan(0)
			const r = last(azure)
			expect(r.path).toBe('/openai/deployments/prod-4o/chat/completions')
			expect(r.query).toEqual({ 'api-version': DEFAULT_VERSION })
			expect(r.headers['api-key']).toBe(KEY)
			expect(r.headers.authorization).toBeUndefined()
			// Azure's first chunk (no choices, prompt_filter_results) reaches the client named as the rest of the stream.
			if (stream) {
				const [first, second] = a.events as Array<{ id: string; object: string; created: number; choices: unknown[]; prompt_filter_results?: unknown }>
				expect(first).toMatchObject({ id: second!.id, object: 'chat.completion.chunk', created: second!.created, choices: [] })
				expect(first!.created).toBeGreaterThan(0)
				expect(first!.prompt_filter_results).toEqual([{ prompt_index: 0, content_filter_results: expect.any(Object) }])
			}
			const [row] = await rows(c.accountId)
			expect(row).toMatchObject({ model: 'az-4o', input_tokens: a.usage.input, output_tokens: a.usage.output, status: 200, end_reason: 'ok' })
		})

		it(`should convert for Anthropic clients, past the first chunk of no choices (${stream ? 'stream' : 'non-stream'})`, async () => {
			const c = await clients()
			const a = await messages(c.anthropic, { model: 'az-4o', max_tokens: 256, messages: [{ role: 'user', content: 'hello there' }] }, stream)
			expect(a.text).toContain('hello there')
			expect(a.stop).toBe('end_turn')
			expect(a.usage.output).toBeGreaterThan(0)
			expect(last(azure).path).toBe('/openai/deployments/prod-4o/chat/completions')
			const [row] = await rows(c.accountId)
			expect(row).toMatchObject({ model: 'az-4o', input_tokens: a.usage.input, output_tokens: a.usage.output, status: 200, end_reason: 'ok' })
		})
	}

	it("should try the next channel when a resource has no such deployment (Azure's 404 DeploymentNotFound)", async () => {
		const c = await clients()
		const before = standby.requests.length
		const a = await chat(c.openai, { model: 'az-moved', messages: [{ role: 'user', content: 'hello there' }] }, false)
		expect(a.text).toContain('hello there')
		expect(last(azure).path).toBe('/openai/deployments/prod-gone/chat/completions')
		expect(standby.requests.length).toBe(before + 1)
		const err = await c.openai.chat.completions.create({ model: 'az-nowhere', messages: [{ role: 'user', content: 'hi' }] }).then(
			() => undefined,
			(e: unknown) => e as InstanceType<typeof OpenAI.NotFoundError>,
		)
		expect(err).toBeInstanceOf(OpenAI.NotFoundError)
		expect(err!.code).toBe('model_not_found')
	})

	it("should send the channel's api_version setting", async () => {
		const c = await clients()
		await chat(c.openai, { model: 'az-pinned', messages: [{ role: 'user', content: 'hi' }] }, false)
		expect(last(azure).query).toEqual({ 'api-version': '2024-10-21' })
	})

	it('should send embeddings, speech, transcriptions and images to their deployments', async () => {
		const c = await clients()
		const e = await c.openai.embeddings.create({ model: 'az-embed', input: 'hello', encoding_format: 'float' })
		expect(e.data[0]!.embedding.length).toBeGreaterThan(0)
		expect(last(azure).path).toBe('/openai/deployments/prod-embed/embeddings')
		const g = await c.genai.models.embedContent({ model: 'az-embed', contents: 'hello' })
		expect(g.embeddings![0]!.values!.length).toBeGreaterThan(0)
		expect(last(azure).path).toBe('/openai/deployments/prod-embed/embeddings')
		const speech = await c.openai.audio.speech.create({ model: 'az-tts', voice: 'alloy', input: 'hello' })
		expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0)
		expect(last(azure).path).toBe('/openai/deployments/prod-tts/audio/speech')
		const t = await c.openai.audio.transcriptions.create({ model: 'az-whisper', file: await toFile(wav(5), 'a.wav', { type: 'audio/wav' }) })
		expect(typeof t.text).toBe('string')
		expect(last(azure).path).toBe('/openai/deployments/prod-whisper/audio/transcriptions')
		const img = await c.openai.images.generate({ model: 'az-image', prompt: 'a cat' })
		expect(img.data!.length).toBe(1)
		expect(last(azure).path).toBe('/openai/deployments/prod-image/images/generations')
		for (const r of azure.requests.slice(-5)) {
			expect(r.query['api-version']).toBe(DEFAULT_VERSION)
			expect(r.headers['api-key']).toBe(KEY)
		}
	})

	it('should relay Responses clients to /openai/responses and retrieve a stored response there', async () => {
		const c = await clients()
		const r = await c.openai.responses.create({ model: 'az-4o', input: 'hello there' })
		expect(r.output_text).toContain('hello there')
		expect(last(azure).path).toBe('/openai/responses')
		expect(last(azure).query).toEqual({ 'api-version': DEFAULT_VERSION })
		expect((last(azure).body as { model: string }).model).toBe('prod-4o')
		const again = await c.openai.responses.retrieve(r.id)
		expect(again.id).toBe(r.id)
		expect(last(azure).path).toBe(`/openai/responses/${r.id}`)
		expect(last(azure).query).toEqual({ 'api-version': DEFAULT_VERSION })
	})
})

describe("Azure's v1 API (base_url …/openai/v1)", () => {
	it('should serve an azure channel with the deployment as model, api-key and no api-version', async () => {
		const c = await clients()
		const a = await chat(c.openai, { model: 'az-v1', messages: [{ role: 'user', content: 'hello there' }] }, true)
		expect(a.text).toContain('hello there')
		const r = last(azure)
		expect(r.path).toBe('/openai/v1/chat/completions')
		expect(r.query).toEqual({})
		expect(r.headers['api-key']).toBe(KEY)
		expect((r.body as { model: string }).model).toBe('prod-4o')
	})

	it('should serve an openai channel too (the v1 API takes the key as a Bearer token)', async () => {
		const c = await clients()
		const a = await messages(c.anthropic, { model: 'oa-v1', max_tokens: 128, messages: [{ role: 'user', content: 'hello there' }] }, false)
		expect(a.text).toContain('hello there')
		expect(last(azure).path).toBe('/openai/v1/chat/completions')
		expect(last(azure).headers.authorization).toBe(`Bearer ${KEY}`)
	})
})

describe("Azure's content filter", () => {
	for (const stream of [false, true]) {
		const how = stream ? 'stream' : 'non-stream'
		it(`should end a filtered answer with content_filter for OpenAI clients (${how})`, async () => {
			const c = await clients()
			const a = await chat(c.openai, { model: 'az-4o', messages: [{ role: 'user', content: `say ${FILTERED_ANSWER}` }] }, stream)
			expect(a.stop).toBe('content_filter')
			const [row] = await rows(c.accountId)
			expect(row).toMatchObject({ status: 200, output_tokens: a.usage.output })
		})

		it(`should end a filtered answer with refusal for Anthropic clients (${how})`, async () => {
			const c = await clients()
			const a = await messages(c.anthropic, { model: 'az-4o', max_tokens: 256, messages: [{ role: 'user', content: `say ${FILTERED_ANSWER}` }] }, stream)
			expect(a.stop).toBe('refusal')
			const [row] = await rows(c.accountId)
			expect(row).toMatchObject({ status: 200, output_tokens: a.usage.output })
		})

		it(`should answer a filtered prompt 400 content_filter to OpenAI clients, without failing over (${how})`, async () => {
			const c = await clients()
			const before = standby.requests.length
			const err = await c.openai.chat.completions.create({ model: 'az-4o', stream, messages: [{ role: 'user', content: FILTERED_PROMPT }] }).then(
				() => undefined,
				(e: unknown) => e,
			)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			const e = err as InstanceType<typeof OpenAI.BadRequestError>
			expect(e.status).toBe(400)
			expect(e.code).toBe('content_filter')
			expect(e.param).toBe('prompt')
			expect(standby.requests.length).toBe(before)
			expect(await app.balance(c.accountId)).toBe(10)
		})
	}

	it('should end a filtered answer with SAFETY for Gemini clients (stream)', async () => {
		const c = await clients()
		const chunks = []
		for await (const ch of await c.genai.models.generateContentStream({ model: 'az-4o', contents: `say ${FILTERED_ANSWER}` })) chunks.push(ch)
		expect(chunks.map((ch) => ch.text ?? '').join('')).toContain(FILTERED_ANSWER)
		expect(chunks.at(-1)!.candidates?.[0]?.finishReason).toBe(FinishReason.SAFETY)
	})

	it('should answer a filtered prompt 400 INVALID_ARGUMENT to Gemini clients', async () => {
		const c = await clients()
		const err = await c.genai.models.generateContent({ model: 'az-4o', contents: FILTERED_PROMPT }).then(
			() => undefined,
			(e: unknown) => e as { status?: number; message: string },
		)
		expect(err?.status).toBe(400)
		expect(err?.message).toContain('INVALID_ARGUMENT')
	})

	it('should answer a filtered prompt 400 invalid_request_error to Anthropic clients, without failing over', async () => {
		const c = await clients()
		const before = standby.requests.length
		const err = await c.anthropic.messages.create({ model: 'az-4o', max_tokens: 64, messages: [{ role: 'user', content: FILTERED_PROMPT }] }).then(
			() => undefined,
			(e: unknown) => e,
		)
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		const e = err as InstanceType<typeof Anthropic.BadRequestError>
		expect(e.status).toBe(400)
		expect((e.error as { error: { type: string; message: string } }).error.type).toBe('invalid_request_error')
		expect((e.error as { error: { message: string } }).error.message).toContain('content management policy')
		expect(standby.requests.length).toBe(before)
	})

	it('should answer a filtered Responses prompt 400 content_filter', async () => {
		const c = await clients()
		const err = await c.openai.responses.create({ model: 'az-4o', input: FILTERED_PROMPT }).then(
			() => undefined,
			(e: unknown) => e,
		)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('content_filter')
	})
})
