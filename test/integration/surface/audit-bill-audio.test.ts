/**
 * Billing audit of the audio endpoints as an account owner checks it: what a transcription is charged equals what the
 * price list says for the usage the upstream reported, each token kind at its own price.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { micros, priceList, usageOf } from './helpers'

/** A PCM WAV file: 16 kHz mono 16-bit (32,000 bytes per second) of silence. */
function wav(seconds: number): Uint8Array<ArrayBuffer> {
	const data = Math.round(seconds * 32000)
	const out = new Uint8Array(44 + data)
	const v = new DataView(out.buffer)
	const ascii = (at: number, s: string) => [...s].forEach((c, i) => v.setUint8(at + i, c.charCodeAt(0)))
	ascii(0, 'RIFF')
	v.setUint32(4, 36 + data, true)
	ascii(8, 'WAVEfmt ')
	v.setUint32(16, 16, true)
	v.setUint16(20, 1, true)
	v.setUint16(22, 1, true)
	v.setUint32(24, 16000, true)
	v.setUint32(28, 32000, true)
	v.setUint16(32, 2, true)
	v.setUint16(34, 16, true)
	ascii(36, 'data')
	v.setUint32(40, data, true)
	return out
}

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-transcribe'] }],
			// OpenAI's price list for gpt-4o-transcribe: text input $2.50, audio input $6, output $10 per million tokens.
			models: priceList([{ name: 'gpt-4o-transcribe', input_per_mtok: 2.5, output_per_mtok: 10, audio_input_per_mtok: 6 }]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

describe('transcription billed by tokens', () => {
	it('should bill the audio tokens of input_token_details at audio_input_per_mtok', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const r = await openai.audio.transcriptions.create({ file: await toFile(wav(30), 'c.wav'), model: 'gpt-4o-transcribe' })
		expect(r.text).toBe('Transcript of c.wav.')
		// The mock reports 300 input tokens, all audio (input_token_details.audio_tokens), and 3 output tokens:
		// 300 × $6/M + 3 × $10/M = 1800 + 30 micro-USD.
		expect((r as { usage?: unknown }).usage).toMatchObject({ input_tokens: 300, input_token_details: { audio_tokens: 300, text_tokens: 0 }, output_tokens: 3 })
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ input_tokens: 300, output_tokens: 3, estimated: false })
		expect(micros(row!.cost)).toBe(1830)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 1830)
	})
})
