/**
 * Canonical stream events → a Responses SSE stream, in the order OpenAI sends it
 * (https://platform.openai.com/docs/api-reference/responses-streaming; WIRE-NOTES wire §15):
 * `response.created` → `response.in_progress` → per output item `output_item.added` → its part and delta events →
 * their `…done` events → `output_item.done` → `response.completed` (or `response.incomplete` when cut by the token
 * limit or a filter), each frame named by `event:` and numbered by `sequence_number` from 0. No `[DONE]`.
 *
 * Items: a run of text blocks → one `message` with one `output_text` part, as a whole answer gives it (response.ts) and
 * OpenAI answers: Claude splits its text into blocks (each cited claim one), and the next text block continues the
 * part, its citations annotations at their place in the part's text (a `refusal` part, `response.refusal.delta/done`,
 * for text the upstream marked as a refusal, in a message of its own); thinking → `reasoning` with one `summary_text` part (and the signature in
 * `encrypted_content` at `output_item.done`); tool call → `function_call` with `function_call_arguments.delta/done`.
 * The final response lists the same items, so strict clients (the openai SDK checks ids and call_ids against what was
 * streamed) accept it. A failure becomes an `error` event (the SDK throws on it) followed by `response.failed`, never
 * an empty success (usestrix/strix#719).
 *
 * An item's `…done` events wait for the event after its block stops: only then is it known whether the item was
 * `completed` or cut by a failure (`incomplete`, before `error`), and whether the answer ended in a refusal the
 * upstream told only at the end (Anthropic `stop_reason: "refusal"`): the text already went out as `output_text`
 * deltas, so its part closes as `output_text` (`output_text.done`, `content_part.done`) and a `refusal` part of its
 * own follows in the message (`content_part.added`, `refusal.delta` of Anthropic's `stop_details.explanation` if any,
 * `refusal.done`, `content_part.done`), so the final response is the one a whole answer gives
 * (https://platform.openai.com/docs/api-reference/responses-streaming/response/refusal/done).
 * @module
 */
import { codePoints } from '../../core/citations'
import { GatewayError } from '../../core/errors'
import type { StreamEvent } from '../../core/events'
import { type Citation, emptyUsage, type Usage } from '../../core/ir'
import type { SseFrame } from '../../core/sse'
import { newId } from '../../lib/ids'
import type { EncodeContext } from '../codec'
import { type EventEncoder, runMachine } from '../stream-machine'
import { errorBody } from '../openai-chat/error'
import type { Json } from '../openai-chat/guards'
import { callIdOut } from './call-ids'
import { failedCode } from './error'
import type { ResponsesOutputItem } from './model'
import { encodeReasoningItem, REDACTED_MARK } from './reasoning'
import { envelope, logprobEntries, responseId } from './response'
import { encodeEnd } from './usage'
import { urlCitation, webSearchItem } from './web-search'

type Open =
	/**
	 * `refusal`: the part is a refusal; `endsRefused`: the answer ended refused after this output_text part (its
	 * explanation, else empty), said by a `refusal` part after it. `start`: where the open block's text begins in the part's (UTF-16), `citations` that block's;
	 * `annotations`: those of the blocks before it, already sent.
	 */
	| {
			kind: 'text'
			index: number
			out: number
			id: string
			text: string
			refusal: boolean
			endsRefused?: string
			logprobs: LogprobEntry[]
			start: number
			citations: Citation[]
			annotations: Json[]
	  }
	| { kind: 'thinking'; index: number; out: number; id: string; text: string; signature?: string }
	| { kind: 'redacted'; index: number; out: number; item: ResponsesOutputItem }
	| { kind: 'search'; index: number; out: number; item: ReturnType<typeof webSearchItem> }
	| { kind: 'call'; index: number; out: number; id: string; callId: string; name: string; args: string }

type LogprobEntry = ReturnType<typeof logprobEntries>[number]
const part = (text: string, logprobs: LogprobEntry[] = [], annotations: Json[] = []) => ({ type: 'output_text' as const, text, annotations, logprobs })
const refusalPart = (refusal: string) => ({ type: 'refusal' as const, refusal })
/** The content part a text block opens: `refusal` parts start empty as `output_text` ones do. */
const emptyPart = (refusal: boolean) => (refusal ? refusalPart('') : part(''))

type ItemStatus = 'completed' | 'incomplete'

/** Canonical events → Responses SSE frames for a client of the Responses API. */
export function streamEncoder(ctx: EncodeContext): EventEncoder {
	let over = false
	let seq = 0
	let id = ''
	let created = 0
	let open: Open | undefined
	/** The block that stopped last: its `…done` events wait for what follows (completed, or cut by a failure). */
	let stopped: Open | undefined
	/** A refusal part was sent (a refusal the upstream marked as such, as it came). */
	let refused = false
	/** Function calls opened so far: the later ones are marked as calls of the same answer (call-ids.ts). */
	let calls = 0
	const output: ResponsesOutputItem[] = []
	const usage: Usage = emptyUsage()
	const addUsage = (u: Partial<Usage>) => {
		for (const k of Object.keys(u) as Array<keyof Usage>) if (u[k] !== undefined) Object.assign(usage, { [k]: u[k] })
	}
	const frame = (type: string, data: Record<string, unknown>): SseFrame => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...data }) })
	const snapshot = (status: 'in_progress' | 'completed' | 'incomplete' | 'failed', extra: { incompleteReason?: string; error?: { code: string | null; message: string } } = {}) =>
		envelope({ id, created, model: ctx.model, status, output: status === 'in_progress' ? [] : output.slice(), usage: status === 'in_progress' ? undefined : usage, ...extra })

	// The helpers below append the frames an event produces to the caller's array, set by push and end.
	let frames: SseFrame[] = []

	function begin(ev: StreamEvent) {
		if (id) return
		const start = ev.type === 'start' ? ev : undefined
		id = responseId(start?.id)
		created = start?.created ?? Math.floor(Date.now() / 1000)
		frames.push(frame('response.created', { response: snapshot('in_progress') }))
		frames.push(frame('response.in_progress', { response: snapshot('in_progress') }))
	}

	/** The `…done` events of a refusal part at `content_index` of a message. */
	function refusalDone(o: Extract<Open, { kind: 'text' }>, contentIndex: number, text: string) {
		const ids = { item_id: o.id, output_index: o.out, content_index: contentIndex }
		frames.push(frame('response.refusal.done', { ...ids, refusal: text }))
		frames.push(frame('response.content_part.done', { ...ids, part: refusalPart(text) }))
	}

	/** Sends an item's `…done` events with its final status, and keeps the item for the final response. */
	function done(o: Open, status: ItemStatus) {
		const at = { output_index: o.out }
		let item: ResponsesOutputItem
		if (o.kind === 'text') {
			const ids = { item_id: o.id, ...at, content_index: 0 }
			const content: Array<ReturnType<typeof part> | ReturnType<typeof refusalPart>> = []
			if (o.refusal) {
				refusalDone(o, 0, o.text)
				content.push(refusalPart(o.text))
			} else {
				annotate(o)
				frames.push(frame('response.output_text.done', { ...ids, text: o.text, logprobs: o.logprobs }))
				frames.push(frame('response.content_part.done', { ...ids, part: part(o.text, o.logprobs, o.annotations) }))
				content.push(part(o.text, o.logprobs, o.annotations))
				if (o.endsRefused !== undefined) {
					// Anthropic says "refusal" only in its last event, after its words streamed as output_text: that part closes
					// as what it was opened as, and a `refusal` part of its own follows in the message (its explanation, if
					// any, as its delta), as a whole answer gives it (response.ts).
					const at = { ...ids, content_index: 1 }
					frames.push(frame('response.content_part.added', { ...at, part: refusalPart('') }))
					if (o.endsRefused) frames.push(frame('response.refusal.delta', { ...at, delta: o.endsRefused }))
					frames.push(frame('response.refusal.done', { ...at, refusal: o.endsRefused }))
					frames.push(frame('response.content_part.done', { ...at, part: refusalPart(o.endsRefused) }))
					content.push(refusalPart(o.endsRefused))
				}
			}
			item = { id: o.id, type: 'message', role: 'assistant', status, content }
		} else if (o.kind === 'thinking') {
			if (o.text) {
				frames.push(frame('response.reasoning_summary_text.done', { item_id: o.id, ...at, summary_index: 0, text: o.text }))
				frames.push(frame('response.reasoning_summary_part.done', { item_id: o.id, ...at, summary_index: 0, part: { type: 'summary_text', text: o.text } }))
			}
			item = encodeReasoningItem({ type: 'thinking', text: o.text, ...(o.signature && { signature: o.signature }) }, o.id)
		} else if (o.kind === 'call') {
			const args = o.args || '{}' // WIRE-NOTES wire §8: arguments are a JSON object, `{}` when the tool takes none
			frames.push(frame('response.function_call_arguments.done', { item_id: o.id, ...at, name: o.name, arguments: args }))
			item = { id: o.id, type: 'function_call', status, call_id: o.callId, name: o.name, arguments: args }
		} else if (o.kind === 'search') {
			// The vendor ran the search before its block: its progress events go out together.
			for (const stage of ['in_progress', 'searching', 'completed']) frames.push(frame(`response.web_search_call.${stage}`, { item_id: o.item.id, ...at }))
			item = { ...o.item, status }
		} else item = o.item
		output[o.out] = item
		frames.push(frame('response.output_item.done', { ...at, item }))
	}

	/**
	 * Sends the annotations of the text block that ended, at their place in the part's text. Citations go out once the
	 * text they span is whole (Anthropic's cite a whole block, sent before its text).
	 */
	function annotate(o: Extract<Open, { kind: 'text' }>) {
		const offset = codePoints(o.text.slice(0, o.start))
		for (const c of o.citations.splice(0)) {
			const annotation = urlCitation(c, offset, o.text.slice(o.start))
			frames.push(frame('response.output_text.annotation.added', { item_id: o.id, output_index: o.out, content_index: 0, annotation_index: o.annotations.length, annotation }))
			o.annotations.push(annotation)
		}
	}

	/** Sends the `…done` events of the items still waiting: `completed` as the stream goes on, `incomplete` on a failure. */
	function settle(status: ItemStatus) {
		if (stopped) done(stopped, status)
		stopped = undefined
		if (open) done(open, status)
		open = undefined
	}

	/** A message item with its first content part (empty), the text to follow as deltas. */
	function openMessage(index: number, refusal: boolean): Extract<Open, { kind: 'text' }> {
		const out = output.length
		const o: Extract<Open, { kind: 'text' }> = { kind: 'text', index, out, id: newId('msg_'), text: '', refusal, logprobs: [], start: 0, citations: [], annotations: [] }
		const item: ResponsesOutputItem = { id: o.id, type: 'message', role: 'assistant', status: 'in_progress', content: [] }
		output.push(item)
		frames.push(frame('response.output_item.added', { output_index: out, item }))
		frames.push(frame('response.content_part.added', { item_id: o.id, output_index: out, content_index: 0, part: emptyPart(refusal) }))
		if (refusal) refused = true
		return o
	}

	function openBlock(ev: Extract<StreamEvent, { type: 'block_start' }>) {
		const b = ev.block
		// No output item for MCP blocks, nor an end to the message before them (see encodeOutput in response.ts); their
		// deltas find nothing open.
		if (b.kind === 'mcp_tool_use' || b.kind === 'mcp_tool_result') return
		const last = stopped
		if (b.kind === 'text' && !b.refusal && !open && last?.kind === 'text' && !last.refusal) {
			// The text goes on: the block continues the message's part.
			annotate(last)
			Object.assign(last, { index: ev.index, start: last.text.length })
			open = last
			stopped = undefined
			return
		}
		settle('completed')
		const out = output.length
		if (b.kind === 'text') {
			open = openMessage(ev.index, b.refusal === true)
			return
		}
		let item: ResponsesOutputItem
		if (b.kind === 'thinking') {
			open = { kind: 'thinking', index: ev.index, out, id: newId('rs_'), text: '' }
			item = { id: open.id, type: 'reasoning', summary: [] }
		} else if (b.kind === 'redacted_thinking') {
			item = { id: newId('rs_'), type: 'reasoning', summary: [], encrypted_content: REDACTED_MARK + b.data }
			open = { kind: 'redacted', index: ev.index, out, item }
		} else if (b.kind === 'web_search') {
			const search = webSearchItem({ type: 'web_search', id: b.id, queries: b.queries, sources: b.sources })
			open = { kind: 'search', index: ev.index, out, item: search }
			item = { id: search.id, type: 'web_search_call', status: 'in_progress' }
		} else {
			open = { kind: 'call', index: ev.index, out, id: newId('fc_'), callId: callIdOut(b.id, b.signature, calls++), name: b.name, args: '' }
			item = { id: open.id, type: 'function_call', status: 'in_progress', call_id: open.callId, name: b.name, arguments: '' }
		}
		output.push(item)
		frames.push(frame('response.output_item.added', { output_index: out, item }))
	}

	/**
	 * The answer ended refused but no refusal part went out (the upstream said so only at the end): a refusal part of
	 * the `explanation` (else empty) follows the last message's text, or, when the answer has no text message last, a
	 * message of its own carries it.
	 */
	function endRefused(explanation = '') {
		if (refused) return
		const last = stopped ?? open
		if (last?.kind === 'text') {
			last.endsRefused = explanation
			return
		}
		settle('completed')
		const o = openMessage(-1, true)
		if (explanation) {
			o.text = explanation
			frames.push(frame('response.refusal.delta', { item_id: o.id, output_index: o.out, content_index: 0, delta: explanation }))
		}
		stopped = o
	}

	function fail(err: GatewayError) {
		// The item the failure cut is not `completed` (QA: a cut message was marked completed before `error`).
		settle('incomplete')
		const e = errorBody(err).error
		frames.push(frame('error', { code: e.code, message: e.message, param: e.param }))
		frames.push(frame('response.failed', { response: snapshot('failed', { error: { code: failedCode(err), message: e.message } }) }))
	}

	return {
		push(ev, out) {
			if (over) return
			frames = out
			if (ev.type === 'ping') return
			begin(ev)
			switch (ev.type) {
				case 'start':
					if (ev.usage) addUsage(ev.usage)
					break
				case 'usage':
					addUsage(ev.usage)
					break
				case 'block_start':
					openBlock(ev)
					break
				case 'text_delta':
					if (open?.kind === 'text' && ev.text) {
						open.text += ev.text
						const at = { item_id: open.id, output_index: open.out, content_index: 0, delta: ev.text }
						// Each piece's log probabilities with it (OpenAI's `response.output_text.delta.logprobs`), all of them on `…done`.
						const logprobs = logprobEntries(ev.logprobs)
						open.logprobs.push(...logprobs)
						frames.push(open.refusal ? frame('response.refusal.delta', at) : frame('response.output_text.delta', { ...at, logprobs }))
					}
					break
				case 'citation':
					if (open?.kind === 'text' && !open.refusal) open.citations.push(ev.citation)
					break
				case 'thinking_delta':
					if (open?.kind === 'thinking' && ev.text) {
						const at = { item_id: open.id, output_index: open.out, summary_index: 0 }
						if (!open.text) frames.push(frame('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } }))
						open.text += ev.text
						frames.push(frame('response.reasoning_summary_text.delta', { ...at, delta: ev.text }))
					}
					break
				case 'signature_delta':
					if (open?.kind === 'thinking') open.signature = ev.signature
					break
				case 'json_delta':
					if (open?.kind === 'call' && ev.json) {
						open.args += ev.json
						frames.push(frame('response.function_call_arguments.delta', { item_id: open.id, output_index: open.out, delta: ev.json }))
					}
					break
				case 'block_stop':
					if (open?.index === ev.index) {
						stopped = open
						open = undefined
					}
					break
				case 'finish': {
					if (ev.reason === 'refusal') endRefused(ev.refusal)
					const end = encodeEnd(ev.reason)
					// The item the limit (or a filter) cut is `incomplete`, as OpenAI marks it; those before it were whole.
					settle(end.status)
					frames.push(frame(end.status === 'completed' ? 'response.completed' : 'response.incomplete', { response: snapshot(end.status, { incompleteReason: end.reason }) }))
					over = true
					break
				}
				case 'error':
					fail(ev.error)
					over = true
					break
			}
		},
		end(out) {
			if (over) return
			over = true
			frames = out
			// Upstream decoders end a cut stream with `error`; reaching here means the event source stopped early.
			begin({ type: 'ping' })
			fail(new GatewayError('upstream', 'upstream stream ended unexpectedly', { retryable: true }))
		},
		get done() {
			return over
		},
	}
}

export const encodeStream = (events: AsyncIterable<StreamEvent>, ctx: EncodeContext): AsyncGenerator<SseFrame> => runMachine(streamEncoder(ctx), events)
