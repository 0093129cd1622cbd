/**
 * The Vercel AI SDK's streaming transcription (`experimental_streamTranscribe` with `@ai-sdk/openai`) opens the
 * Realtime API with `?intent=transcription` (no model in the URL: it comes in the first `session.update`, with the
 * audio right behind it), commits the buffer and ends at `conversation.item.input_audio_transcription.completed`.
 * Relayed and billed from that event's usage; a model the gateway cannot serve comes back as an `error` event, which
 * the SDK raises with its message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { experimental_streamTranscribe } from 'ai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type RealtimeMock, startRealtimeMock, transcriptionUsage } from '../../mocks/openai/realtime'
import { micros, priceList, usageOf } from './helpers'
import { eventually } from './realtime-client'

let rt: RealtimeMock
let app: TestApp

beforeAll(async () => {
	rt = await startRealtimeMock({ apiKey: 'up-rt' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'rt', type: 'openai', base_url: rt.url, api_key: 'up-rt', models: ['gpt-realtime', 'gpt-realtime-whisper'] }],
			models: priceList([
				{ name: 'gpt-realtime', input_per_mtok: 4, output_per_mtok: 16 },
				{ name: 'gpt-realtime-whisper', input_per_mtok: 1, output_per_mtok: 8, audio_input_per_mtok: 5 },
			]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await rt.stop()
})

/** One second of silence as 24 kHz PCM16, in two chunks, as a microphone would stream it. */
const audio = () =>
	new ReadableStream<Uint8Array>({
		start(c) {
			c.enqueue(new Uint8Array(24_000))
			c.enqueue(new Uint8Array(24_000))
			c.close()
		},
	})

describe('AI SDK streaming transcription (Realtime ?intent=transcription)', () => {
	it('should stream the transcript through the gateway and bill its usage at the model\'s audio prices', async () => {
		const { key, accountId } = await app.account(1)
		const before = rt.handshakes.length
		const openai = createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const result = experimental_streamTranscribe({ model: openai.transcription('gpt-realtime-whisper'), audio: audio(), inputAudioFormat: { type: 'audio/pcm', rate: 24_000 } })
		const parts: string[] = []
		for await (const p of result.fullStream) parts.push(p.type === 'transcript-delta' ? `delta:${p.delta}` : p.type === 'transcript-final' ? `final:${p.text}` : p.type)
		expect(parts).toContain('delta:Hello')
		expect(parts).toContain('final:Hello world.')
		expect(new URL(rt.handshakes[before]!.url).searchParams.get('intent')).toBe('transcription')
		// 1 s of audio: 10 audio tokens at $5 and 4 output tokens at $8 per million.
		const usage = transcriptionUsage('gpt-realtime-whisper', 48_000)
		expect(usage).toMatchObject({ input_tokens: 10, output_tokens: 4 })
		const cost = 10 * 5 + 4 * 8
		await eventually(async () => expect(micros(await app.balance(accountId))).toBe(1_000_000 - cost))
		const rows = await usageOf(app, accountId)
		expect(rows.map((r) => [r.model, r.endpoint, r.cost, r.input_tokens, r.output_tokens, r.estimated])).toEqual([['gpt-realtime-whisper', '/v1/realtime', cost / 1e6, 10, 4, false]])
	})

	it("should fail with the gateway's reason for a model it does not serve, and call no upstream", async () => {
		const { key, accountId } = await app.account(1)
		const before = rt.handshakes.length
		const openai = createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const result = experimental_streamTranscribe({ model: openai.transcription('gpt-live-transcribe'), audio: audio(), inputAudioFormat: { type: 'audio/pcm', rate: 24_000 } })
		let failure: Error | undefined
		try {
			for await (const _ of result.fullStream);
		} catch (e) {
			failure = e as Error
		}
		expect(failure?.message).toContain('The model "gpt-live-transcribe" does not exist or is not served here')
		expect(rt.handshakes.length).toBe(before)
		expect(await usageOf(app, accountId)).toEqual([])
		expect(micros(await app.balance(accountId))).toBe(1_000_000)
	})

	it('should still refuse a missing or unknown key at the handshake (401), before any socket is accepted', async () => {
		const openai = createOpenAI({ apiKey: 'sk-not-a-key', baseURL: `${app.url}/v1` })
		const result = experimental_streamTranscribe({ model: openai.transcription('gpt-realtime-whisper'), audio: audio(), inputAudioFormat: { type: 'audio/pcm', rate: 24_000 } })
		await expect((async () => { for await (const _ of result.fullStream); })()).rejects.toThrow('OpenAI realtime transcription error')
	})
})
