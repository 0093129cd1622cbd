/**
 * A large chat body (a base64 image, a long history) goes upstream as the client wrote it, the members the gateway
 * changes aside, sent as the pieces it is made of (src/relay/text-pieces.ts) rather than joined into one new string
 * on the event loop. The vendor must see exactly that text, sized by `content-length` (not chunked), whether the
 * answer is whole or streamed, through the official SDKs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startAnthropicMock, startOpenAIMock, type VendorMock } from '../../mocks'
import { priceList } from '../surface/helpers'

let oa: VendorMock
let an: VendorMock
let app: TestApp
beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	an = await startAnthropicMock({ apiKey: 'up-an' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['vision-model'], model_map: { 'vision-model': 'gpt-4o' } },
				{ name: 'an', type: 'anthropic', base_url: an.url, api_key: 'up-an', models: ['claude-sonnet-4-5'] },
			],
			models: priceList([
				{ name: 'vision-model', input_per_mtok: 1, output_per_mtok: 2 },
				{ name: 'claude-sonnet-4-5', input_per_mtok: 3, output_per_mtok: 15, max_output_tokens: 500 },
			]),
		},
	})
}, 30_000)
afterAll(async () => {
	await app.close()
	await oa.stop()
	await an.stop()
})

/** ~1.5 MB of base64, as a screenshot would be. */
const image = Buffer.from(crypto.getRandomValues(new Uint8Array(65_535))).toString('base64').repeat(17)
// Text around it that is not ASCII: its bytes are not its length, and a piece must not split a character.
const note = 'Décris cette capture 😀 — 说明这张截图'

/** What the vendor received: its text, and whether it came sized. */
const received = (mock: VendorMock) => {
	const r = mock.requests.at(-1)!
	return { text: r.text!, length: Number(r.headers['content-length']), chunked: r.headers['transfer-encoding'] }
}

describe('a large body sent upstream in pieces', () => {
	it('should send a whole chat request as written, the model renamed where it stands, sized', async () => {
		const { key } = await app.account(5)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: note }, { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${image}` } }] }]
		const r = await openai.chat.completions.create({ model: 'vision-model', messages })
		expect(r.choices[0]!.message.content).toBeString()
		const sent = received(oa)
		expect(sent.chunked).toBeUndefined()
		expect(sent.length).toBe(Buffer.byteLength(sent.text))
		const body = JSON.parse(sent.text)
		expect(body.model).toBe('gpt-4o')
		expect(body.messages).toEqual(messages)
		// Everything but the model is the client's text: the SDK's serialisation, the model's value replaced in place.
		expect(sent.text).toBe(JSON.stringify({ model: 'vision-model', messages }).replace('"model":"vision-model"', '"model":"gpt-4o"'))
	})

	it('should send a streamed chat request with the usage it asks for added, and relay the stream', async () => {
		const { key } = await app.account(5)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: note }, { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${image}` } }] }]
		const stream = await openai.chat.completions.create({ model: 'vision-model', messages, stream: true })
		let text = ''
		for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
		expect(text.length).toBeGreaterThan(0)
		const sent = received(oa)
		expect(sent.chunked).toBeUndefined()
		expect(sent.length).toBe(Buffer.byteLength(sent.text))
		expect(JSON.parse(sent.text)).toEqual({ messages, model: 'gpt-4o', stream: true, stream_options: { include_usage: true } })
	})

	it('should send a large Anthropic request on the fast path as written, capped where it stands', async () => {
		const { key } = await app.account(5)
		const anthropic = new Anthropic({ apiKey: key, baseURL: app.url, maxRetries: 0 })
		const content = [{ type: 'text' as const, text: note }, { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: image } }]
		const msg = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content }] })
		expect(msg.content.length).toBeGreaterThan(0)
		const sent = received(an)
		expect(sent.chunked).toBeUndefined()
		expect(sent.length).toBe(Buffer.byteLength(sent.text))
		// The model's 500 output tokens at most (its price entry), where the client's 1000 stood.
		expect(sent.text).toBe(JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content }] }).replace('"max_tokens":1000', '"max_tokens":500'))
	})
})
