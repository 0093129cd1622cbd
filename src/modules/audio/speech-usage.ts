/**
 * The closing event of an OpenAI audio answer streamed as server-sent events: speech (`stream_format: "sse"`) ends
 * with `speech.audio.done`, whose `usage` counts the input's text tokens and the audio tokens it made
 * (platform.openai.com/docs/api-reference/audio/speech-audio-done-event); a streamed transcription (`stream=true`)
 * ends with `transcript.text.done`, whose `usage` counts the audio input and text output tokens
 * (platform.openai.com/docs/api-reference/audio/transcript-text-done-event). The relay feeds the bytes as they pass;
 * only the current line is kept (an audio delta's base64 until its newline), and only the done event is parsed.
 * @module
 */

import { formatSse } from '../../core/sse'

export type SpeechUsage = { input: number; output: number }

/**
 * The error event that ends an event stream the upstream ended without its done event: the client would otherwise
 * read a clean end and keep a partial transcript or speech (the SDK raises an event carrying `error`), as the images
 * API's streams end (modules/images/stream.ts).
 */
export const cutEvent = (message: string): Uint8Array =>
	new TextEncoder().encode(formatSse({ event: 'error', data: JSON.stringify({ type: 'error', error: { type: 'api_error', code: 'upstream_cut', message, param: null } }) }))

/** A count as the usage states it: a non-negative safe integer, else undefined. */
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined)

/**
 * A scanner for the data event of type `type`: `feed` each chunk, then `event()` (undefined until it came).
 * @example const s = doneEventScanner('transcript.text.done'); s.feed(bytes); s.event()?.usage
 */
export function doneEventScanner(type: string) {
	const decoder = new TextDecoder()
	const marker = `"${type}"`
	let line = ''
	let found: Record<string, unknown> | undefined
	const take = (l: string) => {
		if (!l.startsWith('data:') || !l.includes(marker)) return
		try {
			const e = JSON.parse(l.slice(5)) as Record<string, unknown> | null
			if (e && e.type === type) found = e
		} catch {
			// not the event it looked like
		}
	}
	return {
		feed(chunk: Uint8Array) {
			const lines = (line + decoder.decode(chunk, { stream: true })).split(/\r?\n/)
			line = lines.pop() ?? ''
			for (const l of lines) take(l)
		},
		event(): Record<string, unknown> | undefined {
			if (line) take(line)
			line = ''
			return found
		},
	}
}

/** A scanner of a speech event stream's bytes: `feed` each chunk, then `usage()` (undefined until the done event came). */
export function speechUsageScanner() {
	const scanner = doneEventScanner('speech.audio.done')
	return {
		feed: scanner.feed,
		/** Whether the done event came. */
		done: (): boolean => scanner.event() !== undefined,
		usage(): SpeechUsage | undefined {
			const u = scanner.event()?.usage as { input_tokens?: unknown; output_tokens?: unknown } | undefined
			const input = count(u?.input_tokens)
			const output = count(u?.output_tokens)
			return input !== undefined && output !== undefined ? { input, output } : undefined
		},
	}
}
