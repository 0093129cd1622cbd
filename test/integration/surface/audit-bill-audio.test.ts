/**
 * Billing audit of the audio endpoints as an account owner checks it: what a transcription or a speech is charged
 * equals what the price list says for the usage the upstream reported, each token kind at its own price.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { micros, priceList, usageOf } from './helpers'
import { wav } from '../../helpers/wav'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['gpt-4o-transcribe', 'gpt-4o-mini-tts'] }],
			models: priceList([
				// OpenAI's price list for gpt-4o-transcribe: text input $2.50, audio input $6, output $10 per million tokens.
				{ name: 'gpt-4o-transcribe', input_per_mtok: 2.5, output_per_mtok: 10, audio_input_per_mtok: 6 },
				// gpt-4o-mini-tts: text input $0.60, audio output $12 per million tokens.
				{ name: 'gpt-4o-mini-tts', input_per_mtok: 0.6, output_per_mtok: 0.6, audio_output_per_mtok: 12 },
			]),
		},
	})
}, 60_000)

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

describe('speech billed by tokens', () => {
	it('should bill the audio tokens of speech.audio.done at audio_output_per_mtok when the speech streams as events', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const res = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'hello there friend', voice: 'alloy', stream_format: 'sse' })
		const events = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; usage?: unknown })
		expect(events.at(-1)).toEqual({ type: 'speech.audio.done', usage: { input_tokens: 3, output_tokens: 15, total_tokens: 18 } })
		// 3 text tokens × $0.60/M + 15 audio tokens × $12/M = 1.8 + 180 micro-USD, one half-up rounding: 182.
		const rows = await usageOf(app, accountId)
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ endpoint: '/v1/audio/speech', input_tokens: 3, output_tokens: 15, estimated: false, end_reason: 'ok' })
		expect(micros(rows[0]!.cost)).toBe(182)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 182)
	})

	it('should bill the same audio tokens when the client asks for plain audio (the gateway asks the upstream for events)', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const res = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'hello there friend', voice: 'alloy' })
		expect(res.headers.get('content-type')).toBe('audio/mpeg')
		expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
		// Settled once the audio ended, just after its last bytes.
		for (let i = 0; i < 50 && (await usageOf(app, accountId)).length === 0; i++) await Bun.sleep(20)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/audio/speech', input_tokens: 3, output_tokens: 15, estimated: false })
		expect(micros(row!.cost)).toBe(182)
	})

	// Events relayed to the client that end without `speech.audio.done`: an error event tells it (the SDK raises it)
	// rather than a clean end of partial audio, and nothing is charged, as for any stream cut short.
	it('should end speech streamed as events with an error event when the upstream cuts it, charging nothing', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		oa.faultOnce = { kind: 'cut', afterChunks: 1 }
		const res = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'hello there friend', voice: 'alloy', stream_format: 'sse' })
		const events = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; error?: { code: string } })
		expect(events.map((e) => e.type)).not.toContain('speech.audio.done')
		expect(events.at(-1)).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'upstream_cut' } })
		for (let i = 0; i < 100 && (await usageOf(app, accountId)).length === 0; i++) await Bun.sleep(20)
		const rows = await usageOf(app, accountId)
		expect(rows[0]).toMatchObject({ endpoint: '/v1/audio/speech', end_reason: 'upstream_cut' })
		expect(micros(rows[0]!.cost)).toBe(0)
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})
})
