/**
 * Anthropic SSE → canonical stream events (upstream side). The documented order is message_start → blocks
 * (content_block_start → content_block_delta* → content_block_stop) → message_delta → message_stop, with `ping`
 * anywhere (https://docs.anthropic.com/en/api/messages-streaming; WIRE-NOTES wire §1). The output is re-indexed so
 * that blocks without a canonical form (server tools) and empty text blocks leave no gaps.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import type { StopReason, Usage } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { unpackToolCallId } from '../../core/tool-ids'
import { newId } from '../../lib/ids'
import { isObject, type Json } from './check'
import { upstreamError } from './error'
import { decodeMcpResultContent } from './mcp-blocks'
import { decodePartialUsage, decodeStopReason } from './usage'

export { encodeStream } from './stream-encode'

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/**
 * Decodes upstream frames incrementally. Ends with `finish` after `message_stop`, or with an `error` event when the
 * upstream sent one, sent invalid JSON, or stopped before `message_stop` (a cut stream).
 */
export async function* decodeStream(frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent> {
	let started = false
	let next = 0 // next canonical block index
	let open: { upstream: number; index: number } | undefined
	const lazyText = new Set<number>() // upstream text blocks waiting for their first non-empty text
	let sawTool = false
	let usage: Partial<Usage> = {}
	let usageSent = false
	let stopReason: unknown = null
	let stopSequence: string | undefined

	const start = (id: string, model: string, u?: Partial<Usage>): StreamEvent => {
		started = true
		return u && Object.keys(u).length ? { type: 'start', id, model, usage: u } : { type: 'start', id, model }
	}
	/** Closes the open block (strict nesting: a block must close before the next opens). */
	function* close(): Generator<StreamEvent> {
		if (open) yield { type: 'block_stop', index: open.index }
		open = undefined
	}
	function* openBlock(upstream: number, block: Extract<StreamEvent, { type: 'block_start' }>['block']): Generator<StreamEvent> {
		yield* close()
		open = { upstream, index: next++ }
		yield { type: 'block_start', index: open.index, block }
	}
	const isOpen = (upstream: unknown) => open !== undefined && open.upstream === upstream

	for await (const frame of frames) {
		let data: unknown
		try {
			data = JSON.parse(frame.data)
		} catch {
			yield* close()
			yield {
				type: 'error',
				error: new GatewayError('upstream', 'upstream sent an invalid stream event (not JSON)', { code: 'invalid_stream' }),
			}
			return
		}
		if (!isObject(data)) continue
		const type = typeof data.type === 'string' ? data.type : frame.event
		if (type === 'ping') {
			yield { type: 'ping' }
			continue
		}
		if (type === 'error') {
			yield* close()
			yield { type: 'error', error: upstreamError(data.error) }
			return
		}
		if (type === 'message_start') {
			if (started) continue // a second message_start is a broken upstream; the first one wins
			const m = isObject(data.message) ? data.message : {}
			usage = decodePartialUsage(m.usage)
			yield start(str(m.id) || newId('msg_'), str(m.model), usage)
			continue
		}
		if (!started) yield start(newId('msg_'), '')
		const index = typeof data.index === 'number' ? data.index : -1
		switch (type) {
			case 'content_block_start': {
				yield* close()
				const b: Json = isObject(data.content_block) ? data.content_block : {}
				if (b.type === 'text') {
					if (str(b.text)) {
						yield* openBlock(index, { kind: 'text' })
						yield { type: 'text_delta', index: open!.index, text: str(b.text) }
					} else lazyText.add(index) // WIRE-NOTES #1: no empty text blocks
				} else if (b.type === 'thinking') {
					yield* openBlock(index, { kind: 'thinking' })
					if (str(b.thinking)) yield { type: 'thinking_delta', index: open!.index, text: str(b.thinking) }
					if (str(b.signature)) yield { type: 'signature_delta', index: open!.index, signature: str(b.signature) }
				} else if (b.type === 'redacted_thinking') {
					yield* openBlock(index, { kind: 'redacted_thinking', data: str(b.data) })
				} else if (b.type === 'tool_use') {
					sawTool = true
					const { id, signature } = unpackToolCallId(str(b.id))
					yield* openBlock(
						index,
						signature ? { kind: 'tool_call', id, name: str(b.name), signature } : { kind: 'tool_call', id, name: str(b.name) },
					)
					// Some Anthropic-compatible upstreams put the whole input in the start event.
					if (isObject(b.input) && Object.keys(b.input).length)
						yield { type: 'json_delta', index: open!.index, json: JSON.stringify(b.input) }
				} else if (b.type === 'mcp_tool_use') {
					yield* openBlock(index, { kind: 'mcp_tool_use', id: str(b.id), name: str(b.name), serverName: str(b.server_name) })
					if (isObject(b.input) && Object.keys(b.input).length)
						yield { type: 'json_delta', index: open!.index, json: JSON.stringify(b.input) }
				} else if (b.type === 'mcp_tool_result')
					yield* openBlock(index, { kind: 'mcp_tool_result', toolUseId: str(b.tool_use_id), isError: b.is_error === true, content: decodeMcpResultContent(b.content) })
				// Other block types (server_tool_use, web_search_tool_result, …) have no canonical form: skipped.
				break
			}
			case 'content_block_delta': {
				const d: Json = isObject(data.delta) ? data.delta : {}
				if (d.type === 'text_delta' && str(d.text)) {
					if (lazyText.delete(index)) yield* openBlock(index, { kind: 'text' })
					if (isOpen(index)) yield { type: 'text_delta', index: open!.index, text: str(d.text) }
				} else if (!isOpen(index)) break
				else if (d.type === 'thinking_delta' && str(d.thinking)) yield { type: 'thinking_delta', index: open!.index, text: str(d.thinking) }
				else if (d.type === 'signature_delta' && str(d.signature))
					yield { type: 'signature_delta', index: open!.index, signature: str(d.signature) }
				else if (d.type === 'input_json_delta' && str(d.partial_json))
					yield { type: 'json_delta', index: open!.index, json: str(d.partial_json) }
				break
			}
			case 'content_block_stop':
				lazyText.delete(index)
				if (isOpen(index)) yield* close()
				break
			case 'message_delta': {
				const d: Json = isObject(data.delta) ? data.delta : {}
				if (d.stop_reason !== undefined && d.stop_reason !== null) stopReason = d.stop_reason
				if (typeof d.stop_sequence === 'string') stopSequence = d.stop_sequence
				// Cumulative counters: replace per field, never add (WIRE-NOTES wire §3).
				usage = { ...usage, ...decodePartialUsage(data.usage) }
				yield { type: 'usage', usage: { ...usage } }
				usageSent = true
				break
			}
			case 'message_stop': {
				yield* close()
				if (!usageSent && Object.keys(usage).length) yield { type: 'usage', usage: { ...usage } }
				const reason: StopReason = decodeStopReason(stopReason, sawTool)
				yield reason === 'stop_sequence' && stopSequence !== undefined
					? { type: 'finish', reason, stopSequence }
					: { type: 'finish', reason }
				return
			}
		}
	}
	yield* close()
	yield {
		type: 'error',
		error: new GatewayError('upstream', 'upstream stream ended before message_stop', { code: 'upstream_cut', retryable: true }),
	}
}
