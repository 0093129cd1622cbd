/**
 * Upstream Responses SSE → canonical stream events. Output items map onto blocks: a `message` item is a text block
 * (opened on its first text), a `reasoning` item a thinking block (summary or raw reasoning text; our signature from
 * `encrypted_content` at `output_item.done`), a `function_call` item a tool_call block fed by
 * `function_call_arguments.delta`; a `web_search_call` item that searched a web_search block at its `output_item.done`
 * (whole, as the non-streamed answer has it), and a `url_citation` annotation (`response.output_text.annotation.added`,
 * or the done item's annotations when none came as events) a citation of the text block, its span moved from the content
 * part's text to the block's (both in UTF-16 units here). `response.completed` / `response.incomplete` give usage and the stop reason;
 * `response.failed` and `error` become an `error` event, never an empty success (WIRE-NOTES wire §15).
 * Per-request state lives in this generator's locals.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import type { Usage } from '../../core/ir'
import { jsonOrUndefined } from '../../core/json'
import type { SseFrame } from '../../core/sse'
import { newId } from '../../lib/ids'
import { isObject, str, type Json } from '../openai-chat/guards'
import { type FrameDecoder, runMachine } from '../stream-machine'
import { callIdIn } from './call-ids'
import { REDACTED_MARK, reasoningText, SIGNATURE_MARK } from './reasoning'
import { failedError, isSearchCall } from './response'
import { decodeEnd, decodeUsage } from './usage'
import { decodeAnnotations, decodeWebSearchItem } from './web-search'

/** An open block; `said`: a text block's text so far (citation spans are into it, in UTF-16 units). */
type Open = { index: number; kind: 'text' | 'thinking' | 'tool_call'; streamed: boolean; refusal?: boolean; said: string }

/** Decodes a Responses stream; ends with `finish`, or with `error` when the upstream failed or the body was cut. */
export function streamDecoder(): FrameDecoder {
	let over = false
	let started = false
	let next = 0
	let open: Open | undefined
	let sawTool = false
	let sawRefusal = false
	/** Searches run (`web_search_call` items that searched), billed per search. */
	let searches = 0
	/** Where the current content part's text starts in the open text block: OpenAI's spans are into the part's text. */
	let partFrom = 0
	/** The message items whose annotations came as events (their done item repeats them). */
	const annotated = new Set<string>()

	const start = (r: Json | undefined): StreamEvent[] => {
		if (started) return []
		started = true
		const created = typeof r?.created_at === 'number' ? r.created_at : undefined
		return [{ type: 'start', id: str(r?.id) || newId('resp_'), model: str(r?.model) ?? '', ...(created && { created }) }]
	}
	const close = (out: StreamEvent[]) => {
		if (open) out.push({ type: 'block_stop', index: open.index })
		open = undefined
	}
	/** The open block of `kind`; a `refusal` part's text is a text block of its own, marked so. */
	const ensure = (kind: 'text' | 'thinking', out: StreamEvent[], refusal = false): Open => {
		if (open?.kind === kind && (open.refusal ?? false) === refusal) return open
		close(out)
		open = { index: next++, kind, streamed: false, said: '', ...(refusal && { refusal }) }
		out.push({ type: 'block_start', index: open.index, block: refusal ? { kind: 'text', refusal } : { kind } })
		return open
	}
	const text = (kind: 'text' | 'thinking', t: string, out: StreamEvent[], refusal = false) => {
		if (!t) return
		const o = ensure(kind, out, refusal)
		o.streamed = true
		if (kind === 'text') o.said += t
		out.push(kind === 'text' ? { type: 'text_delta', index: o.index, text: t } : { type: 'thinking_delta', index: o.index, text: t })
	}

	const itemAdded = (item: Json, out: StreamEvent[]) => {
		close(out)
		if (item.type === 'function_call') {
			const { id, signature } = callIdIn(str(item.call_id) || newId('call_'))
			open = { index: next++, kind: 'tool_call', streamed: false, said: '' }
			out.push({ type: 'block_start', index: open.index, block: { kind: 'tool_call', id, name: str(item.name) ?? '', ...(signature && { signature }) } })
			sawTool = true
		} else if (item.type === 'reasoning') {
			const enc = str(item.encrypted_content)
			if (enc?.startsWith(REDACTED_MARK)) {
				const index = next++
				out.push({ type: 'block_start', index, block: { kind: 'redacted_thinking', data: enc.slice(REDACTED_MARK.length) } }, { type: 'block_stop', index })
			} else ensure('thinking', out)
		}
	}

	/** Citations of the open text block, spanning `from` on in its text (a span-less one: the whole block). */
	const cite = (annotations: unknown, from: number, out: StreamEvent[]) => {
		if (!decodeAnnotations(annotations).length) return
		const o = ensure('text', out)
		for (const c of decodeAnnotations(annotations, o.said.slice(from)))
			out.push({ type: 'citation', index: o.index, citation: c.start === undefined ? c : { ...c, start: from + c.start, end: from + (c.end ?? c.start) } })
	}
	/** A done message item's text, when none streamed, and its citations, when none came as events. */
	const messageDone = (item: Json, out: StreamEvent[]) => {
		const streamed = open?.kind === 'text' && open.streamed
		let from = 0
		for (const c of (Array.isArray(item.content) ? item.content : []).filter(isObject)) {
			if (c.type === 'refusal') sawRefusal = true
			const t = str(c.text) ?? str(c.refusal) ?? ''
			if (!streamed) text('text', t, out, c.type === 'refusal')
			if (c.type === 'output_text' && !annotated.has(str(item.id) ?? '')) cite(c.annotations, from, out)
			from += t.length
		}
	}

	/** The finished item: fills in what a terse upstream sent only here, then closes the block. */
	const itemDone = (item: Json, out: StreamEvent[]) => {
		if (item.type === 'web_search_call') {
			// Whole at its end, as the non-streamed answer has it: its query and sources come with the done item.
			const search = isSearchCall(item) ? decodeWebSearchItem(item) : undefined
			if (search) {
				searches++
				const index = next++
				out.push({ type: 'block_start', index, block: { kind: 'web_search', id: search.id, queries: search.queries, sources: search.sources } }, { type: 'block_stop', index })
			}
		} else if (item.type === 'reasoning' && open?.kind === 'thinking') {
			if (!open.streamed) text('thinking', reasoningText(item), out)
			const enc = str(item.encrypted_content)
			if (enc?.startsWith(SIGNATURE_MARK)) out.push({ type: 'signature_delta', index: open.index, signature: enc.slice(SIGNATURE_MARK.length) })
		} else if (item.type === 'message') messageDone(item, out)
		else if (item.type === 'function_call' && open?.kind === 'tool_call' && !open.streamed) {
			const args = str(item.arguments)
			if (args) out.push({ type: 'json_delta', index: open.index, json: args })
		}
		close(out)
	}

	const event = (type: string, e: Json, out: StreamEvent[]): StreamEvent | undefined => {
		switch (type) {
			case 'response.created':
			case 'response.queued':
			case 'response.in_progress':
				break
			case 'response.output_item.added':
				if (isObject(e.item)) itemAdded(e.item, out)
				break
			case 'response.output_item.done':
				if (isObject(e.item)) itemDone(e.item, out)
				break
			case 'response.content_part.added':
				partFrom = open?.kind === 'text' && !open.refusal ? open.said.length : 0
				break
			case 'response.output_text.annotation.added':
				if (str(e.item_id)) annotated.add(e.item_id as string)
				cite([e.annotation], partFrom, out)
				break
			case 'response.output_text.delta':
				text('text', str(e.delta) ?? '', out)
				break
			case 'response.refusal.delta':
				sawRefusal = true
				text('text', str(e.delta) ?? '', out, true)
				break
			case 'response.reasoning_summary_part.added':
				// Several summary parts read as paragraphs of one thinking text.
				if (typeof e.summary_index === 'number' && e.summary_index > 0 && open?.kind === 'thinking' && open.streamed) text('thinking', '\n\n', out)
				break
			case 'response.reasoning_summary_text.delta':
			case 'response.reasoning_text.delta':
				text('thinking', str(e.delta) ?? '', out)
				break
			case 'response.function_call_arguments.delta':
				if (open?.kind === 'tool_call' && str(e.delta)) {
					open.streamed = true
					out.push({ type: 'json_delta', index: open.index, json: str(e.delta) as string })
				}
				break
			case 'response.completed':
			case 'response.incomplete': {
				close(out)
				const r = isObject(e.response) ? e.response : {}
				const usage: Partial<Usage> | undefined = decodeUsage(r.usage, r.service_tier)
				// The searches billed: those streamed, or the final output's when it lists more.
				const ran = Math.max(searches, Array.isArray(r.output) ? r.output.filter(isSearchCall).length : 0)
				if (usage || ran) out.push({ type: 'usage', usage: { ...usage, ...(ran && { webSearches: ran }) } })
				return { type: 'finish', reason: decodeEnd(r.status ?? (type === 'response.incomplete' ? 'incomplete' : 'completed'), r.incomplete_details, sawTool, sawRefusal) }
			}
			case 'response.failed':
				close(out)
				return { type: 'error', error: failedError(isObject(e.response) ? e.response.error : undefined) }
			case 'error':
				close(out)
				return { type: 'error', error: new GatewayError('upstream', str(e.message) ?? 'upstream stream error', { code: str(e.code) ?? 'upstream_stream_error', retryable: true }) }
		}
		return undefined
	}

	return {
		push(frame, out) {
			if (over) return
			const data = frame.data.trim()
			if (!data || data === '[DONE]') return
			const e = jsonOrUndefined(data)
			if (!isObject(e)) {
				out.push(...start(undefined))
				close(out)
				out.push({ type: 'error', error: new GatewayError('upstream', 'upstream sent a malformed stream event', { retryable: true, code: 'upstream_malformed' }) })
				over = true
				return
			}
			out.push(...start(isObject(e.response) ? e.response : undefined))
			const terminal = event(str(e.type) ?? frame.event ?? '', e, out)
			if (terminal) {
				out.push(terminal)
				over = true
			}
		},
		end(out) {
			if (over) return
			over = true
			out.push(...start(undefined))
			close(out)
			out.push({ type: 'error', error: new GatewayError('upstream', 'upstream stream ended before response.completed', { code: 'upstream_cut', retryable: true }) })
		},
		get done() {
			return over
		},
	}
}

export const decodeStream = (frames: AsyncIterable<SseFrame>): AsyncGenerator<StreamEvent> => runMachine(streamDecoder(), frames)
