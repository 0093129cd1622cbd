/**
 * Images counted by the vendor rule of the model that serves them, where the gateway counts (a model on a channel with
 * no counting endpoint: OpenAI, or Claude and Gemini behind OpenAI-compatible endpoints), through Anthropic's
 * `messages.countTokens` and `@google/genai`'s `models.countTokens`; and the reservation sized the same way, so a
 * request of many large images holds what its vendor will bill. Each expected number is worked out by hand below from
 * the vendors' documents (platform.openai.com/docs/guides/images-vision#calculating-costs,
 * docs.anthropic.com/en/docs/build-with-claude/vision, ai.google.dev/gemini-api/docs/tokens).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { GoogleGenAI } from '@google/genai'
import { pngOf } from '../../helpers/png'
import { type Account, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

/** Served by an OpenAI-type channel as the model on the right (Claude and Gemini through OpenAI-compatible endpoints). */
const SERVED = { 'gpt4o-m': 'gpt-4o', 'gpt41mini-m': 'gpt-4.1-mini', 'claude-oai-m': 'claude-sonnet-4-5', 'gemini-oai-m': 'gemini-2.5-flash', 'gemini3-oai-m': 'gemini-3-pro-preview' }

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [{ name: 'ch-compat', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: Object.keys(SERVED), model_map: SERVED }],
		models: Object.keys(SERVED).map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 2 })),
	})
}, SETUP_MS)
afterAll(() => m.close())

/** A JPEG's first segments (SOI, JFIF APP0, a baseline frame header of `width`x`height`, EOI): the size is in its header. */
function jpegOf(width: number, height: number): Uint8Array {
	const app0 = [0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
	const sof0 = [0xff, 0xc0, 0, 17, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
	return new Uint8Array([0xff, 0xd8, ...app0, ...sof0, 0xff, 0xd9])
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
type Img = { type: 'png' | 'jpeg'; data: string }
const png = (w: number, h: number): Img => ({ type: 'png', data: b64(pngOf(w, h)) })
const jpeg = (w: number, h: number): Img => ({ type: 'jpeg', data: b64(jpegOf(w, h)) })

/** Anthropic's count of one user turn: the text, then the images. */
async function claudeCount(acct: Account, model: string, images: Array<Img | string>): Promise<number> {
	const content: Anthropic.Messages.ContentBlockParam[] = [{ type: 'text', text: 'describe these' }]
	for (const i of images)
		content.push({ type: 'image', source: typeof i === 'string' ? { type: 'url', url: i } : { type: 'base64', media_type: `image/${i.type}`, data: i.data } })
	const { data, response } = await acct.anthropic.messages.countTokens({ model, messages: [{ role: 'user', content }] }).withResponse()
	expect(response.headers.get('x-switchboard-counted-by')).toBe('estimate')
	return data.input_tokens
}

/** `@google/genai`'s count of one user turn: the text, then the images inline. */
async function geminiCount(acct: Account, model: string, images: Img[]): Promise<number> {
	const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
	const parts = [{ text: 'describe these' }, ...images.map((i) => ({ inlineData: { mimeType: `image/${i.type}`, data: i.data } }))]
	const r = await ai.models.countTokens({ model, contents: [{ role: 'user', parts }] })
	return r.totalTokens!
}

describe('count_tokens of images, by the serving model vendor rule', () => {
	it('should count OpenAI tiles for gpt-4o (Anthropic SDK)', async () => {
		const acct = await m.account()
		const text = await claudeCount(acct, 'gpt4o-m', [])
		// 1024x1024: fits 2048; shortest side to 768 → 768x768 → 2×2 tiles of 512: 85 + 170×4 = 765.
		expect((await claudeCount(acct, 'gpt4o-m', [png(1024, 1024)])) - text).toBe(765)
		// 2048x4096 (OpenAI's example): 1024x2048 to fit 2048 → 768x1536 → 2×3 tiles: 85 + 170×6 = 1105.
		expect((await claudeCount(acct, 'gpt4o-m', [jpeg(2048, 4096)])) - text).toBe(1105)
		// A URL (not fetched): the most tiles an image makes, 768x2048 → 2×4 tiles: 85 + 170×8 = 1445.
		expect((await claudeCount(acct, 'gpt4o-m', ['https://example.com/a.png'])) - text).toBe(1445)
		expect(await usageRows(m, acct.accountId)).toEqual([])
	})

	it('should count 32-pixel patches times 1.62 for gpt-4.1-mini (Anthropic SDK)', async () => {
		const acct = await m.account()
		const text = await claudeCount(acct, 'gpt41mini-m', [])
		// 1024x1024: 32×32 = 1024 patches (≤ 1536) × 1.62 = 1658.88 → 1659.
		expect((await claudeCount(acct, 'gpt41mini-m', [png(1024, 1024)])) - text).toBe(1659)
		// 1800x2400: 57×75 = 4275 patches > 1536. shrink = √(32²×1536 / (1800×2400)) ≈ 0.6034 → 33.94 × 45.26 patches;
		// × min(33/33.94, 45/45.26) → 1056x1408 → 33×44 = 1452 patches (OpenAI's example) × 1.62 = 2352.24 → 2353.
		expect((await claudeCount(acct, 'gpt41mini-m', [jpeg(1800, 2400)])) - text).toBe(2353)
	})

	it('should count (width × height) / 750 for Claude behind an OpenAI-compatible channel (Anthropic SDK)', async () => {
		const acct = await m.account()
		const text = await claudeCount(acct, 'claude-oai-m', [])
		// 1000x1000 = 1,000,000 px / 750 = 1333.3 → 1334.
		expect((await claudeCount(acct, 'claude-oai-m', [png(1000, 1000)])) - text).toBe(1334)
		// 3000x2000: long edge to 1568 → 1568x1045.3 = 1,639,083 px / 750 = 2186 > ~1,600, so scaled to 1,600.
		// Two images: 1334 + 1600.
		expect((await claudeCount(acct, 'claude-oai-m', [png(1000, 1000), jpeg(3000, 2000)])) - text).toBe(1334 + 1600)
	})

	it('should count 258 per image or 768-pixel tile for Gemini 2.5, 1120 for Gemini 3 (@google/genai)', async () => {
		const acct = await m.account()
		const text = await geminiCount(acct, 'gemini-oai-m', [])
		// 300x200: both sides ≤ 384 → 258. 1024x1024: ⌈1024/768⌉ × ⌈1024/768⌉ = 4 tiles × 258 = 1032.
		expect((await geminiCount(acct, 'gemini-oai-m', [png(300, 200)])) - text).toBe(258)
		expect((await geminiCount(acct, 'gemini-oai-m', [png(1024, 1024)])) - text).toBe(1032)
		// Gemini 3 at its default (high) media resolution: 1120 an image, whatever its size.
		const text3 = await geminiCount(acct, 'gemini3-oai-m', [])
		expect((await geminiCount(acct, 'gemini3-oai-m', [png(300, 200), png(1024, 1024)])) - text3).toBe(2 * 1120)
	})

	it('should count an image in OpenAI tiles for gpt-4o through @google/genai', async () => {
		const acct = await m.account()
		const text = await geminiCount(acct, 'gpt4o-m', [])
		// 1024x1024 on gpt-4o: 765, as above.
		expect((await geminiCount(acct, 'gpt4o-m', [png(1024, 1024)])) - text).toBe(765)
	})
})

describe('reservation of images', () => {
	it('should hold what gpt-4o-mini bills for large images, refusing with 402 a balance that cannot cover them', async () => {
		// gpt-4o-mini bills 2833 + 5667 a tile: a 2048x2048 image is 768x768, 2×2 tiles → 2833 + 5667×4 = 25,501 tokens;
		// four of them 102,004 tokens, $0.0153 at $0.15 a million. $0.005 covers the text but not them.
		const acct = await m.account(0.005)
		const url = `data:image/png;base64,${b64(pngOf(2048, 2048))}`
		const before = m.mocks.openai.requests.length
		const err = await acct.openai.chat.completions
			.create({ model: MODEL.openai, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 'compare' }, ...Array.from({ length: 4 }, () => ({ type: 'image_url' as const, image_url: { url } }))] }] })
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402)
		expect(m.mocks.openai.requests.length).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(0.005)
	})

	it('should hold little for low-detail images, serving them on a small balance', async () => {
		// detail low: gpt-4o-mini's base, 2833 tokens an image; four are 11,332 tokens, $0.0017: $0.005 covers them.
		const acct = await m.account(0.005)
		const url = `data:image/png;base64,${b64(pngOf(2048, 2048))}`
		const r = await acct.openai.chat.completions.create({
			model: MODEL.openai,
			max_tokens: 16,
			messages: [{ role: 'user', content: [{ type: 'text', text: 'compare' }, ...Array.from({ length: 4 }, () => ({ type: 'image_url' as const, image_url: { url, detail: 'low' as const } }))] }],
		})
		expect(r.choices[0]!.message.content).toBeTruthy()
	})
})
