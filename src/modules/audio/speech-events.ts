/**
 * Plain audio out of OpenAI's speech events: a speech asked upstream with `stream_format: "sse"` answers
 * `speech.audio.delta` events whose `audio` is base64 of the requested `response_format`, then `speech.audio.done`
 * with the usage (platform.openai.com/docs/api-reference/audio/speech-audio-delta-event, …/speech-audio-done-event).
 * The gateway asks for them when the client wants plain audio of a model priced by tokens, since only the done event
 * tells the audio tokens it is charged; the client gets the decoded bytes, each delta as it arrives.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { SseParser } from '../../core/sse'
import { unreadableAnswer } from '../../relay/upstream-fetch'
import type { SpeechUsage } from './speech-usage'

/** The content type OpenAI answers each speech `response_format` with (mp3, its default, is audio/mpeg). */
export const SPEECH_CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' }

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined)

const broken = (message: string) => new GatewayError('upstream', message, { retryable: true, code: 'upstream_malformed' })

/**
 * The audio of a speech event stream, as a pull-based byte stream (nothing is read ahead of the client), and the
 * usage of its done event once it came. A stream that ends before `speech.audio.done`, or carries an `error` event,
 * fails the audio: its end is missing, so the relay records the cut (and charges nothing) instead of passing a
 * truncated file off as whole. Cancelling the audio cancels the upstream body.
 * @example const { audio, usage } = speechAudio(res.body!); await new Response(audio).arrayBuffer(); usage()?.output
 */
export function speechAudio(body: ReadableStream<Uint8Array>): { audio: ReadableStream<Uint8Array>; usage(): SpeechUsage | undefined } {
	const reader = body.getReader()
	const decoder = new TextDecoder()
	const parser = new SseParser()
	let usage: SpeechUsage | undefined
	let done = false
	/** Queues the audio bytes of the frames and says whether there were any; throws on an error event. */
	const take = (frames: { data: string }[], c: ReadableStreamDefaultController<Uint8Array>): boolean => {
		let queued = false
		for (const f of frames) {
			let e: { type?: unknown; audio?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown }; error?: { message?: unknown } }
			try {
				e = JSON.parse(f.data)
			} catch {
				throw broken('upstream sent a malformed speech event')
			}
			if (e?.type === 'speech.audio.delta' && typeof e.audio === 'string') {
				const bytes = Buffer.from(e.audio, 'base64')
				if (bytes.byteLength) {
					c.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
					queued = true
				}
			} else if (e?.type === 'speech.audio.done') {
				done = true
				const input = count(e.usage?.input_tokens)
				const output = count(e.usage?.output_tokens)
				if (input !== undefined && output !== undefined) usage = { input, output }
			} else if (e?.type === 'error' || e?.error) {
				throw new GatewayError('upstream', typeof e.error?.message === 'string' ? e.error.message : 'upstream failed the speech', { retryable: true, code: 'upstream_stream_error' })
			}
		}
		return queued
	}
	const audio = new ReadableStream<Uint8Array>(
		{
			// One pull ends with bytes queued, the end, or an error: a chunk holding only part of an event queues nothing,
			// and a pull that queued nothing would not be called again while the client waits.
			async pull(c) {
				try {
					for (;;) {
						let r: Awaited<ReturnType<typeof reader.read>>
						try {
							r = await reader.read()
						} catch (e) {
							throw unreadableAnswer(e)
						}
						if (r.done) {
							take(parser.end(decoder.decode()), c)
							if (!done) throw new GatewayError('upstream', 'the upstream ended the speech before speech.audio.done', { retryable: true, code: 'upstream_cut' })
							c.close()
							return
						}
						if (take(parser.push(decoder.decode(r.value, { stream: true })), c)) return
					}
				} catch (e) {
					void reader.cancel().catch(() => {})
					c.error(e)
				}
			},
			cancel(reason) {
				return reader.cancel(reason)
			},
		},
		{ highWaterMark: 0 },
	)
	return { audio, usage: () => usage }
}
