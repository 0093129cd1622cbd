/**
 * GPT image models price their input images apart from the prompt's text (OpenAI's pricing for gpt-image-1: text input
 * $5, image input $10, image output $40 per million tokens), and the Images API reports the split in
 * `usage.input_tokens_details` (`text_tokens`, `image_tokens`). With `image_input_per_mtok` listed, an edit's input
 * images are charged at it, through the `openai` SDK, JSON or streamed; without it they cost the input price.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { EDIT_IMAGE_TOKENS } from '../../mocks/openai/image-edits'
import { PNG_1X1 } from '../../mocks/openai/media'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp
const PNG = new Uint8Array(Buffer.from(PNG_1X1, 'base64'))

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-image-1', 'gpt-image-plain'], model_map: { 'gpt-image-plain': 'gpt-image-1' } }],
			models: priceList([
				{ name: 'gpt-image-1', input_per_mtok: 5, output_per_mtok: 40, image_input_per_mtok: 10 },
				{ name: 'gpt-image-plain', input_per_mtok: 5, output_per_mtok: 40 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })

describe('GPT image input images', () => {
	it('should charge the input images of an edit at image_input_per_mtok and its prompt at the input price', async () => {
		const { key, accountId } = await app.account(1)
		const r = await sdk(key).images.edit({ model: 'gpt-image-1', image: [await toFile(PNG, 'a.png', { type: 'image/png' }), await toFile(PNG, 'b.png', { type: 'image/png' })], prompt: 'a red hat' })
		expect(r.usage).toMatchObject({ input_tokens_details: { text_tokens: 3, image_tokens: 2 * EDIT_IMAGE_TOKENS } })
		// 3 text tokens at $5, 388 image tokens at $10, 272 output tokens at $40 (micro-USD per token = $ per Mtok).
		const cost = 3 * 5 + 2 * EDIT_IMAGE_TOKENS * 10 + 272 * 40
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/images/edits', input_tokens: 3 + 2 * EDIT_IMAGE_TOKENS, output_tokens: 272, cost: cost / 1e6, estimated: false })
	})

	it('should charge a streamed edit’s input images at image_input_per_mtok too', async () => {
		const { key, accountId } = await app.account(1)
		const stream = await sdk(key).images.edit({ model: 'gpt-image-1', image: await toFile(PNG, 'a.png', { type: 'image/png' }), prompt: 'red', stream: true })
		for await (const _ of stream) {
			// drain
		}
		const cost = 1 * 5 + EDIT_IMAGE_TOKENS * 10 + 272 * 40
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost)
	})

	it('should charge input images at the input price when the model lists no image input price', async () => {
		const { key, accountId } = await app.account(1)
		await sdk(key).images.edit({ model: 'gpt-image-plain', image: await toFile(PNG, 'a.png', { type: 'image/png' }), prompt: 'red' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - ((1 + EDIT_IMAGE_TOKENS) * 5 + 272 * 40))
	})

	it('should charge a generation, which has no input image, its prompt at the input price', async () => {
		const { key, accountId } = await app.account(1)
		await sdk(key).images.generate({ model: 'gpt-image-1', prompt: 'a red hat' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (3 * 5 + 272 * 40))
	})
})
