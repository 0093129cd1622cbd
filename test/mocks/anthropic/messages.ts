/**
 * POST /v1/messages (non-stream and stream) and /v1/messages/count_tokens.
 * Stream order (docs.anthropic.com/en/api/messages-streaming): message_start (usage with input and cache fields)
 * → per block content_block_start → content_block_delta* → content_block_stop (a `ping` after the first start)
 * → message_delta (stop_reason, cumulative usage) → message_stop; every frame has an `event:` line; no [DONE].
 * @module
 */

import { asObj, type Obj } from '../shared/json'
import { frame, json, sse, type Reply } from '../shared/reply'
import { inputTokens, plan, type Finish, type Plan } from '../shared/scenario'
import { fragments, splitPieces, stableId, toolWords } from '../shared/text'
import { type CodeRun, type ContainerStore, runCode } from './code-execution'
import { checkContext } from './context'
import { invalid } from './errors'
import type { FileStore } from './files'
import { checkMessages, readMessages, thinkingSignature } from './read'
import { cachedPlan, type PromptCacheStore } from './prompt-cache'
import { threaded, type ThreadStore } from './threads'

const STOP: Record<Finish, string> = { stop: 'end_turn', stop_sequence: 'stop_sequence', length: 'max_tokens', tool_calls: 'tool_use', refusal: 'refusal' }

/**
 * `input_tokens` excludes cache reads and writes, which are reported apart (writes by TTL in `cache_creation`:
 * 5-minute ones, or 1-hour ones on `#write-cache-1h`). `message_start` carries a provisional `output_tokens: 1`; the final counts (message_delta,
 * non-stream) are totals, not increments. `searches` web searches the server tool ran are counted in the final
 * `server_tool_use.web_search_requests` (billed per search by Anthropic). `speed` and `inference_geo` (`served`) are
 * fields of a message's usage and not of `message_delta`'s (anthropic-sdk `MessageDeltaUsage`).
 */
function usageOf(p: Plan, final: boolean, searches = 0, served?: Served): Obj {
	const written = p.usage.cacheWrite ?? 0
	const hour = p.usage.cacheWriteLong ?? 0
	return {
		input_tokens: p.usage.input - p.usage.cached - written,
		cache_creation_input_tokens: written,
		cache_read_input_tokens: p.usage.cached,
		cache_creation: { ephemeral_5m_input_tokens: written - hour, ephemeral_1h_input_tokens: hour },
		output_tokens: final ? p.usage.output : 1,
		output_tokens_details: { thinking_tokens: final ? p.usage.reasoning : 0 },
		server_tool_use: final && searches > 0 ? { web_search_requests: searches } : null,
		service_tier: 'standard',
		...(served && { inference_geo: served.geo, speed: served.speed }),
	}
}

/** How the request was served: its `speed` (`fast` in fast mode) and where it ran (`us` when asked, else `global`). */
type Served = { speed: string; geo: string }

const toolUseId = (seed: string, i: number): string => stableId('toolu_', `${seed}|${i}`)

/**
 * The final content blocks, in order: thinking, text (before calls only on `#preface`), tool_use. With
 * `thinking.display: 'omitted'` the thinking block keeps only its signature (empty text), as the API returns it.
 */
function contentOf(p: Plan, seed: string, omitted: boolean, searches = 0): Obj[] {
	const blocks: Obj[] = []
	if (p.thinking) blocks.push({ type: 'thinking', thinking: omitted ? '' : p.thinking, signature: thinkingSignature(p.thinking) })
	blocks.push(...searchBlocks(seed, searches))
	if (p.calls.length === 0) blocks.push(...(searches > 0 ? citedText(p.text, seed) : [{ type: 'text', text: p.text }]))
	else if (p.text) blocks.push({ type: 'text', text: p.text }) // `#preface`: Claude says what it will do, then calls
	p.calls.forEach((c, i) => blocks.push({ type: 'tool_use', id: toolUseId(seed, i), name: c.name, input: c.args }))
	return blocks
}

/**
 * A code execution run's blocks open the content; its container is named on `message_delta` (`message_start` has
 * `container: null`), as a stream reports it.
 */
function streamFrames(p: Plan, message: Obj, seed: string, omitted: boolean, searches: number, run: CodeRun | undefined, served: Served): string[] {
	const out: string[] = []
	const emit = (type: string, data: Obj) => out.push(frame({ type, ...data }, type))
	emit('message_start', { message: { ...message, container: null, content: [], stop_reason: null, stop_sequence: null, usage: usageOf(p, false, 0, served) } })
	;[...(run?.blocks ?? []), ...contentOf(p, seed, omitted, searches)].forEach((block, index) => {
		const start = (content_block: Obj) => {
			emit('content_block_start', { index, content_block })
			// Anthropic sends a ping right after the first block opens (any number of pings may appear).
			if (index === 0) emit('ping', {})
		}
		if (block.type === 'thinking') {
			start({ type: 'thinking', thinking: '', signature: '' })
			for (const t of splitPieces(String(block.thinking))) emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: t } })
			// The signature arrives in its own delta just before the block stops.
			emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } })
		} else if (block.type === 'text') {
			// A cited block starts with `citations: []` and sends each citation as a citations_delta before its text.
			start(block.citations ? { type: 'text', text: '', citations: [] } : { type: 'text', text: '' })
			for (const c of (block.citations as Obj[] | undefined) ?? []) emit('content_block_delta', { index, delta: { type: 'citations_delta', citation: c } })
			for (const t of splitPieces(String(block.text))) emit('content_block_delta', { index, delta: { type: 'text_delta', text: t } })
		} else if (String(block.type).endsWith('_tool_result')) {
			// A server tool's result arrives whole in its content_block_start.
			start(block)
		} else {
			// tool_use (and server_tool_use) starts with `input: {}` and streams its JSON as input_json_delta fragments; an
			// empty input is one delta of `partial_json: ""`, not `{}` (what Anthropic sends for a tool without parameters).
			start({ ...block, input: {} })
			const json = JSON.stringify(block.input)
			for (const f of json === '{}' ? [''] : fragments(json, 3)) emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: f } })
		}
		emit('content_block_stop', { index })
	})
	const delta = { stop_reason: STOP[p.finish], stop_sequence: p.stopSequence ?? null, ...(run ? { container: run.container } : {}) }
	emit('message_delta', { delta, usage: usageOf(p, true, searches) })
	emit('message_stop', {})
	return out
}

/**
 * The web search tool's blocks (docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool), one pair per
 * search: `server_tool_use` (its query) then `web_search_tool_result` (the pages found, with Anthropic's encrypted
 * content and page age). The answer's text cites the first page (`web_search_result_location`).
 */
function searchBlocks(seed: string, searches: number): Obj[] {
	return Array.from({ length: searches }, (_, i) => {
		const id = stableId('srvtoolu_', `${seed}|search|${i}`)
		return [
			{ type: 'server_tool_use', id, name: 'web_search', input: { query: `mock query ${i + 1}` } },
			{ type: 'web_search_tool_result', tool_use_id: id, content: [{ type: 'web_search_result', url: `https://example.com/page-${i + 1}`, title: `Page ${i + 1}`, encrypted_content: `enc_${i + 1}`, page_age: 'April 1, 2026' }] },
		]
	}).flat()
}

/**
 * A searched answer's text: one block citing the first page; with `#cited-tail` in it, as Claude often answers, an
 * uncited block (the text before the tag) and then the cited one (the rest), each cited claim a block of its own.
 */
function citedText(text: string, seed: string): Obj[] {
	const at = text.indexOf('#cited-tail')
	if (at <= 0) return [{ type: 'text', text, citations: [citation(seed)] }]
	return [
		{ type: 'text', text: text.slice(0, at) },
		{ type: 'text', text: text.slice(at), citations: [citation(seed)] },
	]
}

const citation = (seed: string): Obj => ({ type: 'web_search_result_location', url: 'https://example.com/page-1', title: 'Page 1', encrypted_index: stableId('eidx_', seed), cited_text: 'what the page says' })

let threadedReplies = 0

/** Where the code execution tool keeps what it makes: this key's Files store and containers (code-execution.ts). */
export type CodeStores = { files: FileStore; containers: ContainerStore }

/**
 * Handles a Messages call whose headers already passed; `threads` keeps this mock's message threads (threads.ts),
 * `code` the files and containers of the code execution tool (code-execution.ts), `caches` the prompts automatic caching
 * wrote (prompt-cache.ts).
 */
export function messages(body: unknown, jsonError: boolean, version: string, models: string[] | undefined, headers: Headers, threads: ThreadStore, code?: CodeStores, caches?: PromptCacheStore): Reply {
	if (jsonError || !body || typeof body !== 'object' || Array.isArray(body)) return invalid('There was an issue with the JSON body of your request: it is not a valid JSON object.')
	const thread = threaded(body as Obj, headers, threads)
	if (thread && 'refused' in thread) return thread.refused
	const b = thread ? thread.body : (body as Obj)
	const bad = checkMessages(b, version)
	if (bad) return bad
	const speed = b.speed ?? 'standard'
	if (speed !== 'standard' && speed !== 'fast') return invalid(`speed: Input should be 'standard' or 'fast'`)
	const geo = b.inference_geo ?? 'global'
	if (geo !== 'global' && geo !== 'us') return invalid(`inference_geo: Input should be 'global' or 'us'`)
	const served: Served = { speed, geo }
	if (models && !models.includes(String(b.model))) return notFound(String(b.model))
	const conv = readMessages(b)
	const tooLong = checkContext(b, conv, headers)
	if (tooLong) return tooLong
	const p = caches ? cachedPlan(b, conv.inputTexts, plan(conv), caches) : plan(conv)
	const seed = `${conv.lastUserText}|${conv.inputTexts.length}`
	// A kept reply's id names one thread: unique, where the mock's other ids repeat for the same conversation.
	const id = stableId('msg_', thread ? `${seed}|thread|${++threadedReplies}` : seed)
	const ran = code ? runCode(b, conv.lastUserText, headers, code.files, code.containers) : undefined
	if (ran && 'refused' in ran) return ran.refused
	const message = { id, type: 'message', role: 'assistant', model: b.model, container: ran?.container ?? null, stop_details: null }
	const omitted = asObj(b.thinking)?.display === 'omitted'
	thread?.keep(id, contentOf(p, seed, false))
	const searches = webSearches(b, conv.lastUserText)
	if (b.stream === true) return sse(streamFrames(p, message, seed, omitted, searches, ran, served), 1)
	return json({
		...message,
		content: [...(ran?.blocks ?? []), ...contentOf(p, seed, omitted, searches)],
		stop_reason: STOP[p.finish],
		stop_sequence: p.stopSequence ?? null,
		usage: usageOf(p, true, searches, served),
	})
}

/**
 * Web searches run for `#search` when a `web_search_*` server tool is offered: two, or its `max_uses` if fewer, each
 * with its blocks (searchBlocks) and counted in the usage; the answer's text is the usual one, citing the first page.
 */
function webSearches(b: Obj, lastUserText: string): number {
	if (!lastUserText.includes('#search')) return 0
	const tool = (Array.isArray(b.tools) ? b.tools : []).map(asObj).find((t) => typeof t?.type === 'string' && t.type.startsWith('web_search_'))
	if (!tool) return 0
	return typeof tool.max_uses === 'number' ? Math.min(2, tool.max_uses) : 2
}

/** POST /v1/messages/count_tokens: `{ input_tokens }`, the same count `usage` reports (cache reads included). */
export function countTokens(body: unknown, jsonError: boolean, version: string, countTools = false): Reply {
	if (jsonError || !body || typeof body !== 'object' || Array.isArray(body)) return invalid('There was an issue with the JSON body of your request: it is not a valid JSON object.')
	const b = body as Obj
	const bad = checkMessages(b, version, true)
	if (bad) return bad
	const tools = countTools && Array.isArray(b.tools) ? toolWords(b.tools.map((t) => asObj(t) ?? {}).map((t) => ({ name: t.name, description: t.description, schema: t.input_schema }))) : 0
	return json({ input_tokens: inputTokens(readMessages(b)) + tools })
}

/** The 404 for a model the mock does not serve. */
export const notFound = (model: string): Reply => json({ type: 'error', error: { type: 'not_found_error', message: `model: ${model}` } }, 404)
