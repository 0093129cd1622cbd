/**
 * Upstream `chat.completion.chunk` SSE → canonical stream events.
 * OpenAI chunks have no blocks, so the block lifecycle is synthesised: a change of kind (reasoning → text →
 * tool call) or of tool-call `index` closes the open block and opens the next, with indexes 0, 1, 2… never
 * reused (WIRE-NOTES #5).
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import type { StopReason } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { unpackToolCallId } from '../../core/tool-ids'
import { newId } from '../../lib/ids'
import { type FrameDecoder, runMachine } from '../stream-machine'
import { isObject, str, type Json } from './guards'
import { upstreamError } from './response'
import { decodeFinishReason, decodeUsage, withToolUse } from './usage'

type Open = { index: number; kind: 'text' | 'thinking' | 'tool_call'; tool?: number; signed?: boolean }

const upstream = (message: string) => new GatewayError('upstream', message, { retryable: true })

/**
 * Decodes an OpenAI-compatible stream. `usage` (the chunk with `choices: []` that `include_usage` adds) is
 * emitted when it arrives; `finish` is held until `[DONE]` or the end of the body, because `finish_reason`
 * comes in a chunk BEFORE the usage chunk (WIRE-NOTES wire §12) and canonical `usage` must precede `finish`.
 * A body that ends with neither `[DONE]` nor a `finish_reason` was cut: it ends in an `error` event.
 * Per-request state lives in the machine's closure.
 */
export function streamDecoder(): FrameDecoder {
	let started = false
	let next = 0
	let open: Open | undefined
	const closedTools = new Set<number>()
	let sawTool = false
	let sawRefusal = false
	let finish: StopReason | undefined
	let sawDone = false
	let failure: GatewayError | undefined
	let over = false

	const close = (out: StreamEvent[]) => {
		if (!open) return
		out.push({ type: 'block_stop', index: open.index })
		if (open.tool !== undefined) closedTools.add(open.tool)
		open = undefined
	}
	/** The open block of `kind`, opening one if needed; a signed thinking block is finished, so it is not reused. */
	const ensure = (kind: 'text' | 'thinking', out: StreamEvent[]): number => {
		if (open?.kind === kind && !open.signed) return open.index
		close(out)
		open = { index: next++, kind }
		out.push({ type: 'block_start', index: open.index, block: { kind } })
		return open.index
	}

	const reasoning = (delta: Json, out: StreamEvent[]) => {
		// DeepSeek names it reasoning_content, OpenRouter and vLLM reasoning; OpenRouter repeats the same text in
		// reasoning_details, so details contribute text only when the plain field is absent.
		const text = str(delta.reasoning_content) || str(delta.reasoning)
		if (text) out.push({ type: 'thinking_delta', index: ensure('thinking', out), text })
		for (const d of Array.isArray(delta.reasoning_details) ? delta.reasoning_details : []) {
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
			const tool = typeof raw.index === 'number' ? raw.index : position
			const fn = isObject(raw.function) ? raw.function : {}
			if (open?.kind !== 'tool_call' || open.tool !== tool) {
				if (closedTools.has(tool)) {
					// The block model cannot reopen a closed call; failing beats corrupting its arguments.
					failure = upstream(`upstream interleaved tool-call deltas (index ${tool} resumed after another call)`)
					return
				}
				close(out)
				const { id, signature } = unpackToolCallId(str(raw.id) || newId('call_'))
				open = { index: next++, kind: 'tool_call', tool }
				const block = signature
					? { kind: 'tool_call' as const, id, name: str(fn.name) ?? '', signature }
					: { kind: 'tool_call' as const, id, name: str(fn.name) ?? '' }
				out.push({ type: 'block_start', index: open.index, block })
				sawTool = true
			}
			// Arguments are a string fragment; a few compatibles send the whole object instead.
			const json = isObject(fn.arguments) ? JSON.stringify(fn.arguments) : str(fn.arguments)
			if (json) out.push({ type: 'json_delta', index: open.index, json })
		})
	}

	const choiceDelta = (choice: Json, out: StreamEvent[]) => {
		const d = isObject(choice.delta) ? choice.delta : {}
		reasoning(d, out)
		const content = str(d.content)
		if (content) out.push({ type: 'text_delta', index: ensure('text', out), text: content })
		const refusal = str(d.refusal)
		if (refusal) {
			sawRefusal = true
			out.push({ type: 'text_delta', index: ensure('text', out), text: refusal })
		}
		if (Array.isArray(d.tool_calls)) toolCalls(d.tool_calls, out)
		if (typeof choice.finish_reason === 'string') {
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
		const choices = Array.isArray(c.choices) ? c.choices.filter(isObject) : []
		const choice = choices.find((x) => x.index === 0 || x.index === undefined)
		if (choice) choiceDelta(choice, out)
		// Usage can share the finish_reason chunk (DeepSeek), so it goes after the choice closed its block.
		const usage = decodeUsage(c.usage)
		if (usage) out.push({ type: 'usage', usage })
	}

	/** The closing events: blocks closed, then `finish`, or `error` when the stream failed or was cut. */
	const tail = (out: StreamEvent[]) => {
		over = true
		if (!started) out.push({ type: 'start', id: newId('chatcmpl'), model: '' })
		close(out)
		// `upstream_cut` (as the other decoders) lets the relay record the request as cut rather than failed.
		if (!failure && !sawDone && finish === undefined) failure = new GatewayError('upstream', 'upstream stream ended before [DONE]', { code: 'upstream_cut', retryable: true })
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
				failure = upstream('upstream sent a malformed stream chunk')
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
