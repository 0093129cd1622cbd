/**
 * Anthropic SSE → canonical stream events (upstream side). The documented order is message_start → blocks
 * (content_block_start → content_block_delta* → content_block_stop) → message_delta → message_stop, with `ping`
 * anywhere (https://docs.anthropic.com/en/api/messages-streaming; WIRE-NOTES wire §1). The output is re-indexed so
 * that blocks without a canonical form (server tools) and empty text blocks leave no gaps.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { jsonOrUndefined } from '../../core/json'
import type { StreamEvent } from '../../core/events'
import type { StopReason, Usage } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { unpackToolCallId } from '../../core/tool-ids'
import { newId } from '../../lib/ids'
import { type FrameDecoder, runMachine } from '../stream-machine'
import { isObject, type Json } from './check'
import { upstreamError } from './error'
import { decodeMcpResultContent } from './mcp-blocks'
import { decodePartialUsage, decodeStopReason, refusalExplanation } from './usage'
import { decodeCitation, decodeResults, queriesOf, WEB_SEARCH_NAME } from './web-search'

export { encodeStream, streamEncoder } from './stream-encode'

/** The event types of https://docs.anthropic.com/en/api/messages-streaming that carry the message (besides ping and error). */
const KNOWN = new Set(['content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'])

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/**
 * Decodes upstream frames incrementally. Ends with `finish` after `message_stop`, or with an `error` event when the
 * upstream sent one, sent invalid JSON, or stopped before `message_stop` (a cut stream).
 */
export function streamDecoder(): FrameDecoder {
	let over = false
	let started = false
	let next = 0 // next canonical block index
	let open: { upstream: number; index: number } | undefined
	const lazyText = new Set<number>() // upstream text blocks waiting for their first non-empty text
	let sawTool = false
	let usage: Partial<Usage> = {}
	let usageSent = false
	let stopReason: unknown = null
	let stopSequence: string | undefined
	/** A refusal's explanation (`stop_details.explanation` of `message_delta`). */
	let refusal: string | undefined
	/** Web searches (server_tool_use) by id, their input JSON gathered until their results come (one canonical block). */
	const searches = new Map<string, { upstream: number; json: string }>()

	const start = (id: string, model: string, u?: Partial<Usage>): StreamEvent => {
		started = true
		return u && Object.keys(u).length ? { type: 'start', id, model, usage: u } : { type: 'start', id, model }
	}
	/** Closes the open block (strict nesting: a block must close before the next opens). */
	const close = (out: StreamEvent[]) => {
		if (open) out.push({ type: 'block_stop', index: open.index })
		open = undefined
	}
	const openBlock = (out: StreamEvent[], upstream: number, block: Extract<StreamEvent, { type: 'block_start' }>['block']) => {
		close(out)
		open = { upstream, index: next++ }
		out.push({ type: 'block_start', index: open.index, block })
	}
	const finish = (out: StreamEvent[]) => {
		if (!usageSent && Object.keys(usage).length) out.push({ type: 'usage', usage: { ...usage } })
		const reason: StopReason = decodeStopReason(stopReason, sawTool)
		const ev: Extract<StreamEvent, { type: 'finish' }> = reason === 'stop_sequence' && stopSequence !== undefined ? { type: 'finish', reason, stopSequence } : { type: 'finish', reason }
		if (reason === 'refusal' && refusal) ev.refusal = refusal
		out.push(ev)
	}
	const isOpen = (upstream: unknown) => open !== undefined && open.upstream === upstream

	return {
		push(frame, out) {
			if (over) return
			let data: unknown
			try {
				data = JSON.parse(frame.data)
			} catch {
				close(out)
				out.push({ type: 'error', error: new GatewayError('upstream', 'upstream sent an invalid stream event (not JSON)', { code: 'upstream_malformed' }) })
				over = true
				return
			}
			if (!isObject(data)) return
			const type = typeof data.type === 'string' ? data.type : frame.event
			if (type === 'ping') {
				out.push({ type: 'ping' })
				return
			}
			if (type === 'error') {
				close(out)
				out.push({ type: 'error', error: upstreamError(data.error) })
				over = true
				return
			}
			if (type === 'message_start') {
				if (started) return // a second message_start is a broken upstream; the first one wins
				const m = isObject(data.message) ? data.message : {}
				usage = decodePartialUsage(m.usage)
				out.push(start(str(m.id) || newId('msg_'), str(m.model), usage))
				return
			}
			// Unknown event types are skipped ("handle unknown event types gracefully", messages-streaming docs): one sent
			// before message_start must not synthesise a start, or the real message_start is dropped as a duplicate and
			// its input usage is lost (billed as 0 input).
			if (type === undefined || !KNOWN.has(type)) return
			if (!started) out.push(start(newId('msg_'), ''))
			const index = typeof data.index === 'number' ? data.index : -1
			switch (type) {
				case 'content_block_start': {
					close(out)
					const b: Json = isObject(data.content_block) ? data.content_block : {}
					if (b.type === 'text') {
						if (str(b.text)) {
							openBlock(out, index, { kind: 'text' })
							out.push({ type: 'text_delta', index: open!.index, text: str(b.text) })
						} else lazyText.add(index) // WIRE-NOTES #1: no empty text blocks
					} else if (b.type === 'thinking') {
						openBlock(out, index, { kind: 'thinking' })
						if (str(b.thinking)) out.push({ type: 'thinking_delta', index: open!.index, text: str(b.thinking) })
						if (str(b.signature)) out.push({ type: 'signature_delta', index: open!.index, signature: str(b.signature) })
					} else if (b.type === 'redacted_thinking') {
						openBlock(out, index, { kind: 'redacted_thinking', data: str(b.data) })
					} else if (b.type === 'tool_use') {
						sawTool = true
						const { id, signature } = unpackToolCallId(str(b.id))
						openBlock(out, index, signature ? { kind: 'tool_call', id, name: str(b.name), signature } : { kind: 'tool_call', id, name: str(b.name) })
						// Some Anthropic-compatible upstreams put the whole input in the start event.
						if (isObject(b.input) && Object.keys(b.input).length)
							out.push({ type: 'json_delta', index: open!.index, json: JSON.stringify(b.input) })
					} else if (b.type === 'mcp_tool_use') {
						openBlock(out, index, { kind: 'mcp_tool_use', id: str(b.id), name: str(b.name), serverName: str(b.server_name) })
						if (isObject(b.input) && Object.keys(b.input).length)
							out.push({ type: 'json_delta', index: open!.index, json: JSON.stringify(b.input) })
					} else if (b.type === 'mcp_tool_result')
						openBlock(out, index, { kind: 'mcp_tool_result', toolUseId: str(b.tool_use_id), isError: b.is_error === true, content: decodeMcpResultContent(b.content) })
					else if (b.type === 'server_tool_use' && b.name === WEB_SEARCH_NAME) searches.set(str(b.id), { upstream: index, json: isObject(b.input) && Object.keys(b.input).length ? JSON.stringify(b.input) : '' })
					else if (b.type === 'web_search_tool_result' && searches.has(str(b.tool_use_id))) {
						const id = str(b.tool_use_id)
						const queries = queriesOf(jsonOrUndefined(searches.get(id)!.json))
						searches.delete(id)
						openBlock(out, index, { kind: 'web_search', id, queries, sources: decodeResults(b.content) })
					}
					// Other block types (code execution, web fetch…) have no canonical form: skipped.
					break
				}
				case 'content_block_delta': {
					const d: Json = isObject(data.delta) ? data.delta : {}
					if (d.type === 'text_delta' && str(d.text)) {
						if (lazyText.delete(index)) openBlock(out, index, { kind: 'text' })
						if (isOpen(index)) out.push({ type: 'text_delta', index: open!.index, text: str(d.text) })
					} else if (d.type === 'input_json_delta' && !isOpen(index)) {
						const search = [...searches.values()].find((q) => q.upstream === index)
						if (search) search.json += str(d.partial_json)
					} else if (d.type === 'citations_delta') {
						// Anthropic sends a block's citations before its text: a block held for its first text opens now.
						const citation = decodeCitation(d.citation)
						if (citation && lazyText.delete(index)) openBlock(out, index, { kind: 'text' })
						if (citation && isOpen(index)) out.push({ type: 'citation', index: open!.index, citation })
					} else if (!isOpen(index)) break
					else if (d.type === 'thinking_delta' && str(d.thinking)) out.push({ type: 'thinking_delta', index: open!.index, text: str(d.thinking) })
					else if (d.type === 'signature_delta' && str(d.signature))
						out.push({ type: 'signature_delta', index: open!.index, signature: str(d.signature) })
					else if (d.type === 'input_json_delta' && str(d.partial_json))
						out.push({ type: 'json_delta', index: open!.index, json: str(d.partial_json) })
					break
				}
				case 'content_block_stop':
					lazyText.delete(index)
					if (isOpen(index)) close(out)
					break
				case 'message_delta': {
					const d: Json = isObject(data.delta) ? data.delta : {}
					if (d.stop_reason !== undefined && d.stop_reason !== null) stopReason = d.stop_reason
					if (typeof d.stop_sequence === 'string') stopSequence = d.stop_sequence
					refusal = refusalExplanation(d.stop_details) ?? refusal
					// Cumulative counters: replace per field, never add (WIRE-NOTES wire §3).
					usage = { ...usage, ...decodePartialUsage(data.usage) }
					out.push({ type: 'usage', usage: { ...usage } })
					usageSent = true
					break
				}
				case 'message_stop':
					close(out)
					finish(out)
					over = true
					return
			}
		},
		end(out) {
			if (over) return
			over = true
			close(out)
			// The body ended after a message_delta that gave the stop reason: the answer and its final usage are
			// complete, only the message_stop frame is missing (relays that drop the last frame). Finish normally.
			if (stopReason !== null) {
				finish(out)
				return
			}
			out.push({ type: 'error', error: new GatewayError('upstream', 'upstream stream ended before message_stop', { code: 'upstream_cut', retryable: true }) })
		},
		get done() {
			return over
		},
	}
}

export const decodeStream = (frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent> => runMachine(streamDecoder(), frames)
