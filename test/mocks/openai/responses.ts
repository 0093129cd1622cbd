/**
 * POST /v1/responses, non-stream and stream. The stream follows the documented event order:
 * response.created → response.in_progress → per item (output_item.added → content_part.added → output_text.delta* →
 * output_text.done → content_part.done → output_item.done; function calls use function_call_arguments.delta/done)
 * → response.completed (or response.incomplete), each with a `sequence_number`; no `[DONE]`.
 * @module
 */

import { asArr, asObj, type Obj } from '../shared/json'
import { frame, json, type JsonReply, sse, type Reply } from '../shared/reply'
import { plan, type Plan } from '../shared/scenario'
import { base64, fragments, splitPieces, stableId, unixNow } from '../shared/text'
import { checkFunctionName, checkModel, checkUser, openaiError, requireObject } from './errors'
import { checkReasoningEffort, checkSampling } from './reasoning-models'
import { checkInput, checkJsonMode, readResponses } from './responses-read'
import { checkItemReferences, priorContext, type ResponsesStore, storeResponse } from './responses-store'
import { servedTier } from './service-tier'
import { checkFormatRoot } from './strict-schema'

interface Ids {
	resp: string
	rs: string
	ws: (i: number) => string
	msg: string
	fc: (i: number) => string
	call: (i: number) => string
}

/**
 * Searches the built-in web search tool runs: two for `#search` in the last user text when a `web_search` (or
 * `web_search_preview`) tool is offered, each a `web_search_call` output item (billed per call by OpenAI).
 */
function webSearches(b: Obj, lastUserText: string): string[] {
	if (!lastUserText.includes('#search')) return []
	if (!asArr(b.tools).some((t) => /^web_search/.test(String(asObj(t)?.type)))) return []
	return ['first query', 'second query']
}

/**
 * The documented search output (https://platform.openai.com/docs/guides/tools-web-search): a `web_search_call` item
 * per search, whose `action.sources` (the pages found) are listed only when `include` asks for
 * `web_search_call.action.sources`.
 */
function searchItem(query: string, i: number, ids: Ids, b: Obj): Obj {
	const action: Obj = { type: 'search', query }
	if (asArr(b.include).includes('web_search_call.action.sources')) action.sources = [{ type: 'url', url: `https://example.com/page-${i + 1}` }]
	return { id: ids.ws(i), type: 'web_search_call', status: 'completed', action }
}

/**
 * A searched answer's citation: one `url_citation` of the first page, spanning the answer from `#cited-tail` on (else
 * all of it), its indices characters of the output text: code points, as OpenAI's Python SDK slices `text[start_index:end_index]`.
 */
function annotationsOf(p: Plan, searches: string[]): Obj[] {
	if (!searches.length || p.finish === 'refusal' || p.calls.length > 0) return []
	const start = [...p.text.slice(0, Math.max(0, p.text.indexOf('#cited-tail')))].length
	return [{ type: 'url_citation', start_index: start, end_index: [...p.text].length, url: 'https://example.com/page-1', title: 'Page 1' }]
}

/** Output items of a finished response (web searches, reasoning, message, function calls). */
function outputItems(p: Plan, ids: Ids, b: Obj, searches: string[] = []): Obj[] {
	const items: Obj[] = []
	searches.forEach((query, i) => items.push(searchItem(query, i, ids, b)))
	if (p.thinking) {
		const reasoning = asObj(b.reasoning)
		const item: Obj = { id: ids.rs, type: 'reasoning', summary: reasoning?.summary ? [{ type: 'summary_text', text: p.thinking }] : [] }
		if (asArr(b.include).includes('reasoning.encrypted_content')) item.encrypted_content = base64(`mock-reasoning:${p.thinking}`)
		items.push(item)
	}
	if (p.calls.length === 0) {
		const status = p.finish === 'length' ? 'incomplete' : 'completed'
		// A refusal is a `refusal` content part rather than output_text.
		const part = p.finish === 'refusal' ? { type: 'refusal', refusal: p.text } : { type: 'output_text', text: p.text, annotations: annotationsOf(p, searches), logprobs: [] }
		items.push({ id: ids.msg, type: 'message', status, role: 'assistant', content: [part] })
	}
	p.calls.forEach((c, i) => items.push({ id: ids.fc(i), type: 'function_call', status: 'completed', arguments: c.json, call_id: ids.call(i), name: c.name }))
	return items
}

/**
 * Responses usage: `input_tokens` includes cached tokens and cache writes, `output_tokens` includes reasoning tokens.
 * Writes, as GPT-5.6 and later report them, by TTL: 30 minutes unless 12 hours were asked for.
 */
const usageOf = (p: Plan): Obj => ({
	input_tokens: p.usage.input,
	input_tokens_details: { cached_tokens: p.usage.cached, ...writesOf(p) },
	output_tokens: p.usage.output,
	output_tokens_details: { reasoning_tokens: p.usage.reasoning },
	total_tokens: p.usage.input + p.usage.output,
})

function writesOf(p: Plan): Obj | undefined {
	const written = p.usage.cacheWrite ?? 0
	if (written === 0) return undefined
	const long = p.usage.cacheWriteLong ?? 0
	return { cache_write_tokens: written, cache_write_tokens_details: { ttl_30m_tokens: written - long, ttl_12h_tokens: long } }
}

const conversationOf = (c: unknown): Obj | null => (typeof c === 'string' ? { id: c } : typeof asObj(c)?.id === 'string' ? { id: asObj(c)!.id } : null)

function responseObject(p: Plan | undefined, ids: Ids, b: Obj, created: number, searches: string[] = []): Obj {
	const done = p !== undefined
	const incomplete = p?.finish === 'length'
	return {
		id: ids.resp,
		object: 'response',
		created_at: created,
		status: !done ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
		error: null,
		incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
		instructions: b.instructions ?? null,
		max_output_tokens: b.max_output_tokens ?? null,
		model: b.model,
		output: p ? outputItems(p, ids, b, searches) : [],
		parallel_tool_calls: b.parallel_tool_calls ?? true,
		previous_response_id: b.previous_response_id ?? null,
		// The conversation the request named (a string or `{id}`), else null.
		conversation: conversationOf(b.conversation),
		reasoning: { effort: asObj(b.reasoning)?.effort ?? null, summary: asObj(b.reasoning)?.summary ?? null },
		store: b.store ?? true,
		temperature: b.temperature ?? 1,
		// OpenAI echoes `text` with the format filled in (`text: {verbosity}` alone comes back with `format: {type: 'text'}`).
		text: { format: { type: 'text' }, ...asObj(b.text) },
		tool_choice: b.tool_choice ?? 'auto',
		tools: b.tools ?? [],
		top_p: b.top_p ?? 1,
		truncation: b.truncation ?? 'disabled',
		usage: p ? usageOf(p) : null,
		service_tier: servedTier(b.service_tier, JSON.stringify(b.input ?? '')),
		user: b.user ?? null,
		metadata: b.metadata ?? {},
	}
}

function streamEvents(p: Plan, ids: Ids, b: Obj, created: number, searches: string[]): Obj[] {
	const out: Obj[] = []
	const emit = (type: string, data: Obj) => out.push({ type, sequence_number: out.length, ...data })
	emit('response.created', { response: responseObject(undefined, ids, b, created) })
	emit('response.in_progress', { response: responseObject(undefined, ids, b, created) })
	const items = outputItems(p, ids, b, searches)
	items.forEach((item, output_index) => {
		const at = { item_id: item.id, output_index }
		if (item.type === 'web_search_call') {
			emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', action: { type: 'search' } } })
			for (const step of ['in_progress', 'searching', 'completed']) emit(`response.web_search_call.${step}`, at)
		} else if (item.type === 'reasoning') {
			emit('response.output_item.added', { output_index, item: { ...item, summary: [] } })
			if (asArr(item.summary).length > 0) {
				emit('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } })
				for (const d of splitPieces(p.thinking)) emit('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: d })
				emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: p.thinking })
				emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: p.thinking } })
			}
		} else if (item.type === 'message') {
			emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } })
			if (p.finish === 'refusal') {
				// A refusal part streams as response.refusal.delta/done.
				emit('response.content_part.added', { ...at, content_index: 0, part: { type: 'refusal', refusal: '' } })
				for (const d of splitPieces(p.text)) emit('response.refusal.delta', { ...at, content_index: 0, delta: d })
				emit('response.refusal.done', { ...at, content_index: 0, refusal: p.text })
				emit('response.content_part.done', { ...at, content_index: 0, part: { type: 'refusal', refusal: p.text } })
			} else {
				const part = { type: 'output_text', text: '', annotations: [], logprobs: [] }
				emit('response.content_part.added', { ...at, content_index: 0, part })
				for (const d of splitPieces(p.text)) emit('response.output_text.delta', { ...at, content_index: 0, delta: d, logprobs: [] })
				// A searched answer's citations come after its text, before output_text.done.
				const annotations = annotationsOf(p, searches)
				annotations.forEach((annotation, annotation_index) => emit('response.output_text.annotation.added', { ...at, content_index: 0, annotation_index, annotation }))
				emit('response.output_text.done', { ...at, content_index: 0, text: p.text, logprobs: [] })
				emit('response.content_part.done', { ...at, content_index: 0, part: { ...part, text: p.text, annotations } })
			}
		} else {
			const args = String(item.arguments)
			emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } })
			for (const d of fragments(args, 3)) emit('response.function_call_arguments.delta', { ...at, delta: d })
			emit('response.function_call_arguments.done', { ...at, arguments: args })
		}
		emit('response.output_item.done', { output_index, item })
	})
	const final = responseObject(p, ids, b, created, searches)
	emit(p.finish === 'length' ? 'response.incomplete' : 'response.completed', { response: final })
	return out
}

/** Responses answered by this process's mocks. */
let served = 0

/** Handles a Responses call whose auth already passed; a stored response goes into `store`. */
export function responses(body: unknown, jsonError: boolean, models: string[] | undefined, store: ResponsesStore): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	const invalid = checkModel(b.model, models) ?? checkUser(b.user) ?? checkResponsesToolNames(b.tools) ?? checkInput(b) ?? checkValues(b) ?? checkJsonMode(b) ?? checkFormatRoot(b) ?? checkBackgroundWindow(b) ?? checkReasoningEffort(b.model, asObj(b.reasoning)?.effort, 'reasoning.effort') ?? checkSampling(b, asObj(b.reasoning)?.effort)
	if (invalid) return invalid
	const unknownItem = checkItemReferences(store, b)
	if (unknownItem) return unknownItem
	const conv = readResponses(b)
	// A continuation's input is the conversation it continues as well as its own (billed so by OpenAI).
	conv.inputTexts.unshift(...priorContext(store, b))
	const p = plan(conv)
	// Ids are OpenAI's: unique to each response (two accounts asking the same thing get different ones), so the serial.
	const seed = `${conv.lastUserText}|${conv.inputTexts.length}|${++served}`
	const ids: Ids = {
		resp: stableId('resp_', seed, 32),
		rs: stableId('rs_', seed, 32),
		ws: (i) => stableId('ws_', `${seed}|${i}`, 32),
		msg: stableId('msg_', seed, 32),
		fc: (i) => stableId('fc_', `${seed}|${i}`, 32),
		call: (i) => stableId('call_', `${seed}|${i}`),
	}
	const created = unixNow()
	const searches = webSearches(b, conv.lastUserText)
	const events = streamEvents(p, ids, b, created, searches)
	const answer = storeResponse(store, b, responseObject(p, ids, b, created, searches), events, conv.inputTexts)
	if (b.stream === true) return sse(events.map((e) => frame(e, String(e.type))), 1)
	return json(answer)
}

/**
 * The discounted completion windows of background mode (`background_options.completion_window` `2h`, `8h`) "require
 * `background: true`, Standard processing, and `stream: false` or omitted" (openai-node 7.58's documentation of the
 * field). OpenAI's words for the refusal are not documented; these are the mock's own.
 */
function checkBackgroundWindow(b: Obj): JsonReply | undefined {
	const window = asObj(b.background_options)?.completion_window
	if (window !== '2h' && window !== '8h') return undefined
	const why = b.background !== true ? 'requires `background: true`' : b.stream === true ? 'cannot be streamed' : b.service_tier !== undefined && b.service_tier !== 'auto' && b.service_tier !== 'default' ? 'requires Standard processing' : undefined
	if (why) return openaiError(400, `The '${window}' completion window ${why}.`, 'background_options.completion_window', 'invalid_value')
}

/** What `include` may ask for (openai-node 7.59 `ResponseIncludable`). */
const INCLUDABLE = [
	'file_search_call.results',
	'web_search_call.results',
	'web_search_call.action.sources',
	'message.input_image.image_url',
	'computer_call_output.output.image_url',
	'code_interpreter_call.outputs',
	'reasoning.encrypted_content',
	'message.output_text.logprobs',
]

/** The tiers `service_tier` may name (openai-node 7.59 `ServiceTier`). */
const TIERS = ['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast']

/**
 * OpenAI's 400s for `include` (an array of its documented values), `service_tier` (one of its tiers), `max_tool_calls`
 * (at least 1) and a `function_call` input item without `arguments`, with its codes.
 */
function checkValues(b: Obj): JsonReply | undefined {
	if (b.include !== undefined && b.include !== null) {
		if (!Array.isArray(b.include)) return openaiError(400, `Invalid type for 'include': expected an array of strings, but got ${typeof b.include === 'object' ? 'an object' : `a ${typeof b.include}`} instead.`, 'include', 'invalid_type')
		for (const [i, v] of b.include.entries())
			if (!INCLUDABLE.includes(v)) return openaiError(400, `Invalid value: '${String(v)}'. Supported values are: ${INCLUDABLE.map((x) => `'${x}'`).join(', ')}.`, `include[${i}]`, 'invalid_value')
	}
	if (b.service_tier !== undefined && b.service_tier !== null && !TIERS.includes(b.service_tier as string))
		return openaiError(400, `Invalid value: '${String(b.service_tier)}'. Supported values are: ${TIERS.map((x) => `'${x}'`).join(', ')}.`, 'service_tier', 'invalid_value')
	if (typeof b.max_tool_calls === 'number' && b.max_tool_calls < 1)
		return openaiError(400, `Invalid 'max_tool_calls': integer below minimum value. Expected a value >= 1, but got ${b.max_tool_calls} instead.`, 'max_tool_calls', 'integer_below_min_value')
	for (const [i, item] of asArr(b.input).entries())
		if (asObj(item)?.type === 'function_call' && asObj(item)?.arguments === undefined)
			return openaiError(400, `Missing required parameter: 'input[${i}].arguments'.`, `input[${i}].arguments`, 'missing_required_parameter')
}

/** Every function tool's name as OpenAI takes it (Responses tools are flat: `tools[0].name`). */
function checkResponsesToolNames(tools: unknown): JsonReply | undefined {
	for (const [i, t] of (Array.isArray(tools) ? tools : []).entries()) {
		const tool = asObj(t)
		const bad = tool?.type === 'function' ? checkFunctionName(tool.name, `tools[${i}].name`) : undefined
		if (bad) return bad
	}
}
