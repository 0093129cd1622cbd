/**
 * Upstream `chat.completion.chunk` SSE → canonical stream events.
 * OpenAI chunks have no blocks, so the block lifecycle is synthesised: a change of kind (reasoning → text →
 * tool call) or of tool-call `index` closes the open block and opens the next, with indexes 0, 1, 2… never
 * reused (WIRE-NOTES #5).
 *
 * Parallel tool calls: deltas are keyed by `tool_calls[].index`, and nothing orders one call's deltas before the next
 * call's (some upstreams interleave them 0, 1, 0, 1…), while a canonical block must be whole before the next opens.
 * The open call streams as it comes; a call that starts while the open call's arguments are not yet a whole JSON
 * object is held (its arguments collected per index) and follows, as a complete block, once the open call's object
 * closes, or at `finish_reason`, or when a non-tool delta arrives. Calls sent one after the other never wait.
 * @module
 */
import { citationsWithin } from '../../core/citations'
import { GatewayError } from '../../core/errors'
import type { BlockStart, StreamEvent } from '../../core/events'
import type { StopReason } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { unpackToolCallId } from '../../core/tool-ids'
import { newId } from '../../lib/ids'
import { type FrameDecoder, runMachine } from '../stream-machine'
import { isObject, str, type Json } from './guards'
import { feedJson, jsonDone, jsonProgress, type JsonProgress } from './json-progress'
import { decodeLogprobs } from './logprobs'
import { upstreamError } from './response'
import { decodeFinishReason, decodeUsage, withToolUse } from './usage'
import { decodeAnnotations } from './web-search'

type Open = { index: number; kind: 'text' | 'thinking' | 'tool_call'; tool?: number; signed?: boolean; refusal?: boolean; args?: JsonProgress }

/** A tool call that started while another call's arguments were still open: held until that call is done. */
type Held = { block: Extract<BlockStart, { kind: 'tool_call' }>; json: string; args: JsonProgress }

/** The chunk's entry for answer `choice` (one without `index` is the first), found without a filtered copy or a closure per chunk. */
function pickChoice(choices: unknown, choice: number): Json | undefined {
	if (!Array.isArray(choices)) return undefined
	for (const x of choices) if (isObject(x) && (x.index === choice || (x.index === undefined && choice === 0))) return x
	return undefined
}

const upstream = (message: string) => new GatewayError('upstream', message, { retryable: true })

/**
 * Decodes an OpenAI-compatible stream. `usage` (the chunk with `choices: []` that `include_usage` adds) is
 * emitted when it arrives; `finish` is held until `[DONE]` or the end of the body, because `finish_reason`
 * comes in a chunk BEFORE the usage chunk (WIRE-NOTES wire §12) and canonical `usage` must precede `finish`.
 * A body that ends with neither `[DONE]` nor a `finish_reason` was cut: it ends in an `error` event.
 * Per-request state lives in the machine's closure. `choice`: the answer read of a stream with several (`n` > 1),
 * whose chunks name theirs by `choices[].index`; the usage chunk is the whole stream's.
 */
export function streamDecoder(choice = 0): FrameDecoder {
	let started = false
	let next = 0
	let open: Open | undefined
	const closedTools = new Set<number>()
	/** Held calls by tool index, in the order they started. Non-empty only while the open block is an unfinished call. */
	const held = new Map<number, Held>()
	/**
	 * Tool-call identity beyond `index`: Ollama sends every call with `index: 0` (ollama/ollama#15457) and older Ollama
	 * and Gemini's OpenAI-compatible endpoint send none (ollama/ollama#7881), each call whole in its own chunk. A delta
	 * that names a function under an `id` other than the one already seen at its index is a new call: it gets a key of
	 * its own (negative, so it never meets a real index), and later deltas of that index go to it (`slot`); as vercel/ai
	 * PR #14277. The name is required because some servers change the id on a call's later argument deltas
	 * (poolsideai/pool#9): those carry no name and stay with their call.
	 */
	const callIds = new Map<number, string>()
	const slot = new Map<number, number>()
	let nextKey = -1
	let sawTool = false
	let sawRefusal = false
	let finish: StopReason | undefined
	let sawDone = false
	/** The chosen answer appeared in some chunk. */
	let seen = false
	let failure: GatewayError | undefined
	let over = false
	/** The message's content so far and where the open text block starts in it: annotation spans count in it, and quote it. */
	let said = ''
	let textFrom = 0

	const stopOpen = (out: StreamEvent[]) => {
		if (!open) return
		out.push({ type: 'block_stop', index: open.index })
		if (open.tool !== undefined) closedTools.add(open.tool)
		open = undefined
	}
	const openTool = (tool: number, block: Held['block'], json: string, args: JsonProgress, out: StreamEvent[]) => {
		open = { index: next++, kind: 'tool_call', tool, args }
		out.push({ type: 'block_start', index: open.index, block })
		if (json) out.push({ type: 'json_delta', index: open.index, json })
	}
	/** Closes the open block, then emits every held call as a whole block (the turn moved on, or ended). */
	const close = (out: StreamEvent[]) => {
		stopOpen(out)
		if (held.size === 0) return
		for (const [tool, h] of held) {
			openTool(tool, h.block, h.json, h.args, out)
			stopOpen(out)
		}
		held.clear()
	}
	/** The open call's arguments are whole: it closes, and the held calls follow, the first unfinished one left open. */
	const advance = (out: StreamEvent[]) => {
		stopOpen(out)
		for (const [tool, h] of held) {
			held.delete(tool)
			openTool(tool, h.block, h.json, h.args, out)
			if (!jsonDone(h.args)) return
			stopOpen(out)
		}
	}
	/**
	 * The open block of `kind`, opening one if needed; a signed thinking block is finished, so it is not reused. The
	 * `refusal` field's text is a text block of its own, marked so (a Responses client gets it as a refusal part).
	 */
	const ensure = (kind: 'text' | 'thinking', out: StreamEvent[], refusal = false): number => {
		if (open?.kind === kind && !open.signed && (open.refusal ?? false) === refusal) return open.index
		close(out)
		open = refusal ? { index: next++, kind, refusal } : { index: next++, kind }
		out.push({ type: 'block_start', index: open.index, block: refusal ? { kind: 'text', refusal } : { kind } })
		return open.index
	}

	const reasoning = (delta: Json, out: StreamEvent[]) => {
		// DeepSeek names it reasoning_content, OpenRouter and vLLM reasoning; OpenRouter repeats the same text in
		// reasoning_details, so details contribute text only when the plain field is absent.
		const text = str(delta.reasoning_content) || str(delta.reasoning)
		if (text) out.push({ type: 'thinking_delta', index: ensure('thinking', out), text })
		if (!Array.isArray(delta.reasoning_details)) return
		for (const d of delta.reasoning_details) {
			if (!isObject(d)) continue
			if (d.type === 'reasoning.encrypted') {
				const data = str(d.data)
				if (!data) continue
				close(out)
				const index = next++
				out.push({ type: 'block_start', index, block: { kind: 'redacted_thinking', data } }, { type: 'block_stop', index })
				continue
			}
			const detailText = str(d.text) || str(d.summary)
			if (!text && detailText) out.push({ type: 'thinking_delta', index: ensure('thinking', out), text: detailText })
			const signature = str(d.signature)
			if (signature) {
				out.push({ type: 'signature_delta', index: ensure('thinking', out), signature })
				if (open) open.signed = true
			}
		}
	}

	const toolCalls = (calls: unknown[], out: StreamEvent[]) => {
		calls.forEach((raw, position) => {
			if (failure || !isObject(raw)) return
			const wire = typeof raw.index === 'number' ? raw.index : position
			const fn = isObject(raw.function) ? raw.function : {}
			const rawId = str(raw.id)
			let tool = slot.get(wire) ?? wire
			const seen = callIds.get(tool)
			if (rawId && str(fn.name) && seen !== undefined && seen !== rawId) {
				tool = nextKey--
				slot.set(wire, tool)
			}
			// Arguments are a string fragment; a few compatibles send the whole object instead.
			const json = (isObject(fn.arguments) ? JSON.stringify(fn.arguments) : str(fn.arguments)) ?? ''
			if (open?.kind === 'tool_call' && open.tool === tool) {
				if (!json) return
				out.push({ type: 'json_delta', index: open.index, json })
				if (open.args && feedJson(open.args, json) && held.size > 0) advance(out)
				return
			}
			const h = held.get(tool)
			if (h) {
				h.json += json
				feedJson(h.args, json)
				return
			}
			if (closedTools.has(tool)) {
				// Whitespace after a whole object changes nothing; more arguments for a call already closed (its object was
				// whole, or other content came between) cannot be placed: failing beats corrupting its arguments.
				if (json.trim()) failure = upstream(`upstream sent more arguments for tool call ${tool} after it ended`)
				return
			}
			if (rawId) callIds.set(tool, rawId)
			const { id, signature } = unpackToolCallId(rawId || newId('call_'))
			const block: Held['block'] = signature ? { kind: 'tool_call', id, name: str(fn.name) ?? '', signature } : { kind: 'tool_call', id, name: str(fn.name) ?? '' }
			const args = jsonProgress()
			feedJson(args, json)
			sawTool = true
			// The open call may still get arguments: this one waits its turn (interleaved deltas).
			if (open?.args && !jsonDone(open.args)) held.set(tool, { block, json, args })
			else {
				close(out)
				openTool(tool, block, json, args, out)
			}
		})
	}

	const choiceDelta = (choice: Json, out: StreamEvent[]) => {
		const d = isObject(choice.delta) ? choice.delta : {}
		reasoning(d, out)
		const content = str(d.content)
		if (content) {
			const before = open
			const index = ensure('text', out)
			if (open !== before) textFrom = said.length
			said += content
			const logprobs = decodeLogprobs(choice.logprobs)
			out.push(logprobs ? { type: 'text_delta', index, text: content, logprobs } : { type: 'text_delta', index, text: content })
		}
		// A search model's `url_citation` annotations, spans into the whole message, come in a delta of their own after
		// the text (openai/openai-java#297): each goes to the text block it spans.
		if (Array.isArray(d.annotations) && open?.kind === 'text' && !open.refusal)
			for (const citation of citationsWithin(decodeAnnotations(d.annotations, said), textFrom, said.length - textFrom)) out.push({ type: 'citation', index: open.index, citation })
		const refusal = str(d.refusal)
		if (refusal) {
			sawRefusal = true
			out.push({ type: 'text_delta', index: ensure('text', out, true), text: refusal })
		}
		if (Array.isArray(d.tool_calls)) toolCalls(d.tool_calls, out)
		// Mistral's `error` finish reason (API ref FinishReason): generation failed, so the answer must not look finished.
		if (choice.finish_reason === 'error') failure = upstream('upstream ended the answer with finish_reason "error"')
		else if (typeof choice.finish_reason === 'string') {
			// The choice is complete: close its block now so consumers can flush it before the usage chunk.
			finish = decodeFinishReason(choice.finish_reason)
			close(out)
		}
	}

	const chunk = (c: Json, out: StreamEvent[]) => {
		if (c.error) {
			failure = upstreamError(c.error)
			return
		}
		const picked = pickChoice(c.choices, choice)
		if (picked) {
			seen = true
			choiceDelta(picked, out)
		}
		// Usage can share the finish_reason chunk (DeepSeek), so it goes after the choice closed its block. Groq puts the
		// stream's usage in `x_groq.usage` on that chunk instead (vercel/ai#1651).
		const usage = decodeUsage(c.usage, c.service_tier) ?? (isObject(c.x_groq) ? decodeUsage(c.x_groq.usage) : undefined)
		if (usage) out.push({ type: 'usage', usage })
	}

	/** The closing events: blocks closed, then `finish`, or `error` when the stream failed or was cut. */
	const tail = (out: StreamEvent[]) => {
		over = true
		// `[DONE]` with no chunk before it answered nothing, not even a finish_reason: a failure, not an empty answer.
		if (!started && sawDone && !failure) failure = new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' })
		if (!started) out.push({ type: 'start', id: newId('chatcmpl'), model: '' })
		close(out)
		// `upstream_cut` (as the other decoders) lets the relay record the request as cut rather than failed.
		if (!failure && !sawDone && finish === undefined) failure = new GatewayError('upstream', 'upstream stream ended before [DONE]', { code: 'upstream_cut', retryable: true })
		// An OpenAI-compatible server that ignores `n` streams one choice: the others are missing, not empty.
		if (!failure && !seen && choice > 0) failure = upstream(`upstream sent no choice ${choice} (does it support n?)`)
		if (failure) return void out.push({ type: 'error', error: failure })
		const reason = withToolUse(finish ?? 'end_turn', sawTool)
		out.push({ type: 'finish', reason: sawRefusal && reason === 'end_turn' ? 'refusal' : reason })
	}

	return {
		push(frame, out) {
			if (over) return
			if (frame.data === '[DONE]') {
				sawDone = true
				return tail(out)
			}
			if (frame.data.trim() === '') return
			let parsed: unknown
			try {
				parsed = JSON.parse(frame.data)
			} catch {
				failure = new GatewayError('upstream', 'upstream sent a malformed stream chunk', { retryable: true, code: 'upstream_malformed' })
			}
			if (!started) {
				started = true
				const c = isObject(parsed) ? parsed : {}
				const created = typeof c.created === 'number' ? c.created : undefined
				out.push({ type: 'start', id: str(c.id) || newId('chatcmpl'), model: str(c.model) ?? '', ...(created && { created }) })
			}
			if (!failure && isObject(parsed)) {
				if (frame.event === 'error') failure = upstreamError(parsed.error ?? parsed)
				else chunk(parsed, out)
			}
			if (failure) tail(out)
		},
		end(out) {
			if (!over) tail(out)
		},
		get done() {
			return over
		},
	}
}

export const decodeStream = (frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent> => runMachine(streamDecoder(), frames)
