/**
 * Metering of a Responses stream relayed verbatim: usage is read from the one terminal lifecycle event
 * (`response.completed`, `response.incomplete` or `response.failed` carry the final `usage`), so the relay parses
 * only that frame and forwards the rest as bytes. Frames are kept up to a bound so that a stream cut before its
 * terminal event can still be decoded and its output counted.
 * @module
 */
import type { Usage } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { openaiResponses } from '../../protocols/openai-responses'
import { countText } from '../../relay/estimate'
import type { StreamEnd } from '../../relay/meter'

const KEEP_BYTES = 512 * 1024
const TYPE = /"type":\s*"([^"]+)"/

/** Lifecycle events that carry a whole `response` object (and so its `model`). */
export const LIFECYCLE = new Set(['response.created', 'response.queued', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed'])

/** A frame's event type: its `event:` name, else the `type` near the start of its data. */
export const eventType = (f: SseFrame): string => f.event ?? TYPE.exec(f.data.slice(0, 120))?.[1] ?? ''

/** Whether a frame tells of a failure (so, before any content, the attempt may fail over). */
export const isFailure = (f: SseFrame): boolean => {
	const t = eventType(f)
	return t === 'error' || t === 'response.failed'
}

export function createResponsesMeter() {
	let usage: Usage | undefined
	let final: unknown
	let end: StreamEnd = 'cut'
	const kept: SseFrame[] = []
	let keptBytes = 0
	return {
		onFrame(f: SseFrame) {
			const type = eventType(f)
			if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
				try {
					const e = JSON.parse(f.data) as { response?: unknown }
					usage = openaiResponses.usageOf(e.response) ?? usage
					final = e.response
				} catch {
					// unreadable terminal frame: the output is counted from the kept frames
				}
				end = type === 'response.failed' ? 'error' : 'ok'
			} else if (type === 'error') end = 'error'
			if (keptBytes <= KEEP_BYTES) {
				kept.push(f)
				keptBytes += f.data.length
			}
		},
		usage: () => usage,
		/** The terminal event's Response object (its output items), once it passed. */
		final: () => final,
		end: () => end,
		/** Output tokens of the kept frames, decoded and counted locally (only when the upstream reported none). */
		async countOutput(): Promise<number> {
			let text = ''
			async function* replay() {
				yield* kept
			}
			try {
				for await (const e of openaiResponses.decodeStream(replay()))
					if (e.type === 'text_delta' || e.type === 'thinking_delta') text += e.text
					else if (e.type === 'json_delta') text += e.json
			} catch {
				// partial frames: count what decoded
			}
			return countText(text)
		},
	}
}
