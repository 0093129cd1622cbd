/**
 * ConverseStream's events → canonical stream events
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html). The events come as
 * AWS event-stream messages, re-framed by the Bedrock adapter as SSE frames (providers/bedrock-converse-stream.ts):
 * `event:` the message's `:event-type` (messageStart, contentBlockStart, contentBlockDelta, contentBlockStop,
 * messageStop, metadata), `data:` its payload, an event's members as JSON; an in-stream exception as
 * `event: exception` with `{exceptionType, message}`.
 *
 * Converse opens a block with contentBlockStart only for a tool call: a text or reasoning block begins with its first
 * delta, so blocks are opened here by the kind of delta and its `contentBlockIndex`, and numbered 0, 1, 2… in the
 * order they open, each closed before the next (WIRE-NOTES #5). The stop reason (messageStop) comes before the usage
 * (metadata): `finish` is held until the usage came, or the stream ended.
 * @module
 */
import { GatewayError, upstreamRateLimited } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import type { StopReason } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { newId } from '../../lib/ids'
import { type FrameDecoder, runMachine } from '../stream-machine'
import { converseSignature, decodeStopReason, decodeUsage, isObj, str } from './response'

type Kind = 'text' | 'thinking' | 'tool_call'
type Open = { wire: number; index: number; kind: Kind }

/**
 * An in-stream exception → GatewayError by what it means for a retry: throttling is the upstream's rate limit (429),
 * an unavailable service an overload (503), a model timeout 504; a validation error is about the request; the model's
 * own stream errors and internal errors may succeed on another try.
 * @example streamException('throttlingException', 'Too many tokens').status === 429
 */
export function streamException(type: string, message: string): GatewayError {
	switch (type) {
		case 'throttlingException':
			return upstreamRateLimited(message)
		case 'serviceUnavailableException':
			return new GatewayError('overloaded', message, { retryable: true, code: type })
		case 'modelTimeoutException':
			return new GatewayError('timeout', message, { retryable: true, code: type })
		case 'validationException':
			return new GatewayError('upstream', message, { retryable: false, code: type })
		default:
			return new GatewayError('upstream', message, { retryable: true, code: type || 'upstream_error' })
	}
}

const malformed = (what: string) => new GatewayError('upstream', `upstream sent an invalid ConverseStream event (${what})`, { retryable: true, code: 'upstream_malformed' })

/** Decodes a ConverseStream; per-stream state lives in the machine's closure. */
export function streamDecoder(): FrameDecoder {
	let started = false
	let next = 0
	let open: Open | undefined
	let sawTool = false
	let stop: StopReason | undefined
	let over = false

	const start = (out: StreamEvent[]) => {
		if (started) return
		started = true
		out.push({ type: 'start', id: newId('msg_'), model: '' })
	}
	const close = (out: StreamEvent[]) => {
		if (!open) return
		out.push({ type: 'block_stop', index: open.index })
		open = undefined
	}
	/** The open block for `wire` of `kind`, opened (the one before it closed) when it is not the open one. */
	const ensure = (wire: number, kind: Exclude<Kind, 'tool_call'>, out: StreamEvent[]): number => {
		if (open && open.wire === wire && open.kind === kind) return open.index
		close(out)
		open = { wire, index: next++, kind }
		out.push({ type: 'block_start', index: open.index, block: { kind } })
		return open.index
	}
	const fail = (error: GatewayError, out: StreamEvent[]) => {
		out.push({ type: 'error', error })
		over = true
	}

	const delta = (wire: number, d: Record<string, unknown>, out: StreamEvent[]) => {
		if (typeof d.text === 'string') {
			if (d.text) out.push({ type: 'text_delta', index: ensure(wire, 'text', out), text: d.text })
		} else if (isObj(d.toolUse)) {
			const json = str(d.toolUse.input) ?? ''
			if (open?.kind !== 'tool_call' || open.wire !== wire) return fail(malformed(`tool input for block ${wire}, which is not an open tool call`), out)
			if (json) out.push({ type: 'json_delta', index: open.index, json })
		} else if (isObj(d.reasoningContent)) {
			const r = d.reasoningContent
			if (typeof r.text === 'string' && r.text) out.push({ type: 'thinking_delta', index: ensure(wire, 'thinking', out), text: r.text })
			const signature = str(r.signature)
			if (signature) out.push({ type: 'signature_delta', index: ensure(wire, 'thinking', out), signature: converseSignature(signature) })
			const redacted = str(r.redactedContent)
			if (redacted) {
				close(out)
				const index = next++
				out.push({ type: 'block_start', index, block: { kind: 'redacted_thinking', data: converseSignature(redacted) } }, { type: 'block_stop', index })
			}
		}
		// citation, image and toolResult deltas have no place in the canonical stream: skipped, as in whole answers.
	}

	const event = (name: string | undefined, e: Record<string, unknown>, out: StreamEvent[]) => {
		const wire = typeof e.contentBlockIndex === 'number' ? e.contentBlockIndex : -1
		switch (name) {
			case 'messageStart':
				return start(out)
			case 'contentBlockStart': {
				start(out)
				const s = isObj(e.start) ? e.start : {}
				if (!isObj(s.toolUse)) return
				close(out)
				sawTool = true
				open = { wire, index: next++, kind: 'tool_call' }
				out.push({ type: 'block_start', index: open.index, block: { kind: 'tool_call', id: str(s.toolUse.toolUseId) ?? newId('tooluse_'), name: str(s.toolUse.name) ?? '' } })
				return
			}
			case 'contentBlockDelta':
				start(out)
				if (isObj(e.delta)) delta(wire, e.delta, out)
				return
			case 'contentBlockStop':
				if (open?.wire === wire) close(out)
				return
			case 'messageStop':
				start(out)
				close(out)
				stop = decodeStopReason(str(e.stopReason), sawTool)
				return
			case 'metadata': {
				const usage = decodeUsage(e.usage)
				if (usage) out.push({ type: 'usage', usage })
				if (stop) {
					out.push({ type: 'finish', reason: stop })
					over = true
				}
				return
			}
		}
	}

	return {
		push(frame: SseFrame, out: StreamEvent[]) {
			if (over) return
			let data: unknown
			try {
				data = JSON.parse(frame.data)
			} catch {
				return fail(malformed('not JSON'), out)
			}
			if (!isObj(data)) return fail(malformed('not an object'), out)
			if (frame.event === 'exception') return fail(streamException(str(data.exceptionType) ?? '', str(data.message) || 'upstream stream error'), out)
			event(frame.event, data, out)
		},
		end(out: StreamEvent[]) {
			if (over) return
			over = true
			// The stop reason came and the body ended without metadata: the answer is whole, its usage unknown.
			if (stop) return void out.push({ type: 'finish', reason: stop })
			out.push({ type: 'error', error: new GatewayError('upstream', 'upstream stream ended before messageStop', { code: 'upstream_cut', retryable: true }) })
		},
		get done() {
			return over
		},
	}
}

export const decodeStream = (frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent> => runMachine(streamDecoder(), frames)
