/**
 * Chat Completions web search ⇄ the canonical one (core/ir.ts `WebSearch`, `Citation`): `web_search_options`
 * (`user_location: {type:"approximate", approximate:{city, region, country, timezone}}`, `search_context_size`), which
 * only OpenAI's search models take, and the `url_citation` annotations of the answer's message
 * (https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat).
 * @module
 */
import { codePoints } from '../../core/citations'
import { unsupportedForModel } from '../../core/errors'
import type { ChatRequest, Citation, TextPart, WebSearch } from '../../core/ir'
import { decodeAnnotations as decodeFlatAnnotations, decodeLocation, urlCitation } from '../openai-responses/web-search'
import { isObject, type Json } from './guards'

/** OpenAI's chat models that search the web: gpt-4o-search-preview, gpt-4o-mini-search-preview, gpt-5-search-api… */
export const isSearchModel = (model: string): boolean => /(^|[-/])search(-|$)/.test(model)

export function decodeWebSearchOptions(o: Json): WebSearch {
	const location = decodeLocation(o.user_location)
	return location ? { userLocation: location } : {}
}

/**
 * The canonical search → `web_search_options`, for a search model; any other chat model cannot search (OpenAI answers
 * such a request with a 400), so the request is refused saying which can. Retryable: another channel of the model may.
 */
export function encodeWebSearchOptions(req: ChatRequest, model: string): Json {
	const ws = req.webSearch!
	if (!isSearchModel(model))
		throw unsupportedForModel(
			`web search: model "${req.model}" is served here by OpenAI Chat Completions, where only the search models (gpt-4o-search-preview, gpt-4o-mini-search-preview, gpt-5-search-api) search the web: use a model served by Anthropic or Gemini, an OpenAI model through the Responses API, or remove the web search tool`,
			true,
			'tools',
		)
	return ws.userLocation ? { user_location: { type: 'approximate', approximate: ws.userLocation } } : {}
}

/**
 * `message.annotations` → the citations of the message's text (spans into it): Responses' annotations, nested. Given
 * the message's `text`, each quotes the span it cites (Anthropic's `cited_text`).
 */
export const decodeAnnotations = (v: unknown, text?: string): Citation[] =>
	decodeFlatAnnotations(
		(Array.isArray(v) ? v : []).map((a) => (isObject(a) && isObject(a.url_citation) ? { type: a.type, ...a.url_citation } : a)),
		text,
	)

/** The citations of text parts joined into one message text → its `annotations` (spans in code points, as Responses'). */
export function encodeAnnotations(parts: TextPart[]): Json[] {
	const out: Json[] = []
	let offset = 0
	for (const p of parts) {
		for (const c of p.citations ?? []) {
			const { type, ...citation } = urlCitation(c, offset, p.text)
			out.push({ type, url_citation: { url: citation.url, title: citation.title, start_index: citation.start_index, end_index: citation.end_index } })
		}
		offset += codePoints(p.text)
	}
	return out
}
