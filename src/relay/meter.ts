/**
 * Fast-path metering: reads only what billing needs out of a stream relayed verbatim. Each protocol's meter looks
 * at frames with cheap string checks and JSON-parses only the few that carry usage, so the relay does not decode
 * every chunk it forwards (issue: "the fast path must not parse JSON bodies it does not need to").
 * Raw frames are kept up to a bound so that, when the upstream never reports usage (a cut stream), the output can
 * still be decoded and counted.
 * @module
 */
import type { StreamEvent } from '../core/events'
import { jsonOrUndefined } from '../core/json'
import type { Usage } from '../core/ir'
import type { SseFrame } from '../core/sse'
import { decodePartialUsage } from '../protocols/anthropic-messages/usage'
import type { ProtocolName } from '../protocols/codec'
import { gemini } from '../protocols/gemini'
import { openaiChat } from '../protocols/openai-chat'

export type StreamEnd = 'ok' | 'error' | 'cut'

export type FrameMeter = {
	onFrame(f: SseFrame): void
	/** Usage reported by the upstream, if any. */
	usage(): Partial<Usage> | undefined
	/** Whether the protocol's terminal frame was seen, an error frame, or neither. */
	end(): StreamEnd
	/** Frames kept for counting output when usage is missing (bounded). */
	kept(): SseFrame[]
}

const KEEP_BYTES = 512 * 1024

export function createFrameMeter(protocol: ProtocolName): FrameMeter {
	let usage: Partial<Usage> | undefined
	let end: StreamEnd = 'cut'
	let lastGeminiUsage: string | undefined
	const kept: SseFrame[] = []
	let keptBytes = 0
	const keep = (f: SseFrame) => {
		if (keptBytes > KEEP_BYTES) return
		kept.push(f)
		keptBytes += f.data.length
	}
	const merge = (u: Partial<Usage> | undefined) => {
		if (u) usage = { ...usage, ...u }
	}

	const onFrame: (f: SseFrame) => void =
		protocol === 'openai-chat'
			? (f) => {
					const d = f.data
					if (d === '[DONE]') return void (end = end === 'error' ? 'error' : 'ok')
					if (d.startsWith('{"error"')) end = 'error'
					if (d.includes('"usage":{')) merge(openaiChat.usageOf(jsonOrUndefined(d)))
					else keep(f)
					// Some OpenAI-compatible vendors end without [DONE]; a finish_reason is as good.
					if (end === 'cut' && d.includes('"finish_reason":"')) end = 'ok'
				}
			: protocol === 'anthropic-messages'
				? (f) => {
						if (f.event === 'message_start') {
							const m = jsonOrUndefined(f.data) as { message?: { usage?: unknown } } | undefined
							merge(decodePartialUsage(m?.message?.usage))
						} else if (f.event === 'message_delta') merge(decodePartialUsage((jsonOrUndefined(f.data) as { usage?: unknown } | undefined)?.usage))
						else if (f.event === 'message_stop') end = 'ok'
						else if (f.event === 'error') end = 'error'
						if (f.event !== 'ping') keep(f)
					}
				: (f) => {
						const d = f.data
						if (d.includes('"usageMetadata"')) lastGeminiUsage = d
						if (d.includes('"finishReason"')) end = 'ok'
						if (d.startsWith('{"error"')) end = 'error'
						keep(f)
					}

	return {
		onFrame,
		usage() {
			if (lastGeminiUsage) merge(gemini.usageOf(jsonOrUndefined(lastGeminiUsage) as never))
			lastGeminiUsage = undefined
			return usage
		},
		end: () => end,
		kept: () => kept,
	}
}

/** Accumulates what a canonical event stream produced: usage and (bounded) output text for estimates. */
export function createEventMeter() {
	let usage: Partial<Usage> | undefined
	let text = ''
	let finished = false
	let end: StreamEnd | undefined
	return {
		onEvent(e: StreamEvent) {
			switch (e.type) {
				case 'start':
					if (e.usage) usage = { ...usage, ...e.usage }
					break
				case 'usage':
					usage = { ...usage, ...e.usage }
					break
				case 'text_delta':
				case 'thinking_delta':
				case 'json_delta':
					if (text.length < KEEP_BYTES) text += 'text' in e ? e.text : e.json
					break
				case 'finish':
					finished = true
					break
				case 'error':
					// Decoders end a body that stopped without its terminator with code `upstream_cut`.
					end = e.error.code === 'upstream_cut' ? 'cut' : 'error'
					break
			}
		},
		usage: () => usage,
		text: () => text,
		end: (): StreamEnd => end ?? (finished ? 'ok' : 'cut'),
	}
}
