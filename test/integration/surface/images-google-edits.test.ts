/**
 * POST /v1/images/edits for Gemini image models on Gemini channels, as the `openai` SDK (`images.edit` with one and two
 * files) and the Vercel AI SDK (`generateImage` with input images, `@ai-sdk/openai`) call it, and the JSON form with
 * `data:` and web URLs: the images go to `:generateContent` as `inlineData` parts before the prompt, the answer comes
 * back in OpenAI's shape, billed by the tokens Google reports (input images at `image_input_per_mtok`) and held up
 * front for the input images too. What Gemini cannot do (a mask, Imagen, a file id) is a 400 before any charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateImage } from 'ai'
import OpenAI, { toFile } from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { pngOf } from '../../helpers/png'
import { startGeminiMock } from '../../mocks'
import { IMAGE_THOUGHT_TOKENS } from '../../mocks/gemini/image-out'
import { IMAGE_BYTES } from '../../mocks/gemini/predict'
import { countWords } from '../../mocks/shared/text'
import { call, micros, priceList, usageOf } from './helpers'

let g: Awaited<ReturnType<typeof startGeminiMock>>
let pictures: ReturnType<typeof Bun.serve>
let app: TestApp

const IMAGEN = 'imagen-4.0-generate-001'
const FLASH = 'gemini-2.5-flash-image'
const PRO = 'gemini-3-pro-image-preview'
const MADE = new Uint8Array(IMAGE_BYTES)

/** 300x200: one image at most 384 a side, 258 tokens (Gemini 2.5). */
const SMALL = pngOf(300, 200)
/** 1000x800: 2x2 tiles of 768, 4 x 258 = 1032 tokens (Gemini 2.5). */
const LARGE = pngOf(1000, 800, 60)
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64')
const inline = (b: Uint8Array) => ({ inlineData: { mimeType: 'image/png', data: b64(b) } })

/** $1/M text input, $2/M image input, $2.50/M text output, $30/M image output (micro-USD per token). */
const flashPrice = { input_per_mtok: 1, image_input_per_mtok: 2, output_per_mtok: 2.5, image_output_per_mtok: 30 }

beforeAll(async () => {
	g = await startGeminiMock({ apiKey: 'up-g' })
	pictures = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch: (req) => (new URL(req.url).pathname === '/large.png' ? new Response(LARGE, { headers: { 'content-type': 'image/png' } }) : new Response('no', { status: 404 })),
	})
	app = await startTestApp({
		env: { FETCH_ALLOW: '127.0.0.1' },
		config: {
			channels: [{ name: 'ge', type: 'gemini', base_url: g.url, api_key: 'up-g', models: [IMAGEN, FLASH, PRO, 'nano-banana'], model_map: { 'nano-banana': FLASH } }],
			models: priceList([
				{ name: IMAGEN, per_image: 0.04 },
				{ name: FLASH, ...flashPrice },
				{ name: 'nano-banana', ...flashPrice },
				{ name: PRO, input_per_mtok: 2, output_per_mtok: 12, image_output_per_mtok: 120 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await g.stop()
	pictures.stop(true)
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
const bytes = (s: string | undefined) => new Uint8Array(Buffer.from(s ?? '', 'base64'))
const edit = (key: string, body: Record<string, unknown>) => call(app, key, '/v1/images/edits', { body })

/** A multipart edit by raw HTTP (for fields the SDK would not send, such as a mask on a Gemini model). */
async function editForm(key: string, fields: Record<string, string | Uint8Array<ArrayBuffer>>) {
	const form = new FormData()
	for (const [k, v] of Object.entries(fields)) form.append(k, typeof v === 'string' ? v : new File([v], `${k}.png`, { type: 'image/png' }))
	const res = await fetch(`${app.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
	return { status: res.status, body: (await res.json()) as any }
}

describe('POST /v1/images/edits on a Gemini image model (Gemini channel)', () => {
	it("should send one uploaded image as inlineData before the prompt, answer OpenAI's b64_json and bill the image input at its price", async () => {
		const { key, accountId } = await app.account(1)
		g.reset()
		const prompt = 'put a hat on the cat'
		const p = countWords(prompt)
		const r = await sdk(key).images.edit({ model: FLASH, image: await toFile(SMALL, 'cat.png', { type: 'image/png' }), prompt })
		expect(r.data).toHaveLength(1)
		expect(bytes(r.data?.[0]?.b64_json)).toEqual(MADE)
		expect(r.usage).toMatchObject({ input_tokens: p + 258, output_tokens: 1290, input_tokens_details: { text_tokens: p, image_tokens: 258 } })
		expect(g.requests).toHaveLength(1)
		const sent = g.requests[0]!
		expect(sent.path).toBe(`/v1beta/models/${FLASH}:generateContent`)
		expect(sent.headers['x-goog-api-key']).toBe('up-g')
		expect(sent.body).toEqual({ contents: [{ role: 'user', parts: [inline(SMALL), { text: prompt }] }], generationConfig: { responseModalities: ['IMAGE'] } })
		// The prompt at $1/M, the input image's 258 tokens at $2/M, 1290 image tokens out at $30/M.
		const cost = p + 258 * 2 + 1290 * 30
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/edits', model: FLASH, input_tokens: p + 258, output_tokens: 1290, status: 200, estimated: false })
		expect(micros(row!.cost)).toBe(cost)
	})

	it('should send two uploaded images in order on each of n calls, with size as the aspect ratio', async () => {
		const { key, accountId } = await app.account(1)
		g.reset()
		const prompt = 'the cat from the first wearing the coat from the second'
		const p = countWords(prompt)
		const files = [await toFile(SMALL, 'cat.png', { type: 'image/png' }), await toFile(LARGE, 'coat.png', { type: 'image/png' })]
		const r = await sdk(key).images.edit({ model: 'nano-banana', image: files, prompt, n: 2, size: '1536x1024' })
		expect(r.data).toHaveLength(2)
		for (const d of r.data ?? []) expect(bytes(d.b64_json)).toEqual(MADE)
		expect(g.requests).toHaveLength(2)
		for (const q of g.requests) {
			expect(q.path).toBe(`/v1beta/models/${FLASH}:generateContent`)
			expect(q.body).toEqual({
				contents: [{ role: 'user', parts: [inline(SMALL), inline(LARGE), { text: prompt }] }],
				generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2' } },
			})
		}
		const images = 258 + 1032
		expect(r.usage).toMatchObject({ input_tokens: 2 * (p + images), output_tokens: 2 * 1290, input_tokens_details: { text_tokens: 2 * p, image_tokens: 2 * images } })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * (p + images * 2 + 1290 * 30))
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/edits', model: 'nano-banana', status: 200 })
	})

	it('should ask a Gemini 3 image model for its imageSize tier and bill its input image at the input price when none is listed', async () => {
		const { key, accountId } = await app.account(1)
		g.reset()
		const prompt = 'make it a poster'
		await sdk(key).images.edit({ model: PRO, image: await toFile(SMALL, 'a.png', { type: 'image/png' }), prompt, size: '2048x2048' })
		expect(g.requests[0]!.body).toMatchObject({ generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '2K' } } })
		// Gemini 3 counts 1120 tokens an input image; PRO lists no image input price, so $2/M as text.
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - ((countWords(prompt) + 1120) * 2 + 1120 * 120 + IMAGE_THOUGHT_TOKENS * 12))
	})

	it('should take the JSON form: a data: URL decoded and a web URL fetched under the outbound guard, in order', async () => {
		const { key, accountId } = await app.account(1)
		g.reset()
		const prompt = 'blend these'
		const images = [{ image_url: `data:image/png;base64,${b64(SMALL)}` }, { image_url: `http://127.0.0.1:${pictures.port}/large.png` }]
		const r = await edit(key, { model: FLASH, prompt, images })
		expect(r.status).toBe(200)
		expect(bytes(r.body.data[0].b64_json)).toEqual(MADE)
		expect(g.requests[0]!.body).toMatchObject({ contents: [{ role: 'user', parts: [inline(SMALL), inline(LARGE), { text: prompt }] }] })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (countWords(prompt) + (258 + 1032) * 2 + 1290 * 30))
	})

	it('should refuse with a 400 naming the field what Gemini cannot do, before any charge or upstream call', async () => {
		const { key, accountId } = await app.account(1)
		g.reset()
		const mask = await editForm(key, { model: FLASH, prompt: 'fill the hole', image: SMALL, mask: SMALL })
		expect([mask.status, mask.body.error.param, mask.body.error.type]).toEqual([400, 'mask', 'invalid_request_error'])
		expect(mask.body.error.message).toContain('by instruction')
		const jsonMask = await edit(key, { model: FLASH, prompt: 'fill', images: [{ image_url: `data:image/png;base64,${b64(SMALL)}` }], mask: { image_url: `data:image/png;base64,${b64(SMALL)}` } })
		expect([jsonMask.status, jsonMask.body.error.param]).toEqual([400, 'mask'])
		const imagen = await editForm(key, { model: IMAGEN, prompt: 'a hat', image: SMALL })
		expect([imagen.status, imagen.body.error.param, imagen.body.error.code]).toEqual([400, 'model', 'unsupported_for_model'])
		expect(imagen.body.error.message).toContain('Vertex AI')
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ images: [{ file_id: 'file-abc' }] }, 'images[0].file_id'],
			[{ images: [{ image_url: `data:text/plain;base64,${b64(new TextEncoder().encode('not a picture'))}` }] }, 'images[0].image_url'],
			[{ images: [{ image_url: 'http://169.254.169.254/latest/meta-data/' }] }, 'images[0].image_url'],
			[{ images: [{ image_url: `data:image/png;base64,${b64(SMALL)}` }], response_format: 'url' }, 'response_format'],
			[{ images: [{ image_url: `data:image/png;base64,${b64(SMALL)}` }], stream: true }, 'stream'],
			[{ images: [{ image_url: `data:image/png;base64,${b64(SMALL)}` }], size: '1024x256' }, 'size'],
		]
		for (const [fields, param] of cases) {
			const r = await edit(key, { model: FLASH, prompt: 'a hat', ...fields })
			expect([r.status, r.body.error?.param, r.body.error?.type]).toEqual([400, param, 'invalid_request_error'])
		}
		const text = await editForm(key, { model: FLASH, prompt: 'a hat', image: new TextEncoder().encode('just text') })
		expect([text.status, text.body.error.param]).toEqual([400, 'image'])
		expect(g.requests).toHaveLength(0)
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it("should hold the input images' tokens too: 402 before any call when the balance covers the prompt but not the images", async () => {
		const prompt = 'a hat'
		// What a generation of the same prompt holds: the prompt at the dearest input rate ($2/M), 6240 image tokens at $30/M, 1.
		const generationHold = countWords(prompt) * 2 + 6240 * 30 + 1
		const { key } = await app.account((generationHold + 500) / 1e6)
		g.reset()
		const short = await editForm(key, { model: FLASH, prompt, image: SMALL })
		expect(short.status).toBe(402)
		expect(g.requests).toHaveLength(0)
		const generated = await call(app, key, '/v1/images/generations', { body: { model: FLASH, prompt } })
		expect(generated.status).toBe(200)
	})
})

describe('Vercel AI SDK generateImage with input images through @ai-sdk/openai', () => {
	it('should edit the given image on a Gemini image model and report the tokens Google counted', async () => {
		const { key, accountId } = await app.account(1)
		g.reset()
		const text = 'turn it blue'
		const r = await generateImage({ model: createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` }).image(FLASH), prompt: { text, images: [SMALL] } })
		expect(r.images).toHaveLength(1)
		expect(r.images[0]!.uint8Array).toEqual(MADE)
		expect(r.usage).toMatchObject({ inputTokens: countWords(text) + 258, outputTokens: 1290 })
		expect(g.requests[0]!.body).toMatchObject({ contents: [{ role: 'user', parts: [inline(SMALL), { text }] }] })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (countWords(text) + 258 * 2 + 1290 * 30))
	})
})
