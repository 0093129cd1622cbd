/**
 * The usage of a speech answer streamed as server-sent events (`stream_format: "sse"`): OpenAI ends it with a
 * `speech.audio.done` event whose `usage` counts the input's text tokens and the audio tokens it made
 * (platform.openai.com/docs/api-reference/audio/speech-audio-done-event). The relay feeds the bytes as they pass; only
 * the current line is kept (an audio delta's base64 until its newline), and only the done event is parsed.
 * @module
 */

export type SpeechUsage = { input: number; output: number }

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined)

/** A scanner of the event stream's bytes: `feed` each chunk, then `usage()` (undefined until the done event came). */
export function speechUsageScanner() {
	const decoder = new TextDecoder()
	let line = ''
	let usage: SpeechUsage | undefined
	const take = (l: string) => {
		if (!l.startsWith('data:') || !l.includes('"speech.audio.done"')) return
		try {
			const e = JSON.parse(l.slice(5)) as { type?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown } }
			const input = count(e.usage?.input_tokens)
			const output = count(e.usage?.output_tokens)
			if (e.type === 'speech.audio.done' && input !== undefined && output !== undefined) usage = { input, output }
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
		usage(): SpeechUsage | undefined {
			if (line) take(line)
			line = ''
			return usage
		},
	}
}
