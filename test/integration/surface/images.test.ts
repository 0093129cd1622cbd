import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { pricedAs } from '../../../src/modules/images'
import { imageUnitPrice } from '../../../src/passthrough/pricing'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { call, micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['dall-e-3', 'dall-e-2', 'gpt-image-1', 'dall-e-3-listed'], model_map: { 'dall-e-3-listed': 'dall-e-3' } }],
			models: priceList([
				{ name: 'dall-e-3', per_image: 0.04, per_image_1024x1024_hd: 0.08, per_image_1792x1024: 0.08 },
				// OpenAI's dall-e-3 list: a request naming no size or quality makes (and pays for) 1024x1024 standard.
				{ name: 'dall-e-3-listed', per_image: 0.05, per_image_1024x1024_standard: 0.04, per_image_1024x1024_hd: 0.08 },
				{ name: 'dall-e-2', per_request: 0.02 },
				// No per-image price: the tokens the upstream reports price it.
				{ name: 'gpt-image-1', input_per_mtok: 5, output_per_mtok: 40 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

describe('imageUnitPrice', () => {
	const p = { inputPerMtok: 0, outputPerMtok: 0, prices: { per_image_1024x1024_hd: 80, per_image_1024x1024: 40, per_image_hd: 70, per_image: 30, per_image_512x512: 10 } }
	it('should prefer size and quality, then size, then quality, then per_image', () => {
		expect(imageUnitPrice(p, '1024x1024', 'hd')).toBe(80)
		expect(imageUnitPrice(p, '1024x1024', 'standard')).toBe(40)
		expect(imageUnitPrice(p, '256x256', 'hd')).toBe(70)
		expect(imageUnitPrice(p, '256x256')).toBe(30)
	})
	it('should fall back to per_request, then the dearest per_image_* listed, else undefined', () => {
		expect(imageUnitPrice({ inputPerMtok: 0, outputPerMtok: 0, perRequest: 5, prices: { per_image_512x512: 9 } }, '256x256')).toBe(5)
		expect(imageUnitPrice({ inputPerMtok: 0, outputPerMtok: 0, prices: { per_image_512x512: 9, per_image_1024x1024: 20 } }, '256x256')).toBe(20)
		expect(imageUnitPrice({ inputPerMtok: 1, outputPerMtok: 1, prices: {} }, '256x256')).toBeUndefined()
	})
})

describe('POST /v1/images/generations', () => {
	it('should generate with the SDK and charge the size+quality price per image', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const r = await openai.images.generate({ model: 'dall-e-3', prompt: 'a red fox', size: '1024x1024', quality: 'hd' })
		expect(r.data?.[0]?.url).toContain('/v1/mock-files/')
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 80_000)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/generations', model: 'dall-e-3', cost: 0.08 })
	})

	it("should price a dall-e image by the size and quality it is made at when the request leaves them out", async () => {
		const { key, accountId } = await app.account(1)
		expect((await call(app, key, '/v1/images/generations', { body: { model: 'dall-e-3-listed', prompt: 'a fox' } })).status).toBe(200)
		expect((await call(app, key, '/v1/images/generations', { body: { model: 'dall-e-3-listed', prompt: 'a fox', quality: 'hd' } })).status).toBe(200)
		expect((await usageOf(app, accountId)).map((r: { cost: number }) => r.cost).sort()).toEqual([0.04, 0.08])
		expect(pricedAs('dall-e-2', undefined, 'auto')).toEqual({ size: '1024x1024', quality: 'standard' })
		expect(pricedAs('gpt-image-1')).toEqual({ size: undefined, quality: undefined })
	})

	it('should charge per delivered image with per_request as the unit price and relay b64_json', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/v1/images/generations', { body: { model: 'dall-e-2', prompt: 'cats', n: 3, response_format: 'b64_json' } })
		expect(r.status).toBe(200)
		expect(r.body.data).toHaveLength(3)
		expect(typeof r.body.data[0].b64_json).toBe('string')
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 60_000)
	})

	it('should price gpt-image by the usage tokens the upstream reports', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/v1/images/generations', { body: { model: 'gpt-image-1', prompt: 'two words' } })
		expect(r.status).toBe(200)
		// 2 input tokens × $5/M + 272 output tokens × $40/M = 10 + 10880 micro-USD
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 10_890)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ input_tokens: 2, output_tokens: 272 })
	})

	it("should default a generation naming no model to dall-e-2, or to gpt-image-1 when it uses a GPT image parameter, as OpenAI does", async () => {
		// QA: `client.images.generate({ prompt })` (the SDK's `model` is optional) was 400 "model" required.
		const { key, accountId } = await app.account(1)
		oa.reset()
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const r = await openai.images.generate({ prompt: 'cats', n: 2 })
		expect(r.data).toHaveLength(2)
		expect((oa.requests[0]!.body as { model: string }).model).toBe('dall-e-2')
		const g = await openai.images.generate({ prompt: 'two words', output_format: 'webp' })
		expect(g.output_format).toBe('webp')
		expect((oa.requests[1]!.body as { model: string }).model).toBe('gpt-image-1')
		// dall-e-2 at its per_request price per image; then gpt-image-1 by its tokens, as the rows say.
		const rows = await usageOf(app, accountId)
		expect(rows.map((x) => [x.model, micros(x.cost)])).toEqual([
			['dall-e-2', 40_000],
			['gpt-image-1', 10_890],
		])
	})

	it('should reject a malformed size with a clear 400 before calling the upstream', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		for (const size of ['big', '1024', '10x10', '1024x99999']) {
			const r = await call(app, key, '/v1/images/generations', { body: { model: 'dall-e-3', prompt: 'x', size } })
			expect(r.status).toBe(400)
			expect(r.body.error.param).toBe('size')
			expect(r.body.error.message).toContain('WxH')
		}
		expect(oa.requests).toHaveLength(0)
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should pass the upstream 400 through and charge nothing', async () => {
		const { key, accountId } = await app.account(1)
		const r = await call(app, key, '/v1/images/generations', { body: { model: 'dall-e-3', prompt: 'x', n: 2 } })
		expect(r.status).toBe(400)
		expect(r.body.error.message).toContain("Invalid 'n'")
		expect(await app.balance(accountId)).toBe(1)
	})

	it('should refuse with 402 when the balance cannot pay for the images', async () => {
		const { key } = await app.account(0.05)
		const r = await call(app, key, '/v1/images/generations', { body: { model: 'dall-e-2', prompt: 'x', n: 3 } })
		expect(r.status).toBe(402)
		expect(r.body.error.code).toBe('insufficient_quota')
	})
})
