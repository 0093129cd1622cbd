/**
 * The Vercel AI SDK's Gemini media models through the gateway (`@ai-sdk/google` on `{root}/v1beta`): `generateImage`
 * with a Gemini image model and `generateSpeech` with a Gemini TTS model both call generateContent with
 * `responseModalities` IMAGE or AUDIO; the answer's `inlineData` must reach the SDK as sent, and its image or audio
 * tokens be billed at `image_output_per_mtok` / `audio_output_per_mtok`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { generateImage, generateSpeech } from 'ai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startGeminiMock, type VendorMock } from '../../mocks'
import { imageTokens } from '../../mocks/gemini/image-out'
import { TTS_BYTES_PER_WORD, ttsTokens } from '../../mocks/gemini/modalities'
import { IMAGE_BYTES } from '../../mocks/gemini/predict'
import { micros, priceList, usageOf } from '../surface/helpers'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let ge: VendorMock
let app: TestApp

beforeAll(async () => {
	ge = await startGeminiMock({ apiKey: 'up-ge' })
	app = await startTestApp({
		config: {
			channels: [
				{
					name: 'ge',
					type: 'gemini',
					base_url: ge.url,
					api_key: 'up-ge',
					models: ['gemini-image-m', 'gemini-tts-m'],
					model_map: { 'gemini-image-m': 'gemini-2.5-flash-image', 'gemini-tts-m': 'gemini-2.5-flash-preview-tts' },
				},
			],
			models: priceList([
				// USD per million tokens: 1 micro-USD per input token, 30 per image token, 10 per audio token.
				{ name: 'gemini-image-m', input_per_mtok: 1, output_per_mtok: 2, image_output_per_mtok: 30 },
				{ name: 'gemini-tts-m', input_per_mtok: 1, output_per_mtok: 2, audio_output_per_mtok: 10 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await ge.stop()
})

const google = (key: string) => createGoogleGenerativeAI({ apiKey: key, baseURL: `${app.url}/v1beta` })

describe('Vercel AI SDK Gemini media models', () => {
	it('should generate an image with a Gemini image model, billed by its image tokens', async () => {
		const { key, accountId } = await app.account(1)
		const r = await generateImage({ model: google(key).image('gemini-image-m'), prompt: 'a red cat' })
		expect(r.images.map((i) => [i.mediaType, i.base64])).toEqual([['image/png', Buffer.from(IMAGE_BYTES).toString('base64')]])
		const sent = ge.requests.at(-1)!
		expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash-image:generateContent')
		expect((sent.body as { generationConfig: unknown }).generationConfig).toMatchObject({ responseModalities: ['IMAGE'] })
		// 3 prompt words; the image alone (no TEXT asked), 1,290 tokens on Gemini 2.5 Flash Image.
		const image = imageTokens('gemini-2.5-flash-image', undefined)
		const [row] = await usageOf(app, accountId)
		expect([row!.input_tokens, row!.output_tokens]).toEqual([3, image])
		expect(micros(row!.cost)).toBe(3 * 1 + image * 30)
	})

	it('should generate speech with a Gemini TTS model as WAV, billed by its audio tokens', async () => {
		const { key, accountId } = await app.account(1)
		const r = await generateSpeech({ model: google(key).speech('gemini-tts-m'), text: 'hello there world' })
		// The SDK wraps Gemini's raw PCM in a 44-byte WAV header.
		expect(r.audio.mediaType).toBe('audio/wav')
		expect(r.audio.uint8Array.length).toBe(44 + 3 * TTS_BYTES_PER_WORD)
		const [row] = await usageOf(app, accountId)
		expect([row!.input_tokens, row!.output_tokens]).toEqual([3, ttsTokens(3)])
		expect(micros(row!.cost)).toBe(3 * 1 + ttsTokens(3) * 10)
	})
})
