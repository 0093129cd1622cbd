/**
 * A GPT image model chooses the size and quality of an `auto` request (the default) itself, and its answer says what
 * it made ("the quality of the image generated. Either low, medium, or high", and `size`). With per-image prices by
 * size and quality, such an image is charged at the price of what was made, not at the dearest listed; the hold still
 * covers the dearest, since it is taken before the answer. Requests naming a size and quality keep their price.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { PNG_1X1 } from '../../mocks/openai/media'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp
const PNG = new Uint8Array(Buffer.from(PNG_1X1, 'base64'))

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-image-1'] }],
			// OpenAI's per-image prices of gpt-image-1 at 1024x1024.
			models: priceList([{ name: 'gpt-image-1', per_image_1024x1024_low: 0.011, per_image_1024x1024_medium: 0.042, per_image_1024x1024_high: 0.167 }]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })

describe('GPT image models priced per image, size and quality left to the model', () => {
	it('should charge a generation at the size and quality its answer says were made', async () => {
		const { key, accountId } = await app.account(1)
		const r = await sdk(key).images.generate({ model: 'gpt-image-1', prompt: 'a red fox', n: 2 })
		expect(r).toMatchObject({ size: '1024x1024', quality: 'medium' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2 * 42_000)
		expect((await usageOf(app, accountId))[0]).toMatchObject({ cost: 0.084, status: 200 })
	})

	it('should charge a streamed generation at what its completed events say were made', async () => {
		const { key, accountId } = await app.account(1)
		const stream = await sdk(key).images.generate({ model: 'gpt-image-1', prompt: 'a red fox', stream: true, quality: 'auto' })
		const completed = []
		for await (const e of stream) if (e.type === 'image_generation.completed') completed.push(e)
		expect(completed).toMatchObject([{ size: '1024x1024', quality: 'medium' }])
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 42_000)
	})

	it('should charge an edit at what its answer says was made', async () => {
		const { key, accountId } = await app.account(1)
		await sdk(key).images.edit({ model: 'gpt-image-1', image: await toFile(PNG, 'a.png', { type: 'image/png' }), prompt: 'a hat' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 42_000)
	})

	it('should keep the price of the quality the request named', async () => {
		const { key, accountId } = await app.account(1)
		await sdk(key).images.generate({ model: 'gpt-image-1', prompt: 'a red fox', quality: 'low', size: '1024x1024' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 11_000)
	})
})
