/**
 * `response` objects ⇄ canonical response (https://platform.openai.com/docs/api-reference/responses/object).
 * Output order is content order: each thinking part is a `reasoning` item, each run of text one `message` item with
 * one `output_text` part, each tool call a `function_call` item (its `call_id` carries a packed Gemini signature, as
 * OpenAI chat tool-call ids do, and marks the later calls of one answer: call-ids.ts).
 * @module
 */
import { codePoints } from '../../core/citations'
import { GatewayError } from '../../core/errors'
import type { ChatResponse, TokenLogprob, Usage } from '../../core/ir'
import { emptyUsage } from '../../core/ir'
import { newId } from '../../lib/ids'
import type { EncodeContext } from '../codec'
import { parseArguments } from '../openai-chat/content'
import { count, isObject, str, type Json } from '../openai-chat/guards'
import { encodeLogprobs } from '../openai-chat/logprobs'
import type { ResponsesOutputItem, ResponsesResponse } from './model'
import { callIdIn, callIdOut } from './call-ids'
import { decodeReasoningItem, encodeReasoningItem } from './reasoning'
import { tierField } from '../openai-chat/usage'
import { decodeEnd, decodeUsage, encodeEnd, encodeUsage } from './usage'
import { decodeAnnotations, decodeWebSearchItem, urlCitation, webSearchItem } from './web-search'

/** Keeps an upstream id that already looks like a Responses id; other vendors' ids get a fresh one. */
export const responseId = (id: string | undefined): string => (id?.startsWith('resp_') ? id : newId('resp_'))

export type Envelope = {
	id: string
	created: number
	model: string
	status: 'in_progress' | 'completed' | 'incomplete' | 'failed'
	output: ResponsesOutputItem[]
	usage?: Usage
	incompleteReason?: string
	error?: { code: string | null; message: string }
}

/**
 * A full `response` object. Request echo fields hold neutral defaults (`store` false, `previous_response_id` null):
 * the codec sees only the answer; the responses module echoes the request's settings over them (modules/responses/echo.ts).
 */
export function envelope(e: Envelope): ResponsesResponse {
	return {
		id: e.id,
		object: 'response',
		created_at: e.created,
		status: e.status,
		background: false,
		error: e.error ?? null,
		incomplete_details: e.incompleteReason ? { reason: e.incompleteReason } : null,
		instructions: null,
		max_output_tokens: null,
		// Always present on OpenAI's Response object: the request's cap on built-in tool calls (echo.ts), else null.
		max_tool_calls: null,
		model: e.model,
		output: e.output,
		parallel_tool_calls: true,
		previous_response_id: null,
		reasoning: { effort: null, summary: null },
		store: false,
		temperature: null,
		text: { format: { type: 'text' } },
		tool_choice: 'auto',
		tools: [],
		top_p: null,
		truncation: 'disabled',
		usage: e.usage ? encodeUsage(e.usage) : null,
		user: null,
		metadata: {},
		// The tier that served it, always present as on OpenAI's: another vendor's standard tier is OpenAI's `default`
		// (what OpenAI answers for `auto`), a tier priced apart its name.
		service_tier: 'default',
		...(e.usage && tierField(e.usage)),
	}
}

/** Canonical log probabilities → the entries of `output_text.logprobs` (chat's `logprobs.content` entries). */
export const logprobEntries = (list: TokenLogprob[] | undefined) => encodeLogprobs(list)?.content ?? []

/** How many of `entries` (from the first) spell `length` UTF-16 units of text: a token that straddles the end is the text's. */
function tokensSpelling(entries: Array<{ token: string }>, length: number): number {
	let n = 0
	for (let at = 0; n < entries.length && at < length; n++) at += entries[n]!.token.length
	return n
}

/**
 * Canonical content → output items, with fresh item ids. An answer that ended in a refusal (Anthropic
 * `stop_reason: "refusal"`, OpenAI's `refusal` field) keeps its text as `output_text` and ends its last message with a
 * `refusal` part of the refusal's explanation (`refusal`, else empty); when its last item is not a message (a call,
 * reasoning), a message of that refusal part alone follows, so the client still learns it was refused. The same items
 * as a stream of the answer ends with (stream-encode.ts), where the refusal is known only once the text went out. Empty
 * text makes no message, as in a stream, where the upstream decoders drop empty text blocks.
 */
export function encodeOutput(
	content: ChatResponse['content'],
	stopReason?: ChatResponse['stopReason'],
	logprobs?: TokenLogprob[],
	refusal?: string,
): ResponsesOutputItem[] {
	const items: ResponsesOutputItem[] = []
	// The answer's log probabilities are of its text, in order: each message takes the tokens that spell its own text
	// (as a stream puts each delta's on its message), the last one any left over.
	let pending = logprobEntries(logprobs)
	let last: Extract<ResponsesOutputItem, { type: 'message' }> | undefined
	const refused = stopReason === 'refusal'
	let text: string | undefined
	let annotations: Json[] = []
	let calls = 0
	const message = (text: string): ResponsesOutputItem => {
		const take = tokensSpelling(pending, text.length)
		const lp = pending.slice(0, take)
		pending = pending.slice(take)
		return (last = {
			id: newId('msg_'),
			type: 'message',
			role: 'assistant',
			status: 'completed',
			content: [{ type: 'output_text', text, annotations: annotations.splice(0), logprobs: lp }],
		})
	}
	const flush = () => {
		// Claude's empty text block before a call (a stream has none: its decoder drops it) is no message.
		if (text) items.push(message(text))
		text = undefined
	}
	for (const p of content) {
		if (p.type === 'text') {
			// Each part's citations at its place in the message's one text (OpenAI's `url_citation` spans).
			for (const c of p.citations ?? []) annotations.push(urlCitation(c, codePoints(text ?? ''), p.text))
			text = (text ?? '') + p.text
			continue
		}
		if (p.type === 'web_search') {
			flush()
			items.push(webSearchItem(p))
			continue
		}
		// MCP connector parts are left out: a Responses client declares MCP servers as `tools` of type `mcp`, which
		// the gateway does not run (src/mcp serves the messages and chat-completions protocols).
		if (p.type === 'mcp_tool_use' || p.type === 'mcp_tool_result') continue
		flush()
		if (p.type === 'tool_call')
			items.push({ id: newId('fc_'), type: 'function_call', status: 'completed', call_id: callIdOut(p.id, p.signature, calls++), name: p.name, arguments: JSON.stringify(p.input) })
		else items.push(encodeReasoningItem(p, newId('rs_')))
	}
	flush()
	// Tokens past the text they spell (a vendor's count that does not add up) stay with the answer, on its last message.
	const tail = last?.content[0]
	if (pending.length && tail?.type === 'output_text') tail.logprobs = [...(tail.logprobs ?? []), ...pending]
	if (refused) {
		const last = items.at(-1)
		const part = { type: 'refusal' as const, refusal: refusal ?? '' }
		if (last?.type === 'message') {
			// A refusal whose words the upstream also gave as text (OpenAI's `refusal` field) is that part, not repeated.
			const head = last.content[0]
			if (refusal && head?.type === 'output_text' && head.text.endsWith(refusal)) {
				head.text = head.text.slice(0, -refusal.length)
				if (!head.text) last.content = []
			}
			last.content.push(part)
		} else items.push({ id: newId('msg_'), type: 'message', role: 'assistant', status: 'completed', content: [part] })
	}
	// The item the limit (or a filter) cut is `incomplete`, as OpenAI marks it; those before it were whole.
	const cut = items.at(-1)
	if (cut && stopReason && encodeEnd(stopReason).status === 'incomplete' && (cut.type === 'message' || cut.type === 'function_call')) cut.status = 'incomplete'
	return items
}

/** Canonical response → client `response` object, with `model` set to the name the client asked for. */
export function encodeResponse(res: ChatResponse, ctx: EncodeContext): ResponsesResponse {
	const end = encodeEnd(res.stopReason)
	return envelope({
		id: responseId(res.id),
		created: res.created ?? Math.floor(Date.now() / 1000),
		model: ctx.model,
		status: end.status,
		incompleteReason: end.reason,
		output: encodeOutput(res.content, res.stopReason, res.logprobs, res.refusal),
		usage: res.usage,
	})
}

/** The upstream's error object (of a failed response) as a GatewayError. */
export function failedError(error: unknown): GatewayError {
	const e = isObject(error) ? error : {}
	return new GatewayError('upstream', str(e.message) ?? 'the upstream response failed', { code: str(e.code) ?? 'upstream_error', retryable: true })
}

/** Output items → canonical content, plus what the stop reason depends on. */
export function decodeOutput(output: unknown): { content: ChatResponse['content']; sawTool: boolean; sawRefusal: boolean; refusal?: string } {
	const content: ChatResponse['content'] = []
	let sawTool = false
	let sawRefusal = false
	let refusal: string | undefined
	for (const [i, item] of (Array.isArray(output) ? output : []).entries()) {
		if (!isObject(item)) continue
		if (item.type === 'reasoning') {
			const part = decodeReasoningItem(item, `output[${i}]`)
			if (part) content.push(part)
		} else if (item.type === 'function_call') {
			const { id, signature } = callIdIn(str(item.call_id) || newId('call_'))
			content.push({ type: 'tool_call', id, name: str(item.name) ?? '', input: parseArguments(item.arguments), ...(signature && { signature }) })
			sawTool = true
		} else if (item.type === 'message') {
			for (const c of (Array.isArray(item.content) ? item.content : []).filter(isObject)) {
				const text = c.type === 'output_text' ? str(c.text) : c.type === 'refusal' ? str(c.refusal) : undefined
				if (c.type === 'refusal') {
					sawRefusal = true
					if (text) refusal = (refusal ?? '') + text
				}
				const citations = c.type === 'output_text' ? decodeAnnotations(c.annotations, text) : []
				if (text) content.push(citations.length ? { type: 'text', text, citations } : { type: 'text', text })
			}
		} else if (item.type === 'web_search_call') {
			const search = decodeWebSearchItem(item)
			if (search) content.push(search)
		}
	}
	return { content, sawTool, sawRefusal, ...(refusal && { refusal }) }
}

/** Upstream `response` → canonical response. A failed response is an upstream error. */
export function decodeResponse(body: unknown): ChatResponse {
	if (!isObject(body)) throw new GatewayError('upstream', 'upstream returned a malformed response object', { retryable: true })
	if (body.status === 'failed' || (isObject(body.error) && body.status !== 'completed')) throw failedError(body.error)
	const { content, sawTool, sawRefusal, refusal } = decodeOutput(body.output)
	const res: ChatResponse = {
		id: str(body.id) || newId('resp_'),
		model: str(body.model) ?? '',
		content,
		stopReason: decodeEnd(body.status, body.incomplete_details, sawTool, sawRefusal),
		usage: usageOf(body) ?? emptyUsage(),
	}
	if (refusal && res.stopReason === 'refusal') res.refusal = refusal
	const created = count(body.created_at)
	if (created) res.created = created
	return res
}

/**
 * Usage of an upstream `response` body without a full decode (passthrough billing), with the web searches its
 * built-in tool ran: OpenAI bills each `web_search_call` that searched per call on top of tokens
 * (platform.openai.com/docs/pricing, "Built-in tools"); opening a page or finding in one is not a search.
 */
export function usageOf(body: unknown): Usage | undefined {
	if (!isObject(body)) return undefined
	const usage = decodeUsage(body.usage, body.service_tier)
	const searches = Array.isArray(body.output) ? body.output.filter(isSearchCall).length : 0
	if (usage && searches > 0) usage.webSearches = searches
	return usage
}

/** A `web_search_call` item that searched (billed per call); opening a page or finding in one is not a search. */
export const isSearchCall = (item: unknown): boolean => isObject(item) && item.type === 'web_search_call' && (!isObject(item.action) || item.action.type === 'search')
