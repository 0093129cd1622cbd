/**
 * OpenAI's built-in web search in the Responses API ⇄ the canonical one (core/ir.ts `WebSearch`, `WebSearchPart`,
 * `Citation`): the `web_search` / `web_search_preview` tool (https://platform.openai.com/docs/guides/tools-web-search),
 * its `web_search_call` output items (`action: {type:"search", query, sources}`) and the `url_citation` annotations of
 * `output_text` (`start_index` / `end_index` into the part's text, in code points: core/citations.ts).
 * @module
 */
import { codePoints, codePointToUtf16 } from '../../core/citations'
import type { Citation, WebSearch, WebSearchPart, WebSource } from '../../core/ir'
import { newId } from '../../lib/ids'
import { isObject, str, strings, type Json } from '../openai-chat/guards'

/** `web_search`, `web_search_preview` and their dated versions (`web_search_2025_08_26`, `web_search_preview_2025_03_11`). */
export const isWebSearchType = (type: unknown): boolean => typeof type === 'string' && /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/.test(type)

/** A `user_location` of type approximate (Responses, Chat and Anthropic share its fields) → the canonical location. */
export function decodeLocation(v: unknown): WebSearch['userLocation'] | undefined {
	if (!isObject(v)) return undefined
	const loc = isObject(v.approximate) ? v.approximate : v // Chat nests the fields under `approximate`
	const out: NonNullable<WebSearch['userLocation']> = {}
	for (const k of ['city', 'region', 'country', 'timezone'] as const) if (str(loc[k])) out[k] = loc[k] as string
	return Object.keys(out).length ? out : undefined
}

/** A web search tool → the canonical search; `maxToolCalls` is the request's `max_tool_calls` (it caps built-in calls). */
export function decodeWebSearchTool(tool: Json, maxToolCalls: unknown): WebSearch {
	const ws: WebSearch = {}
	if (typeof maxToolCalls === 'number' && maxToolCalls >= 1) ws.maxUses = Math.floor(maxToolCalls)
	const allowed = isObject(tool.filters) ? strings(tool.filters.allowed_domains) : undefined
	if (allowed?.length) ws.allowedDomains = allowed
	const location = decodeLocation(tool.user_location)
	if (location) ws.userLocation = location
	return ws
}

/** The canonical search → a `web_search` tool (blocked domains it has no field for: Anthropic's alone). */
export function encodeWebSearchTool(ws: WebSearch): Json {
	const tool: Json = { type: 'web_search' }
	if (ws.allowedDomains?.length) tool.filters = { allowed_domains: ws.allowedDomains }
	if (ws.userLocation) tool.user_location = { type: 'approximate', ...ws.userLocation }
	return tool
}

/** A canonical search → a completed `web_search_call` item (its sources as OpenAI lists them: URLs only). */
export const webSearchItem = (p: WebSearchPart, id = newId('ws_')) => ({
	id,
	type: 'web_search_call' as const,
	status: 'completed',
	action: { type: 'search', query: p.queries[0] ?? '', ...(p.queries.length > 1 && { queries: p.queries }), sources: p.sources.map((s) => ({ type: 'url', url: s.url })) },
})

/** A `web_search_call` output item → a canonical search; an `open_page` or `find_in_page` action is no search (undefined). */
export function decodeWebSearchItem(item: Json): WebSearchPart | undefined {
	const a = isObject(item.action) ? item.action : {}
	if (a.type !== undefined && a.type !== 'search') return undefined
	const queries = strings(a.queries)?.length ? strings(a.queries)! : str(a.query) ? [a.query as string] : []
	const sources: WebSource[] = (Array.isArray(a.sources) ? a.sources : []).filter(isObject).flatMap((s) => (str(s.url) ? [{ url: s.url as string }] : []))
	return { type: 'web_search', id: str(item.id) ?? newId('ws_'), queries, sources }
}

/**
 * A citation → a `url_citation` annotation of a text that holds the part's `text` from code point `offset` on (a
 * citation with no span: the whole `text`). The canonical span counts UTF-16 units of `text`, OpenAI's code points.
 * @example urlCitation({ url: 'u', start: 3, end: 4 }, 0, '😀 x') // { type: 'url_citation', start_index: 2, end_index: 3, url: 'u', title: 'u' }
 */
export function urlCitation(c: Citation, offset: number, text: string): Json {
	const at = (units: number) => offset + codePoints(text.slice(0, units))
	return { type: 'url_citation', start_index: at(c.start ?? 0), end_index: at(c.end ?? text.length), url: c.url, title: c.title ?? c.url }
}

/**
 * The `url_citation` annotations of an `output_text` part → citations; given the part's `text`, the spans become its
 * UTF-16 offsets (OpenAI counts code points) and each quotes the span it cites (as Gemini's segments do: Anthropic's
 * `cited_text`), OpenAI quoting nothing of the page.
 */
export function decodeAnnotations(v: unknown, text?: string): Citation[] {
	return (Array.isArray(v) ? v : []).filter(isObject).flatMap((a): Citation[] => {
		if (a.type !== 'url_citation' || !str(a.url)) return []
		const c: Citation = { url: a.url as string }
		if (str(a.title)) c.title = a.title as string
		if (typeof a.start_index === 'number' && typeof a.end_index === 'number') {
			const [start, end] = text === undefined ? [a.start_index, a.end_index] : [codePointToUtf16(text, a.start_index), codePointToUtf16(text, a.end_index)]
			Object.assign(c, { start, end })
			const quoted = text?.slice(start, end)
			if (quoted) c.citedText = quoted
		}
		return [c]
	})
}
