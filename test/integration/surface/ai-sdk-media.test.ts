/**
 * The media endpoints as the Vercel AI SDK calls them (`embedMany`, `generateImage`, `transcribe`, `generateSpeech`
 * with `@ai-sdk/openai` on `{root}/v1` and `@ai-sdk/google` on `{root}/v1beta`): what each SDK reads from the answer,
 * and the bill in the price unit of each model, read back through the management API's usage rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { createOpenAI } from '@ai-sdk/openai'
import { embedMany, generateImage, generateSpeech, transcribe } from 'ai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { wav } from '../../helpers/wav'
import { startGeminiMock, startOpenAIMock, vector, type VendorMock } from '../../mocks'
import { PNG_1X1 } from '../../mocks/openai/media'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let ge: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	ge = await startGeminiMock({ apiKey: 'up-ge' })
	app = await startTestApp({
		config: {
			channels: [
				{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['text-embedding-3-small', 'dall-e-3', 'gpt-image-1', 'whisper-1', 'gpt-4o-transcribe', 'tts-1'] },
				{ name: 'ge', type: 'gemini', base_url: ge.url, api_key: 'up-ge', models: ['gemini-embedding-001'] },
			],
			models: priceList([
				// $1000 per million tokens = 1000 micro-USD per token, so every token shows in the balance.
				{ name: 'text-embedding-3-small', input_per_mtok: 1000 },
				{ name: 'gemini-embedding-001', input_per_mtok: 1000 },
				{ name: 'dall-e-3', per_image_1024x1024_standard: 0.04, per_image: 0.08 },
				{ name: 'gpt-image-1', input_per_mtok: 5, output_per_mtok: 40 },
				{ name: 'whisper-1', per_minute: 0.006 },
				{ name: 'gpt-4o-transcribe', input_per_mtok: 2.5, output_per_mtok: 10, audio_input_per_mtok: 6 },
				{ name: 'tts-1', per_mchar: 15 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
	await ge.stop()
})

const openai = (key: string) => createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
const google = (key: string) => createGoogleGenerativeAI({ apiKey: key, baseURL: `${app.url}/v1beta` })

describe('Vercel AI SDK media calls', () => {
	it('should embed many values through @ai-sdk/openai with dimensions, billed per token', async () => {
		const { key, accountId } = await app.account(1)
		const r = await embedMany({ model: openai(key).embedding('text-embedding-3-small'), values: ['one two', 'three'], providerOptions: { openai: { dimensions: 4 } } })
		// The SDK asks for floats: the vectors arrive as the upstream made them.
		expect(r.embeddings).toEqual([vector('one two', 4), vector('three', 4)])
		expect(r.usage.tokens).toBe(3)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 3000)
	})

	it('should embed many values through @ai-sdk/google (batchEmbedContents), billed per counted token', async () => {
		const { key, accountId } = await app.account(1)
		ge.reset()
		const r = await embedMany({ model: google(key).embedding('gemini-embedding-001'), values: ['one two', 'three'], providerOptions: { google: { outputDimensionality: 4, taskType: 'RETRIEVAL_QUERY' } } })
		expect(r.embeddings).toHaveLength(2)
		expect(r.embeddings.every((e) => e.length === 4)).toBe(true)
		expect(ge.requests[0]!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents')
		expect(ge.requests[0]!.headers['x-goog-api-key']).toBe('up-ge')
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ model: 'gemini-embedding-001', input_tokens: 3, cost: 0.003, estimated: true })
	})

	it('should generate a dall-e-3 image (b64_json) priced per image at its default size and quality', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const r = await generateImage({ model: openai(key).image('dall-e-3'), prompt: 'a red fox' })
		expect(r.images).toHaveLength(1)
		expect(r.images[0]!.uint8Array).toEqual(new Uint8Array(Buffer.from(PNG_1X1, 'base64')))
		expect(oa.requests[0]!.body).toMatchObject({ model: 'dall-e-3', response_format: 'b64_json' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 40_000)
	})

	it("should generate gpt-image-1 images and bill the usage tokens the SDK reads", async () => {
		const { key, accountId } = await app.account(1)
		const r = await generateImage({ model: openai(key).image('gpt-image-1'), prompt: 'a red fox', n: 2 })
		expect(r.images).toHaveLength(2)
		expect(r.usage).toMatchObject({ inputTokens: 3, outputTokens: 544 })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - (3 * 5 + 544 * 40))
	})

	it('should edit images the SDK sends as Blobs (Bun writes no file name for them) as files named "blob", of the PNG type their parts declare', async () => {
		const { key, accountId } = await app.account(1)
		oa.reset()
		const png = new Uint8Array(Buffer.from(PNG_1X1, 'base64'))
		const r = await generateImage({ model: openai(key).image('gpt-image-1'), prompt: { images: [png, png], text: 'add a hat' } })
		expect(r.images).toHaveLength(1)
		const sent = oa.requests[0]!.form!
		const images = [...sent.getAll('image'), ...sent.getAll('image[]')] as File[]
		expect(images.map((f) => [f.name, f.type, f.size])).toEqual([
			['blob', 'image/png', png.length],
			['blob', 'image/png', png.length],
		])
		expect(micros(await app.balance(accountId))).toBeLessThan(1_000_000)
	})

	it('should transcribe with whisper-1 (verbose_json segments) billed per minute, and gpt-4o-transcribe by its audio tokens', async () => {
		const { key, accountId } = await app.account(1)
		const w = await transcribe({ model: openai(key).transcription('whisper-1'), audio: wav(30) })
		expect(w).toMatchObject({ text: 'Transcript of audio.wav.', durationInSeconds: 30, segments: [{ startSecond: 0, endSecond: 30 }] })
		const g = await transcribe({ model: openai(key).transcription('gpt-4o-transcribe'), audio: wav(30) })
		expect(g.text).toBe('Transcript of audio.wav.')
		const rows = await usageOf(app, accountId)
		// 30 s at $0.006/min; then 300 audio input tokens at $6/M and 3 output tokens at $10/M.
		expect(rows.map((r) => [r.model, micros(r.cost), r.estimated])).toEqual([
			['whisper-1', 3000, false],
			['gpt-4o-transcribe', 300 * 6 + 3 * 10, false],
		])
	})

	it('should generate speech with tts-1 as the asked format, billed per character', async () => {
		const { key, accountId } = await app.account(1)
		const r = await generateSpeech({ model: openai(key).speech('tts-1'), text: 'hello there world', voice: 'alloy', outputFormat: 'wav' })
		expect(r.audio.mediaType).toBe('audio/wav')
		expect(r.audio.uint8Array.byteLength).toBeGreaterThan(44)
		// 17 characters at $15 per million characters.
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 255)
	})
})
