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
import { addGrounding, type Grounding, groundingSearches, newGrounding } from '../protocols/gemini/grounding'
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
	/** The answer's id, where the protocol's first frame gives it and a thread needs it (Anthropic `message_start`). */
	messageId(): string | undefined
}

const KEEP_BYTES = 512 * 1024

export function createFrameMeter(protocol: ProtocolName): FrameMeter {
	return protocol === 'openai-chat' ? new OpenAIChatMeter() : protocol === 'anthropic-messages' ? new AnthropicMeter() : new GeminiMeter()
}

/**
 * What every protocol's meter keeps. Classes rather than closures: a meter runs per stream, and its state as fields
 * costs one object where closures cost a function and a scope each.
 */
abstract class BaseMeter implements FrameMeter {
	protected reported: Partial<Usage> | undefined = undefined
	protected ending: StreamEnd = 'cut'
	protected id: string | undefined = undefined
	private readonly keptFrames: SseFrame[] = []
	private keptBytes = 0

	abstract onFrame(f: SseFrame): void

	protected keep(f: SseFrame) {
		if (this.keptBytes > KEEP_BYTES) return
		this.keptFrames.push(f)
		this.keptBytes += f.data.length
	}

	protected merge(u: Partial<Usage> | undefined) {
		if (u) this.reported = { ...this.reported, ...u }
	}

	usage() {
		return this.reported
	}

	end() {
		return this.ending
	}

	kept() {
		return this.keptFrames
	}

	messageId() {
		return this.id
	}
}

class OpenAIChatMeter extends BaseMeter {
	onFrame(f: SseFrame) {
		const d = f.data
		if (d === '[DONE]') {
			this.ending = this.ending === 'error' ? 'error' : 'ok'
			return
		}
		if (d.startsWith('{"error"')) this.ending = 'error'
		if (d.includes('"usage":{')) this.merge(openaiChat.usageOf(jsonOrUndefined(d)))
		else this.keep(f)
		// Some OpenAI-compatible vendors end without [DONE]; a finish_reason is as good.
		if (this.ending === 'cut' && d.includes('"finish_reason":"')) this.ending = 'ok'
	}
}

class AnthropicMeter extends BaseMeter {
	onFrame(f: SseFrame) {
		if (f.event === 'message_start') {
			const m = jsonOrUndefined(f.data) as { message?: { usage?: unknown; id?: unknown } } | undefined
			this.merge(decodePartialUsage(m?.message?.usage))
			if (typeof m?.message?.id === 'string') this.id = m.message.id
		} else if (f.event === 'message_delta') {
			const d = jsonOrUndefined(f.data) as { usage?: unknown; delta?: { stop_reason?: unknown } } | undefined
			this.merge(decodePartialUsage(d?.usage))
			// Some Anthropic-compatible vendors end after the stop reason without message_stop: the answer is whole.
			if (this.ending === 'cut' && d?.delta?.stop_reason != null) this.ending = 'ok'
		} else if (f.event === 'message_stop') this.ending = 'ok'
		else if (f.event === 'error') this.ending = 'error'
		if (f.event !== 'ping') this.keep(f)
	}
}

/**
 * Gemini repeats `usageMetadata` as it grows: only the last one counts, parsed once when usage is asked for. A chunk
 * reporting Google Search grounding (`groundingMetadata`, rare) is parsed for its queries (protocols/gemini/grounding.ts).
 */
class GeminiMeter extends BaseMeter {
	private lastUsage: string | undefined = undefined
	private grounding: Grounding | undefined = undefined

	onFrame(f: SseFrame) {
		const d = f.data
		if (d.includes('"groundingMetadata"')) this.grounding = addGrounding(this.grounding ?? newGrounding(), jsonOrUndefined(d))
		if (d.includes('"usageMetadata"')) this.lastUsage = d
		if (d.includes('"finishReason"')) this.ending = 'ok'
		if (d.startsWith('{"error"')) this.ending = 'error'
		this.keep(f)
	}

	override usage() {
		if (this.lastUsage) this.merge(gemini.usageOf(jsonOrUndefined(this.lastUsage) as never))
		this.lastUsage = undefined
		// The grounding of the whole stream: a chunk without usage may have reported some of its queries.
		const searches = this.grounding ? groundingSearches(this.grounding) : 0
		if (this.reported && searches > 0) this.reported = { ...this.reported, webSearches: searches }
		return this.reported
	}
}

/** Accumulates what a canonical event stream produced: usage and (bounded) output text for estimates. */
export function createEventMeter() {
	let usage: Partial<Usage> | undefined
	let text = ''
	// The thinking part of `text`: an estimate of the output says how much of it was reasoning, as vendors report it.
	let thinking = ''
	let finished = false
	let end: StreamEnd | undefined
	let malformed = false
	return {
		onEvent(e: StreamEvent) {
			switch (e.type) {
				case 'start':
					if (e.usage) usage = { ...usage, ...e.usage }
					break
				case 'usage':
					usage = { ...usage, ...e.usage }
					break
				case 'thinking_delta':
					if (thinking.length < KEEP_BYTES) thinking += e.text
					if (text.length < KEEP_BYTES) text += e.text
					break
				case 'text_delta':
				case 'json_delta':
					if (text.length < KEEP_BYTES) text += 'text' in e ? e.text : e.json
					break
				case 'finish':
					finished = true
					break
				case 'error':
					// Decoders end a body that stopped without its terminator with code `upstream_cut`.
					end = e.error.code === 'upstream_cut' ? 'cut' : 'error'
					// Decoders fail a frame they cannot read with `upstream_malformed`: recorded as such, as the fast path does.
					malformed ||= e.error.code === 'upstream_malformed'
					break
			}
		},
		usage: () => usage,
		text: () => text,
		reasoningText: () => thinking,
		end: (): StreamEnd => end ?? (finished ? 'ok' : 'cut'),
		malformed: () => malformed,
	}
}
