/**
 * POST /v1/images/edits and /v1/images/variations through the official `openai` SDK (`images.edit`,
 * `images.createVariation`) and raw HTTP: multipart forwarded field by field with the files unchanged (repeated
 * `image[]` included), the JSON edit form, streamed edits, pricing as for generations, bad input refused before any
 * upstream call, failover and no charge for a failed call, and the key's `allowed_models`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { EDIT_IMAGE_TOKENS } from '../../mocks/openai/image-edits'
import { PNG_1X1 } from '../../mocks/openai/media'
import { call, micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let oa2: VendorMock
let app: TestApp

const PNG = new Uint8Array(Buffer.from(PNG_1X1, 'base64'))
/** A second, different image: the same PNG with a trailing byte, so the two uploads can be told apart. */
const PNG_B = new Uint8Array([...PNG, 0x00])

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	oa2 = await startOpenAIMock({ apiKey: 'up-oa2' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-image-1', 'dall-e-2', 'editor'], model_map: { editor: 'gpt-image-1' }, priority: 0 },
				{ name: 'oa2', type: 'openai', base_url: oa2.url, api_key: 'up-oa2', models: ['gpt-image-1', 'dall-e-2'], priority: 1 },
			],
			models: priceList([
				{ name: 'gpt-image-1', input_per_mtok: 10, output_per_mtok: 40 },
				{ name: 'editor', input_per_mtok: 10, output_per_mtok: 40 },
				{ name: 'dall-e-2', per_image_256x256: 0.016, per_image_512x512: 0.018, per_image: 0.02 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
	await oa2.stop()
})

beforeEach(() => {
	for (const m of [oa, oa2]) {
		m.reset()
		m.fault = undefined
		m.faultOnce = undefined
	}
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
const bytes = async (v: FormDataEntryValue | null) => new Uint8Array(await (v as File).arrayBuffer())
/** $ per token → micro-USD for `n` tokens. */
const tokens = (n: number, perMtok: number) => n * perMtok

/** A multipart call with the key (the body built by hand, as a client other than the SDK would). */
async function multipart(key: string, path: string, fields: Array<[string, string | File]>) {
	const fd = new FormData()
	for (const [k, v] of fields) if (typeof v === 'string') fd.append(k, v)
	else fd.append(k, v, v.name)
	const res = await fetch(app.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: fd })
	return { status: res.status, body: (await res.json()) as any }
}

describe('POST /v1/images/edits (multipart)', () => {
	it('should forward several images as repeated image[] files, the mask and every field unchanged, only the model renamed', async () => {
		const { key, accountId } = await app.account(1)
		const r = await sdk(key).images.edit({
			model: 'editor',
			image: [await toFile(PNG, 'first.png', { type: 'image/png' }), await toFile(PNG_B, 'second.webp', { type: 'image/webp' })],
			mask: await toFile(PNG, 'mask.png', { type: 'image/png' }),
			prompt: 'add a hat',
			input_fidelity: 'high',
			background: 'transparent',
			quality: 'low',
		})
		expect(r.data?.[0]?.b64_json).toBe(PNG_1X1)
		const [sent] = oa.requests
		expect(sent?.path).toBe('/v1/images/edits')
		const form = sent!.form!
		const images = form.getAll('image[]') as File[]
		expect(images.map((f) => [f.name, f.type])).toEqual([
			['first.png', 'image/png'],
			['second.webp', 'image/webp'],
		])
		expect(await bytes(images[0]!)).toEqual(PNG)
		expect(await bytes(images[1]!)).toEqual(PNG_B)
		expect(form.has('image')).toBe(false)
		expect(((form.get('mask') as File).name)).toBe('mask.png')
		expect(await bytes(form.get('mask'))).toEqual(PNG)
		expect([form.get('model'), form.get('prompt'), form.get('input_fidelity'), form.get('background'), form.get('quality')]).toEqual(['gpt-image-1', 'add a hat', 'high', 'transparent', 'low'])
		// Charged the tokens reported: 3 words + 2 input images, 272 output tokens.
		const input = 3 + 2 * EDIT_IMAGE_TOKENS
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - tokens(input, 10) - tokens(272, 40))
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/edits', model: 'editor', input_tokens: input, output_tokens: 272, status: 200 })
	})

	it('should edit one dall-e-2 image sent as `image` and charge its per-image size price', async () => {
		const { key, accountId } = await app.account(1)
		const r = await sdk(key).images.edit({ model: 'dall-e-2', image: await toFile(PNG, 'otter.png', { type: 'image/png' }), prompt: 'a beret', n: 2, size: '512x512' })
		expect(r.data).toHaveLength(2)
		expect(r.data?.[0]?.url).toContain('/v1/mock-files/')
		const form = oa.requests[0]!.form!
		expect(form.getAll('image').length).toBe(1)
		expect(form.get('n')).toBe('2')
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * 18_000)
	})

	it('should send each image with the type its part declares, whatever its name (OpenAI refuses one sent as application/octet-stream)', async () => {
		const { key } = await app.account(1)
		const image = [await toFile(PNG, 'photo', { type: 'image/png' }), await toFile(PNG_B, 'scan.bin', { type: 'image/webp' })]
		const r = await sdk(key).images.edit({ model: 'gpt-image-1', image, prompt: 'add a hat' })
		expect(r.data).toHaveLength(1)
		const sent = oa.requests[0]!.form!.getAll('image[]') as File[]
		expect(sent.map((f) => [f.name, f.type])).toEqual([
			['photo', 'image/png'],
			['scan.bin', 'image/webp'],
		])
		expect(await bytes(sent[1]!)).toEqual(PNG_B)
	})

	it('should refuse bad input with a clear 400 naming the field, before any upstream call or charge', async () => {
		const { key, accountId } = await app.account(1)
		const png = new File([PNG], 'a.png', { type: 'image/png' })
		const cases: Array<[Array<[string, string | File]>, string]> = [
			[[['model', 'gpt-image-1'], ['prompt', 'x']], 'image'],
			[[['model', 'gpt-image-1'], ['prompt', 'x'], ['image', 'not a file']], 'image'],
			[[['model', 'gpt-image-1'], ['prompt', 'x'], ['image', new File([], 'empty.png', { type: 'image/png' })]], 'image'],
			[[['model', 'gpt-image-1'], ['image', png]], 'prompt'],
			[[['prompt', 'x'], ['image', png]], 'model'],
			[[['model', 'gpt-image-1'], ['prompt', 'x'], ['image', png], ['n', '11']], 'n'],
			[[['model', 'gpt-image-1'], ['prompt', 'x'], ['image', png], ['size', 'huge']], 'size'],
			[[['model', 'gpt-image-1'], ['prompt', 'x'], ['image', png], ['mask', 'text']], 'mask'],
			[[['model', 'dall-e-2'], ['prompt', 'x'], ['image', png], ['stream', 'true']], 'stream'],
			[[['model', 'gpt-image-1'], ['prompt', 'x'], ...Array.from({ length: 17 }, (): [string, File] => ['image[]', png])], 'image'],
		]
		for (const [fields, param] of cases) {
			const r = await multipart(key, '/v1/images/edits', fields)
			expect([r.status, r.body.error?.param]).toEqual([400, param])
			expect(typeof r.body.error.message).toBe('string')
		}
		// An image field sent as text is told what it must be.
		const text = await multipart(key, '/v1/images/edits', cases[1]![0])
		expect(text.body.error.message).toContain('expected an image file')
		expect(oa.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should pass the vendor 400 through for what only the vendor checks, and charge nothing', async () => {
		const { key, accountId } = await app.account(1)
		const png = new File([PNG], 'a.png', { type: 'image/png' })
		const r = await multipart(key, '/v1/images/edits', [['model', 'dall-e-2'], ['prompt', 'x'], ['image[]', png], ['image[]', png]])
		expect(r.status).toBe(400)
		expect(r.body.error.message).toContain('exactly one image')
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should fail over to the next channel when one fails, resending the same files, and charge once', async () => {
		const { key, accountId } = await app.account(1)
		oa.faultOnce = { kind: 'status', status: 500 }
		const r = await sdk(key).images.edit({ model: 'gpt-image-1', image: await toFile(PNG_B, 'b.png', { type: 'image/png' }), prompt: 'blue' })
		expect(r.data).toHaveLength(1)
		expect(oa.requests).toHaveLength(1)
		expect(await bytes(oa2.requests[0]!.form!.get('image'))).toEqual(PNG_B)
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - tokens(1 + EDIT_IMAGE_TOKENS, 10) - tokens(272, 40))
	})

	it('should charge nothing when every channel fails', async () => {
		const { key, accountId } = await app.account(1)
		oa.fault = { kind: 'status', status: 500 }
		oa2.fault = { kind: 'status', status: 500 }
		const r = await multipart(key, '/v1/images/edits', [['model', 'gpt-image-1'], ['prompt', 'x'], ['image', new File([PNG], 'a.png', { type: 'image/png' })]])
		expect(r.status).toBe(502)
		expect(r.body.error).toBeDefined()
		expect(await app.balance(accountId)).toBe(1)
		expect((await usageOf(app, accountId))[0]).toMatchObject({ endpoint: '/v1/images/edits', cost: 0 })
	})

	it("should hold edits and variations to the key's allowed_models and rpm_limit", async () => {
		const { key, tokenId } = await app.account(1)
		expect((await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: { allowed_models: ['dall-e-2'], rpm_limit: 2 } })).status).toBe(200)
		const png = new File([PNG], 'a.png', { type: 'image/png' })
		const r = await multipart(key, '/v1/images/edits', [['model', 'gpt-image-1'], ['prompt', 'x'], ['image', png]])
		expect([r.status, r.body.error.code]).toEqual([403, 'model_not_allowed'])
		expect(oa.requests).toHaveLength(0)
		expect((await multipart(key, '/v1/images/variations', [['image', png]])).status).toBe(200)
		const limited = await multipart(key, '/v1/images/variations', [['image', png]])
		expect([limited.status, limited.body.error.code]).toEqual([429, 'rate_limit_exceeded'])
		expect(oa.requests).toHaveLength(1)
	})

	it('should keep the fields in the order sent, with model renamed where it stood', async () => {
		const { key } = await app.account(1)
		const png = new File([PNG], 'a.png', { type: 'image/png' })
		const b = new File([PNG_B], 'b.jpg', { type: 'image/jpeg' })
		const sent: Array<[string, string | File]> = [['prompt', 'x'], ['image[]', png], ['model', 'editor'], ['image[]', b], ['n', '1'], ['metadata', '{"a":[1]}']]
		expect((await multipart(key, '/v1/images/edits', sent)).status).toBe(200)
		const form = oa.requests[0]!.form!
		expect([...form.entries()].map(([k, v]) => [k, (v as unknown) instanceof File ? (v as unknown as File).name : v])).toEqual([
			['prompt', 'x'],
			['image[]', 'a.png'],
			['model', 'gpt-image-1'],
			['image[]', 'b.jpg'],
			['n', '1'],
			['metadata', '{"a":[1]}'],
		])
	})
})

describe('POST /v1/images/edits (stream)', () => {
	it('should relay image_edit events to the SDK and bill from the completed event', async () => {
		const { key, accountId } = await app.account(1)
		const stream = await sdk(key).images.edit({ model: 'gpt-image-1', image: await toFile(PNG, 'a.png', { type: 'image/png' }), prompt: 'red', stream: true, partial_images: 2 })
		const types: string[] = []
		for await (const e of stream) types.push(e.type)
		expect(types).toEqual(['image_edit.partial_image', 'image_edit.partial_image', 'image_edit.completed'])
		expect(oa.requests[0]!.form!.get('stream')).toBe('true')
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - tokens(1 + EDIT_IMAGE_TOKENS, 10) - tokens(272, 40))
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/edits', end_reason: 'ok', output_tokens: 272 })
	})
})

describe('POST /v1/images/edits (JSON)', () => {
	it('should forward image references as JSON with the model renamed, and charge the reported tokens', async () => {
		const { key, accountId } = await app.account(1)
		// A reference by file_id must be one of the account's files (test/integration/native/openai-file-refs.test.ts).
		const images = [{ image_url: 'https://example.com/a.png' }, { image_url: 'data:image/png;base64,' + PNG_1X1 }]
		const mask = { image_url: 'https://example.com/mask.png' }
		const r = await call(app, key, '/v1/images/edits', { body: { model: 'editor', prompt: 'two cats', images, mask, quality: 'low' } })
		expect(r.status).toBe(200)
		expect(r.body.data[0].b64_json).toBe(PNG_1X1)
		expect(oa.requests[0]!.body).toEqual({ model: 'gpt-image-1', prompt: 'two cats', images, mask, quality: 'low' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - tokens(2 + 2 * EDIT_IMAGE_TOKENS, 10) - tokens(272, 40))
	})

	it('should refuse a JSON edit without usable image references', async () => {
		const { key } = await app.account(1)
		for (const [images, param] of [
			[undefined, 'images'],
			[[], 'images'],
			[[{ image_url: 'https://example.com/a.png', file_id: 'file-x' }], 'images[0]'],
			[[{ url: 'https://example.com/a.png' }], 'images[0]'],
		] as const) {
			const r = await call(app, key, '/v1/images/edits', { body: { model: 'gpt-image-1', prompt: 'x', images } })
			expect([r.status, r.body.error.param]).toEqual([400, param])
		}
		expect(oa.requests).toHaveLength(0)
	})
})

describe('POST /v1/images/variations', () => {
	it('should vary a dall-e-2 image through the SDK (the default model), forwarding the file, and charge per image by size', async () => {
		const { key, accountId } = await app.account(1)
		const r = await sdk(key).images.createVariation({ image: await toFile(PNG, 'otter.png', { type: 'image/png' }), n: 3, size: '256x256', response_format: 'b64_json' })
		expect(r.data).toHaveLength(3)
		expect(r.data?.[0]?.b64_json).toBe(PNG_1X1)
		const form = oa.requests[0]!.form!
		expect(oa.requests[0]!.path).toBe('/v1/images/variations')
		expect(form.get('model')).toBe('dall-e-2')
		expect((form.get('image') as File).name).toBe('otter.png')
		expect(await bytes(form.get('image'))).toEqual(PNG)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 3 * 16_000)
		expect((await usageOf(app, accountId))[0]).toMatchObject({ endpoint: '/v1/images/variations', model: 'dall-e-2', cost: 0.048 })
	})

	it('should refuse a variation without an image file, or as JSON', async () => {
		const { key } = await app.account(1)
		const r = await multipart(key, '/v1/images/variations', [['n', '1']])
		expect([r.status, r.body.error.param]).toEqual([400, 'image'])
		const j = await call(app, key, '/v1/images/variations', { body: { model: 'dall-e-2', image: 'https://example.com/a.png' } })
		expect(j.status).toBe(400)
		expect(oa.requests).toHaveLength(0)
	})
})
