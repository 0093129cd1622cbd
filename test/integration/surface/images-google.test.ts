/**
 * POST /v1/images/generations for Google's image models on Gemini channels, as the `openai` SDK (`images.generate`)
 * and the Vercel AI SDK (`generateImage` with `@ai-sdk/openai`) call it: Imagen through `:predict`, Gemini image
 * models through `:generateContent` (one call per image), answered in OpenAI's shape and billed per image (Imagen) or
 * by the tokens Google reports (Gemini image output at `image_output_per_mtok`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateImage } from 'ai'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startGeminiMock } from '../../mocks'
import { IMAGE_THOUGHT_TOKENS } from '../../mocks/gemini/image-out'
import { IMAGE_BYTES } from '../../mocks/gemini/predict'
import { countWords } from '../../mocks/shared/text'
import { call, micros, priceList, usageOf } from './helpers'

let a: Awaited<ReturnType<typeof startGeminiMock>>
let b: Awaited<ReturnType<typeof startGeminiMock>>
/** In front of mock `a`: passes the first `:generateContent` of each pair through and answers the second 503. */
let flaky: ReturnType<typeof Bun.serve>
let app: TestApp

const IMAGEN = 'imagen-4.0-generate-001'
const FAST = 'imagen-4.0-fast-generate-001'
const ULTRA = 'imagen-4.0-ultra-generate-001'
const FLASH = 'gemini-2.5-flash-image'
const PRO = 'gemini-3-pro-image-preview'
const PNG = new Uint8Array(IMAGE_BYTES)

/** Gemini image prices: $1/M input and $30/M image output (1 and 30 micro-USD per token), $2.50/M other output. */
const flashPrice = { input_per_mtok: 1, output_per_mtok: 2.5, image_output_per_mtok: 30 }

beforeAll(async () => {
	a = await startGeminiMock({ apiKey: 'up-a' })
	b = await startGeminiMock({ apiKey: 'up-a' })
	let seen = 0
	flaky = Bun.serve({
		port: 0,
		fetch: async (req) => {
			if (++seen % 2 === 0) return Response.json({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }, { status: 503 })
			const url = new URL(req.url)
			return fetch(a.url + url.pathname + url.search, { method: req.method, headers: req.headers, body: await req.text() })
		},
	})
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'ge-a', type: 'gemini', base_url: a.url, api_key: 'up-a', models: [IMAGEN, FAST, ULTRA, FLASH, PRO, 'gemini-2.5-flash', 'nano-banana'], model_map: { 'nano-banana': FLASH }, priority: 0 },
				{ name: 'ge-b', type: 'gemini', base_url: b.url, api_key: 'up-a', models: [IMAGEN, FLASH], priority: 1 },
				{ name: 'ge-flaky', type: 'gemini', base_url: `http://127.0.0.1:${flaky.port}`, api_key: 'up-a', models: ['flaky-image'], model_map: { 'flaky-image': FLASH } },
			],
			models: priceList([
				{ name: IMAGEN, per_image: 0.04, per_image_2048x2048: 0.06 },
				{ name: FAST, per_image: 0.02 },
				{ name: ULTRA, input_per_mtok: 1, output_per_mtok: 1 },
				{ name: FLASH, ...flashPrice },
				{ name: 'nano-banana', ...flashPrice },
				{ name: 'flaky-image', ...flashPrice },
				{ name: PRO, input_per_mtok: 2, output_per_mtok: 12, image_output_per_mtok: 120 },
				{ name: 'gemini-2.5-flash', input_per_mtok: 1, output_per_mtok: 1 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await a.stop()
	await b.stop()
	flaky.stop(true)
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
const aiOpenAI = (key: string) => createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
const bytes = (b64: string | undefined) => new Uint8Array(Buffer.from(b64 ?? '', 'base64'))
const generate = (key: string, body: Record<string, unknown>) => call(app, key, '/v1/images/generations', { body })
const resetMocks = () => {
	a.reset()
	b.reset()
}

describe('POST /v1/images/generations on an Imagen model (Gemini channel)', () => {
	it("should call :predict with n as sampleCount and size as aspectRatio and imageSize, answer OpenAI's b64_json and charge each image", async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		const r = await sdk(key).images.generate({ model: IMAGEN, prompt: 'a red fox', n: 2, size: '1024x1024' })
		expect(r.data).toHaveLength(2)
		for (const d of r.data ?? []) expect(bytes(d.b64_json)).toEqual(PNG)
		expect(r.data?.[0]?.url).toBeUndefined()
		expect(typeof r.created).toBe('number')
		const sent = a.requests[0]!
		expect(a.requests).toHaveLength(1)
		expect(sent.path).toBe(`/v1beta/models/${IMAGEN}:predict`)
		expect(sent.headers['x-goog-api-key']).toBe('up-a')
		expect(JSON.stringify(sent.headers)).not.toContain(key)
		expect(sent.body).toEqual({ instances: [{ prompt: 'a red fox' }], parameters: { sampleCount: 2, aspectRatio: '1:1', imageSize: '1K' } })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * 40_000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/generations', model: IMAGEN, cost: 0.08, status: 200, end_reason: 'ok' })
	})

	it('should map OpenAI sizes to the nearest aspect ratio and tier the model makes, and price a 2K square at its own price', async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		await sdk(key).images.generate({ model: IMAGEN, prompt: 'a wide lake', size: '1536x1024' })
		await sdk(key).images.generate({ model: IMAGEN, prompt: 'a tall tower', size: '1024x1792' })
		await sdk(key).images.generate({ model: IMAGEN, prompt: 'a big square', size: '2048x2048' })
		await sdk(key).images.generate({ model: FAST, prompt: 'a quick sketch', size: '1792x1024' })
		expect(a.requests.map((q) => (q.body as { parameters: unknown }).parameters)).toEqual([
			{ sampleCount: 1, aspectRatio: '4:3', imageSize: '1K' },
			{ sampleCount: 1, aspectRatio: '9:16', imageSize: '1K' },
			{ sampleCount: 1, aspectRatio: '1:1', imageSize: '2K' },
			// Imagen 4 Fast has no imageSize.
			{ sampleCount: 1, aspectRatio: '16:9' },
		])
		expect((await usageOf(app, accountId)).map((row) => row.cost)).toEqual([0.04, 0.04, 0.06, 0.02])
	})

	it('should send no shape for an absent or auto size (Imagen: one 1:1 1K image) and JPEG for output_format jpeg', async () => {
		const { key } = await app.account(1)
		resetMocks()
		await sdk(key).images.generate({ model: IMAGEN, prompt: 'a plain fox' })
		const jpeg = await generate(key, { model: IMAGEN, prompt: 'a jpeg fox', size: 'auto', output_format: 'jpeg', output_compression: 80 })
		expect(jpeg.status).toBe(200)
		expect(jpeg.body.output_format).toBe('jpeg')
		expect(a.requests.map((q) => (q.body as { parameters: unknown }).parameters)).toEqual([{ sampleCount: 1 }, { sampleCount: 1, outputOptions: { mimeType: 'image/jpeg', compressionQuality: 80 } }])
	})

	it('should refuse with a 400 naming the field what Google cannot make, before any hold or upstream call', async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ n: 5 }, 'n'],
			[{ size: '1024x256' }, 'size'],
			[{ size: '512x512' }, 'size'],
			[{ size: '4096x4096' }, 'size'],
			[{ response_format: 'url' }, 'response_format'],
			[{ stream: true }, 'stream'],
			[{ quality: 'hd' }, 'quality'],
			[{ style: 'vivid' }, 'style'],
			[{ output_format: 'webp' }, 'output_format'],
		]
		for (const [fields, param] of cases) {
			const r = await generate(key, { model: IMAGEN, prompt: 'a fox', ...fields })
			expect([r.status, r.body.error?.param, r.body.error?.type]).toEqual([400, param, 'invalid_request_error'])
		}
		// Imagen 4 Fast makes 1K only: a 2K square is too far from it.
		const fast = await generate(key, { model: FAST, prompt: 'a fox', size: '2048x2048' })
		expect([fast.status, fast.body.error.param]).toEqual([400, 'size'])
		expect(fast.body.error.message).toContain('1K')
		const url = await generate(key, { model: IMAGEN, prompt: 'a fox', response_format: 'url' })
		expect(url.body.error.message).toContain('b64_json')
		expect(a.requests).toHaveLength(0)
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should answer the images the safety filter left, charging those only, and 400 content_policy_violation when it left none', async () => {
		const { key, accountId } = await app.account(1)
		const r = await sdk(key).images.generate({ model: IMAGEN, prompt: 'a crowd #filter', n: 3 })
		expect(r.data).toHaveLength(2)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * 40_000)
		const none = await generate(key, { model: IMAGEN, prompt: 'a crowd #filterall', n: 2 })
		expect(none.status).toBe(400)
		expect(none.body.error).toMatchObject({ code: 'content_policy_violation', type: 'invalid_request_error' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * 40_000)
		const rows = await usageOf(app, accountId)
		expect(rows.map((row) => [row.status, row.cost])).toEqual([
			[200, 0.08],
			[400, 0],
		])
	})

	it('should hold all n images (402 when the balance covers fewer) and refuse an Imagen model priced only by tokens', async () => {
		const { key, accountId } = await app.account(0.05)
		resetMocks()
		const short = await generate(key, { model: IMAGEN, prompt: 'two foxes', n: 2 })
		expect(short.status).toBe(402)
		const one = await generate(key, { model: IMAGEN, prompt: 'one fox', n: 1 })
		expect(one.status).toBe(200)
		const tokens = await generate(key, { model: ULTRA, prompt: 'a fox' })
		expect([tokens.status, tokens.body.error.code]).toEqual([403, 'model_not_priced'])
		expect(a.requests).toHaveLength(1)
		expect(micros(await app.balance(accountId))).toBe(50_000 - 40_000)
	})

	it("should fail over to the next channel on a 5xx and answer OpenAI's error shape, uncharged, when every channel fails", async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		a.faultOnce = { kind: 'status', status: 503 }
		const r = await sdk(key).images.generate({ model: IMAGEN, prompt: 'a boat' })
		expect(r.data).toHaveLength(1)
		expect(b.requests).toHaveLength(1)
		a.fault = { kind: 'status', status: 500 }
		b.fault = { kind: 'status', status: 500 }
		try {
			const failed = await generate(key, { model: IMAGEN, prompt: 'a boat' })
			expect(failed.status).toBe(502)
			expect(failed.body.error).toMatchObject({ type: expect.any(String), message: expect.any(String) })
			expect(failed.body.error.status).toBeUndefined()
		} finally {
			a.fault = undefined
			b.fault = undefined
		}
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 40_000)
	})
})

describe('POST /v1/images/generations on a Gemini image model (Gemini channel)', () => {
	it('should make n images by n :generateContent calls with responseModalities IMAGE and bill the tokens Google reports', async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		const prompt = 'a banana in a tuxedo'
		const p = countWords(prompt)
		const r = await sdk(key).images.generate({ model: FLASH, prompt, n: 2, size: '1536x1024' })
		expect(r.data).toHaveLength(2)
		for (const d of r.data ?? []) expect(bytes(d.b64_json)).toEqual(PNG)
		expect(r.usage).toMatchObject({ input_tokens: 2 * p, output_tokens: 2 * 1290, total_tokens: 2 * p + 2 * 1290 })
		expect(a.requests).toHaveLength(2)
		for (const q of a.requests) {
			expect(q.path).toBe(`/v1beta/models/${FLASH}:generateContent`)
			expect(q.headers['x-goog-api-key']).toBe('up-a')
			// Gemini 2.5 Flash Image makes 1K only: no imageSize; 3:2 is one of its ratios.
			expect(q.body).toEqual({ contents: [{ role: 'user', parts: [{ text: prompt }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2' } } })
		}
		// Per call: the prompt at $1/M, 1290 image tokens at $30/M.
		const cost = 2 * (p + 1290 * 30)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/generations', model: FLASH, input_tokens: 2 * p, output_tokens: 2580, status: 200, estimated: false })
		expect(micros(row!.cost)).toBe(cost)
	})

	it("should ask a Gemini 3 image model for its imageSize tier and bill its thinking at the output price", async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		const prompt = 'a large square poster'
		await sdk(key).images.generate({ model: PRO, prompt, size: '2048x2048' })
		expect(a.requests[0]!.body).toMatchObject({ generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '2K' } } })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (countWords(prompt) * 2 + 1120 * 120 + IMAGE_THOUGHT_TOKENS * 12))
	})

	it('should follow model_map to the upstream name and record the name the client used', async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		const r = await sdk(key).images.generate({ model: 'nano-banana', prompt: 'a fox' })
		expect(r.data).toHaveLength(1)
		expect(a.requests[0]!.path).toBe(`/v1beta/models/${FLASH}:generateContent`)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'nano-banana', status: 200 })
	})

	it('should answer the images of the calls that made one when a later call fails, charging only those', async () => {
		const { key, accountId } = await app.account(1)
		const prompt = 'two flaky foxes'
		const r = await sdk(key).images.generate({ model: 'flaky-image', prompt, n: 2 })
		expect(r.data).toHaveLength(1)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (countWords(prompt) + 1290 * 30))
	})

	it('should answer 400 content_policy_violation, uncharged, when Google makes no image', async () => {
		const { key, accountId } = await app.account(1)
		const r = await generate(key, { model: FLASH, prompt: 'something #noimage' })
		expect(r.status).toBe(400)
		expect(r.body.error).toMatchObject({ code: 'content_policy_violation' })
		expect(r.body.error.message).toContain('IMAGE_SAFETY')
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should hold n images up front (402 before any call) and refuse a Gemini model that makes no images', async () => {
		const { key } = await app.account(0.2)
		resetMocks()
		const short = await generate(key, { model: FLASH, prompt: 'a fox', n: 2 })
		expect(short.status).toBe(402)
		const text = await generate(key, { model: 'gemini-2.5-flash', prompt: 'a fox' })
		expect([text.status, text.body.error.code, text.body.error.param]).toEqual([400, 'unsupported_for_model', 'model'])
		const url = await generate(key, { model: FLASH, prompt: 'a fox', response_format: 'url' })
		expect([url.status, url.body.error.param]).toEqual([400, 'response_format'])
		expect(a.requests).toHaveLength(0)
	})
})

describe('Vercel AI SDK generateImage through @ai-sdk/openai', () => {
	it('should generate Imagen images (n in one call) with the bytes and the per-image charge', async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		const r = await generateImage({ model: aiOpenAI(key).image(IMAGEN), prompt: 'a red fox', n: 2, maxImagesPerCall: 2, size: '1024x1024' })
		expect(r.images).toHaveLength(2)
		for (const img of r.images) expect(img.uint8Array).toEqual(PNG)
		expect(a.requests).toHaveLength(1)
		expect(a.requests[0]!.body).toMatchObject({ parameters: { sampleCount: 2, aspectRatio: '1:1' } })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 80_000)
	})

	it('should generate Gemini image model images and report the tokens Google counted', async () => {
		const { key, accountId } = await app.account(1)
		resetMocks()
		const prompt = 'a banana boat'
		const p = countWords(prompt)
		const r = await generateImage({ model: aiOpenAI(key).image(FLASH), prompt, n: 2, size: '1024x1024' })
		expect(r.images).toHaveLength(2)
		for (const img of r.images) expect(img.uint8Array).toEqual(PNG)
		expect(r.usage).toMatchObject({ inputTokens: 2 * p, outputTokens: 2 * 1290 })
		expect(a.requests).toHaveLength(2)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * (p + 1290 * 30))
		const rows = await usageOf(app, accountId)
		expect(rows.map((row) => [row.model, row.input_tokens, row.output_tokens])).toEqual([
			[FLASH, p, 1290],
			[FLASH, p, 1290],
		])
	})
})
