/**
 * Anthropic's web search server tool ⇄ the canonical search (core/ir.ts `WebSearch`, `WebSearchPart`, `Citation`)
 * (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool): the tool
 * `{type:"web_search_20250305", name:"web_search", max_uses, allowed_domains | blocked_domains, user_location}`, the
 * answer's `server_tool_use` block (`input.query`) and `web_search_tool_result` block (`content[]` of
 * `web_search_result`: url, title, encrypted_content, page_age), and the `web_search_result_location` citations of its
 * text blocks (url, title, encrypted_index, cited_text), which cite the whole block.
 * @module
 */
import type { Citation, WebSearch, WebSearchPart, WebSource } from '../../core/ir'
import { str, strings } from '../openai-chat/guards'
import { decodeLocation } from '../openai-responses/web-search'
import { isObject, type Json } from './check'

/** `web_search_20250305` and later dated versions (`web_search_20260209`…). */
export const isWebSearchTool = (type: unknown): boolean => typeof type === 'string' && /^web_search_\d{8}$/.test(type)

/** The tool's name, fixed by Anthropic; a `tool_choice` naming it forces a search. */
export const WEB_SEARCH_NAME = 'web_search'

/** The server tool → the canonical search. */
export function decodeWebSearchTool(tool: Json): WebSearch {
	const ws: WebSearch = {}
	if (typeof tool.max_uses === 'number' && tool.max_uses >= 1) ws.maxUses = Math.floor(tool.max_uses)
	const allowed = strings(tool.allowed_domains)
	if (allowed?.length) ws.allowedDomains = allowed
	const blocked = strings(tool.blocked_domains)
	if (blocked?.length) ws.blockedDomains = blocked
	const location = decodeLocation(tool.user_location)
	if (location) ws.userLocation = location
	return ws
}

/** The canonical search → the server tool. Anthropic takes allowed or blocked domains, not both: allowed wins. */
export function encodeWebSearchTool(ws: WebSearch): Json {
	const tool: Json = { type: 'web_search_20250305', name: WEB_SEARCH_NAME }
	if (ws.maxUses !== undefined) tool.max_uses = ws.maxUses
	if (ws.allowedDomains?.length) tool.allowed_domains = ws.allowedDomains
	else if (ws.blockedDomains?.length) tool.blocked_domains = ws.blockedDomains
	if (ws.userLocation) tool.user_location = { type: 'approximate', ...ws.userLocation }
	return tool
}

/** The `content` of a `web_search_tool_result` → the sources it found (an error result, an object, finds none). */
export function decodeResults(content: unknown): WebSource[] {
	return (Array.isArray(content) ? content : []).filter(isObject).flatMap((r): WebSource[] => {
		if (r.type !== 'web_search_result' || !str(r.url)) return []
		const s: WebSource = { url: r.url as string }
		if (str(r.title)) s.title = r.title as string
		if (str(r.page_age)) s.pageAge = r.page_age as string
		return [s]
	})
}

/** A `server_tool_use` input → its queries. */
export const queriesOf = (input: unknown): string[] => (isObject(input) && str(input.query) ? [input.query as string] : [])

/** A `web_search_result_location` citation → a canonical one (other citation types, of documents, are not searches). */
export function decodeCitation(c: unknown): Citation | undefined {
	if (!isObject(c) || c.type !== 'web_search_result_location' || !str(c.url)) return undefined
	const out: Citation = { url: c.url as string }
	if (str(c.title)) out.title = c.title as string
	if (str(c.cited_text)) out.citedText = c.cited_text as string
	return out
}

/**
 * A canonical citation → `web_search_result_location`. `encrypted_index` is Anthropic's own reference into its search
 * results, which another vendor's answer has none of: empty, as the client only reads it back to Anthropic.
 */
export const encodeCitation = (c: Citation): Json => ({ type: 'web_search_result_location', url: c.url, title: c.title ?? c.url, encrypted_index: '', cited_text: c.citedText ?? '' })

/** A canonical search → its `server_tool_use` and `web_search_tool_result` blocks (results without Anthropic's encrypted content). */
export function encodeSearchBlocks(p: WebSearchPart): [Json, Json] {
	const id = p.id.startsWith('srvtoolu_') ? p.id : `srvtoolu_${p.id.replace(/[^A-Za-z0-9_]/g, '')}`
	return [
		{ type: 'server_tool_use', id, name: WEB_SEARCH_NAME, input: { query: p.queries.join(' | ') } },
		{ type: 'web_search_tool_result', tool_use_id: id, content: p.sources.map((s) => ({ type: 'web_search_result', url: s.url, title: s.title ?? s.url, encrypted_content: '', page_age: s.pageAge ?? null })) },
	]
}
