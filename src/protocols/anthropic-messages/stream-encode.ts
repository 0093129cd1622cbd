/**
 * Canonical stream events → Anthropic SSE (client side), exactly as the Messages API streams it so the official SDK
 * and `@ai-sdk/anthropic` (strict chunk schemas) accept it: an `event:` line on every frame, one well-formed
 * `message_start` first (WIRE-NOTES #3, #21), strictly nested blocks with contiguous indexes (#5), the stop reason
 * derived from the blocks sent (#1), and `message_delta` carrying the final cumulative usage (#12).
 * @module
 */
import type { EncodeContext } from '../codec'
import { type EventEncoder, runMachine } from '../stream-machine'
import { GatewayError } from '../../core/errors'
import { UNSIGNED_THINKING_TAG } from '../../core/signatures'
import type { StreamEvent } from '../../core/events'
import type { StopReason, Usage, WebSearchPart } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import type { Json } from './check'
import { wireToolId } from './content-encode'
import { encodeStreamError } from './error'
import { encodeMcpToolResult, encodeMcpToolUse } from './mcp-blocks'
import type { AnthropicUsage } from './model'
import { messageId } from './response'
import { encodeCitation, encodeSearchBlocks } from './web-search'
import { encodeDeltaUsage, encodeStartUsage, encodeStopReason, refusalDetails, withToolUse } from './usage'

/**
 * One SSE frame; the `event:` line is mandatory (the Anthropic SDK skips frames without one). The JSON is
 * `{"type":…}` followed by `data`'s members (none of which is `type`), written without copying `data` into a new object.
 */
export const frame = (type: string, data?: Json): SseFrame => {
	const rest = data === undefined ? '{}' : JSON.stringify(data)
	return { event: type, data: `{"type":${JSON.stringify(type)}${rest === '{}' ? '}' : `,${rest.slice(1)}`}` }
}

/**
 * A `content_block_delta` frame, most of the frames of a converted stream, written as text: the same bytes as
 * `frame('content_block_delta', {index, delta: {type, [key]: value}})` at a third of the time, without the two
 * objects (`type` and `key` are our constants, `index` an integer; only `value` needs escaping).
 */
export const delta = (index: number, type: string, key: string, value: string): SseFrame => ({
	event: 'content_block_delta',
	data: `{"type":"content_block_delta","index":${index},"delta":{"type":"${type}","${key}":${JSON.stringify(value)}}}`,
})

type BlockStart = Extract<StreamEvent, { type: 'block_start' }>['block']

const searchOf = (b: Extract<BlockStart, { kind: 'web_search' }>): WebSearchPart => ({ type: 'web_search', id: b.id, queries: b.queries, sources: b.sources })

function contentBlock(b: BlockStart): Json {
	switch (b.kind) {
		case 'text':
			return { type: 'text', text: '' }
		case 'thinking':
			return { type: 'thinking', thinking: '', signature: '' }
		case 'redacted_thinking':
			return { type: 'redacted_thinking', data: b.data }
		case 'tool_call':
			// Tool input always starts as {} and grows through input_json_delta (WIRE-NOTES wire §8).
			return { type: 'tool_use', id: wireToolId(b.id, b.signature), name: b.name, input: {} }
		case 'mcp_tool_use':
			return encodeMcpToolUse(b, {})
		case 'mcp_tool_result':
			return encodeMcpToolResult(b)
		case 'web_search':
			// The results block; its server_tool_use goes out before it (streamEncoder).
			return encodeSearchBlocks(searchOf(b))[1]
	}
}

/**
 * Encodes events for an Anthropic client. `message_delta` + `message_stop` are held until the event stream ends,
 * because OpenAI-shaped upstreams report usage only after their finish chunk.
 */
export function streamEncoder(ctx: EncodeContext): EventEncoder {
	let over = false
	let started = false
	let next = 0
	// `from` is the canonical index; `index` is assigned when the block is actually sent (text waits for real text).
	let open: { from: number; block: BlockStart; index?: number; signed?: boolean } | undefined
	let sawTool = false
	const usage: Partial<Usage> = {}
	let finish: { reason: StopReason; stopSequence?: string } | undefined
	let startUsage: AnthropicUsage | undefined

	const messageStart = (id?: string): SseFrame => {
		started = true
		return frame('message_start', {
			message: {
				id: messageId(id),
				type: 'message',
				role: 'assistant',
				model: ctx.model,
				content: [],
				stop_reason: null,
				stop_sequence: null,
				// Never missing or 0 when known locally: Claude Code shows costs from it (WIRE-NOTES #21).
				usage: (startUsage = encodeStartUsage(usage, () => ctx.countInputTokens?.() ?? 0)),
			},
		})
	}
	// Plain functions returning the frame to send, if any: delegating to a generator from this async generator would
	// wrap it in an async-from-sync iterator (objects and promises on every block of every converted stream).
	const send = (b: NonNullable<typeof open>): SseFrame | undefined => {
		if (b.index !== undefined) return undefined
		b.index = next++
		if (b.block.kind === 'tool_call') sawTool = true
		return frame('content_block_start', { index: b.index, content_block: contentBlock(b.block) })
	}
	/**
	 * A web search as Anthropic streams it: `server_tool_use` (input `{}`, then its query as `input_json_delta`), then
	 * the `web_search_tool_result` block, left open for its stop.
	 */
	const sendSearch = (b: NonNullable<typeof open>, out: SseFrame[]) => {
		if (b.block.kind !== 'web_search') return
		const [use] = encodeSearchBlocks(searchOf(b.block))
		const index = next++
		out.push(frame('content_block_start', { index, content_block: { ...use, input: {} } }))
		out.push(delta(index, 'input_json_delta', 'partial_json', JSON.stringify(use.input)))
		out.push({ event: 'content_block_stop', data: `{"type":"content_block_stop","index":${index}}` })
		out.push(send(b)!)
	}
	/**
	 * Ends the open block. A thinking block from a vendor that does not sign (OpenAI-compatible, Gemini) gets a
	 * `signature_delta` first, as Anthropic sends one before every thinking block's stop, carrying the gateway's
	 * `UNSIGNED_THINKING_TAG` (core/signatures.ts), as the non-streamed answer does: clients keep such a block to send
	 * back as thinking (the Vercel AI SDK dropped one with no signature, pi replays one with an empty signature as text,
	 * WIRE-NOTES #6), the Anthropic codec reads it back as unsigned thinking, and it is left out for Anthropic upstreams.
	 */
	const close = (out: SseFrame[]): void => {
		if (open?.index !== undefined) {
			if (open.block.kind === 'thinking' && !open.signed) out.push(delta(open.index, 'signature_delta', 'signature', UNSIGNED_THINKING_TAG))
			out.push({ event: 'content_block_stop', data: `{"type":"content_block_stop","index":${open.index}}` })
		}
		open = undefined
	}

	return {
		push(ev, out) {
			if (over) return
			if (ev.type === 'ping') {
				out.push({ event: 'ping', data: '{"type":"ping"}' })
				return
			}
			if (ev.type === 'usage' || ev.type === 'start') {
				for (const [k, v] of Object.entries(ev.usage ?? {})) if (v !== undefined) Object.assign(usage, { [k]: v })
				if (ev.type === 'start' && !started) out.push(messageStart(ev.id))
				return
			}
			if (ev.type === 'error') {
				close(out)
				out.push(encodeStreamError(ev.error))
				over = true
				return
			}
			if (!started) out.push(messageStart())
			if (ev.type === 'finish') {
				finish = { reason: ev.reason, stopSequence: ev.stopSequence }
				return
			}
			if (ev.type === 'block_start') {
				close(out)
				open = { from: ev.index, block: ev.block }
				if (ev.block.kind === 'web_search') return sendSearch(open, out)
				// Text opens on its first non-empty delta (WIRE-NOTES #1); every other block opens now.
				const start = ev.block.kind !== 'text' ? send(open) : undefined
				if (start) out.push(start)
				return
			}
			if (!open || open.from !== ev.index) return // a delta or stop for a block that is not open
			if (ev.type === 'block_stop') {
				close(out)
				return
			}
			if (ev.type === 'citation') {
				// Anthropic sends a block's citations first, each as a `citations_delta`: the block opens for them.
				if (open.block.kind !== 'text') return
				const start = send(open)
				if (start) out.push(start)
				out.push(frame('content_block_delta', { index: open.index!, delta: { type: 'citations_delta', citation: encodeCitation(ev.citation) } }))
			} else if (ev.type === 'text_delta') {
				if (!ev.text || open.block.kind !== 'text') return
				const start = send(open)
				if (start) out.push(start)
				out.push(delta(open.index!, 'text_delta', 'text', ev.text))
			} else if (open.index === undefined) return
			else if (ev.type === 'thinking_delta' && ev.text) out.push(delta(open.index, 'thinking_delta', 'thinking', ev.text))
			else if (ev.type === 'signature_delta' && ev.signature) {
				open.signed = true
				out.push(delta(open.index, 'signature_delta', 'signature', ev.signature))
			}
			else if (ev.type === 'json_delta' && ev.json) out.push(delta(open.index, 'input_json_delta', 'partial_json', ev.json))
		},
		end(out) {
			if (over) return
			over = true
			if (!finish) {
				// The upstream decoder ends every whole stream with finish or error; anything else was cut.
				close(out)
				out.push(encodeStreamError(new GatewayError('upstream', 'upstream stream ended unexpectedly', { code: 'upstream_cut' })))
				return
			}
			if (!started) out.push(messageStart())
			close(out)
			const reason = sawTool ? withToolUse(finish.reason) : finish.reason
			const details = refusalDetails(reason)
			out.push(
				frame('message_delta', {
					delta: {
						stop_reason: encodeStopReason(reason),
						stop_sequence: reason === 'stop_sequence' ? (finish.stopSequence ?? null) : null,
						...(details && { stop_details: details }),
					},
					usage: encodeDeltaUsage(usage, startUsage ?? encodeStartUsage({}, () => 0)),
				}),
			)
			out.push({ event: 'message_stop', data: '{"type":"message_stop"}' })
		},
		get done() {
			return over
		},
	}
}

export const encodeStream = (events: AsyncIterable<StreamEvent>, ctx: EncodeContext): AsyncGenerator<SseFrame> => runMachine(streamEncoder(ctx), events)
