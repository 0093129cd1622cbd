/**
 * The Vercel AI SDK's streaming transcription (`experimental_streamTranscribe` with `@ai-sdk/openai`) opens the
 * Realtime API with `?intent=transcription` (no model in the URL: it comes in the first `session.update`), which the
 * gateway does not relay. A WebSocket client cannot read the body of a refused handshake, so the SDK used to report
 * only "OpenAI realtime transcription error"; the refusal now comes as an OpenAI `error` event on an accepted socket,
 * which the SDK raises with its message, and nothing is sent upstream or charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { experimental_streamTranscribe } from 'ai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { type RealtimeMock, startRealtimeMock } from '../../mocks/openai/realtime'
import { priceList, usageOf } from './helpers'
import { connectRealtime } from './realtime-client'

let rt: RealtimeMock
let app: TestApp

beforeAll(async () => {
	rt = await startRealtimeMock({ apiKey: 'up-rt' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'rt', type: 'openai', base_url: rt.url, api_key: 'up-rt', models: ['gpt-realtime', 'gpt-realtime-whisper'] }],
			models: priceList([
				{ name: 'gpt-realtime', input_per_mtok: 4, output_per_mtok: 16 },
				{ name: 'gpt-realtime-whisper', input_per_mtok: 1, output_per_mtok: 1 },
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
	it("should fail with the gateway's reason, not a bare socket error, and call no upstream", async () => {
		const { key, accountId } = await app.account(1)
		const before = rt.handshakes.length
		const openai = createOpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const result = experimental_streamTranscribe({ model: openai.transcription('gpt-realtime-whisper'), audio: audio(), inputAudioFormat: { type: 'audio/pcm', rate: 24_000 } })
		let failure: Error | undefined
		try {
			for await (const _ of result.fullStream);
		} catch (e) {
			failure = e as Error
		}
		expect(failure?.message).toContain('Realtime transcription sessions (?intent=transcription) are not supported by this gateway')
		expect(failure?.message).toContain('POST /v1/audio/transcriptions')
		expect(rt.handshakes.length).toBe(before)
		expect(await usageOf(app, accountId)).toEqual([])
	})

	it('should send the refusal as an OpenAI error event naming the parameter, then close the socket (1008)', async () => {
		const { key } = await app.account(1)
		const c = await connectRealtime(`${app.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { key })
		const error = await c.next('error')
		expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_value', param: 'intent' })
		expect((await c.closed).code).toBe(1008)
	})

	it('should still refuse a missing or unknown key at the handshake (401), before any socket is accepted', async () => {
		const openai = createOpenAI({ apiKey: 'sk-not-a-key', baseURL: `${app.url}/v1` })
		const result = experimental_streamTranscribe({ model: openai.transcription('gpt-realtime-whisper'), audio: audio(), inputAudioFormat: { type: 'audio/pcm', rate: 24_000 } })
		await expect((async () => { for await (const _ of result.fullStream); })()).rejects.toThrow('OpenAI realtime transcription error')
	})
})
