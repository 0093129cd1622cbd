/**
 * Google Search grounding as Google bills it (ai.google.dev/gemini-api/docs/pricing, "Grounding with Google Search"):
 * Gemini 3 models per search query the model ran, empty queries not counted and each distinct query once ("For
 * billing purposes, we ignore the empty web search queries when counting unique queries"); Gemini 2.5 and older per
 * grounded prompt, i.e. one per request whose answer was grounded. The answer reports what ran in each candidate's
 * `groundingMetadata` (`webSearchQueries`, `groundingChunks`); its `modelVersion` tells which rule applies. The count
 * is billed as the request's web searches, at the model's `per_web_search` price.
 * @module
 */
import { utf8Length, utf8ToUtf16 } from '../../core/citations'
import type { Citation, WebSearchPart } from '../../core/ir'
import type { GeminiGroundingMetadata } from './model'
import { get, isObj, type Obj, str } from './read'

/** What the chunks of one answer reported so far: the distinct queries, whether it was grounded, the model. */
export type Grounding = { queries: Set<string>; grounded: boolean; model: string }

export const newGrounding = (): Grounding => ({ queries: new Set(), grounded: false, model: '' })

/** Adds what one response body (or stream chunk) reports to `g`. */
export function addGrounding(g: Grounding, body: unknown): Grounding {
	if (!isObj(body)) return g
	const model = str(get(body, 'modelVersion'))
	if (model) g.model = model
	const candidates = get(body, 'candidates')
	if (!Array.isArray(candidates)) return g
	for (const c of candidates) {
		const meta = isObj(c) ? get(c, 'groundingMetadata') : undefined
		if (!isObj(meta)) continue
		const queries = get(meta, 'webSearchQueries')
		if (Array.isArray(queries)) for (const q of queries) if (typeof q === 'string' && q.trim()) g.queries.add(q.trim())
		const chunks = get(meta, 'groundingChunks')
		if (g.queries.size > 0 || (Array.isArray(chunks) && chunks.length > 0)) g.grounded = true
	}
	return g
}

/**
 * Billed searches: the distinct queries on a Gemini 3 model, else one for a grounded answer.
 * @example groundingSearches(addGrounding(newGrounding(), { modelVersion: 'gemini-3-pro', candidates: [{ groundingMetadata: { webSearchQueries: ['a', '', 'b'] } }] })) === 2
 */
export function groundingSearches(g: Grounding): number {
	if (/^(models\/)?gemini-3/.test(g.model)) return g.queries.size
	return g.grounded ? 1 : 0
}

/**
 * A grounded answer's search as a canonical part: its non-empty queries and the web pages of `groundingChunks`
 * (Google's redirect URLs, titled by the site). Undefined when the metadata reports no search.
 */
export function searchPart(meta: unknown, id: string): WebSearchPart | undefined {
	if (!isObj(meta)) return undefined
	const queries = get(meta, 'webSearchQueries')
	const q = Array.isArray(queries) ? queries.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : []
	const sources = webChunks(meta).map((w) => (w.title ? { url: w.url, title: w.title } : { url: w.url }))
	return q.length || sources.length ? { type: 'web_search', id, queries: q, sources } : undefined
}

const webChunks = (meta: Obj): Array<{ url: string; title?: string }> => {
	const chunks = get(meta, 'groundingChunks')
	return (Array.isArray(chunks) ? chunks : []).map((c) => {
		const web = isObj(c) ? get(c, 'web') : undefined
		const url = isObj(web) ? str(get(web, 'uri')) : undefined
		const title = isObj(web) ? str(get(web, 'title')) : undefined
		return { url: url ?? '', ...(title && { title }) }
	})
}

/**
 * `groundingSupports` → citations with UTF-16 spans into `text`, the answer's text from its start: a support's
 * segment is counted in bytes of its UTF-8 encoding (https://ai.google.dev/api/generate-content#Segment), one citation
 * per web chunk it names.
 */
export function groundingCitations(meta: unknown, text: string): Citation[] {
	if (!isObj(meta)) return []
	const supports = get(meta, 'groundingSupports')
	const pages = webChunks(meta)
	const at = (byte: number) => utf8ToUtf16(text, byte)
	return (Array.isArray(supports) ? supports : []).filter(isObj).flatMap((s): Citation[] => {
		const seg = get(s, 'segment')
		const indices = get(s, 'groundingChunkIndices')
		if (!isObj(seg) || !Array.isArray(indices)) return []
		const start = at(typeof get(seg, 'startIndex') === 'number' ? (get(seg, 'startIndex') as number) : 0)
		const end = typeof get(seg, 'endIndex') === 'number' ? at(get(seg, 'endIndex') as number) : text.length
		const quoted = str(get(seg, 'text'))
		return indices.flatMap((i): Citation[] => {
			const page = typeof i === 'number' ? pages[i] : undefined
			if (!page?.url) return []
			return [{ url: page.url, ...(page.title && { title: page.title }), ...(quoted && { citedText: quoted }), start, end }]
		})
	})
}

/** A text part of an answer as the grounding encoder reads it: its text and the citations of its spans (UTF-16). */
export type CitedText = { text: string; citations?: Citation[] }


/**
 * Another vendor's web search → `groundingMetadata` for a Gemini client: the searches' queries (`webSearchQueries`),
 * their pages and any other cited page as `groundingChunks` (one per URL), and each citation as a `groundingSupports`
 * segment, its indices UTF-8 byte offsets into the answer's text (its text parts joined, thoughts left out), as Gemini
 * counts them (https://ai.google.dev/api/generate-content#Segment); a citation without a span (Anthropic's cite their
 * whole text block) spans its part. Citations of one span share a support. `searchEntryPoint` is left out: it is
 * optional, and Google's rendered search suggestion, which no other vendor's search has. Undefined without a search.
 * @example encodeGrounding([], [{ text: 'é!', citations: [{ url: 'u', start: 1, end: 2 }] }])?.groundingSupports?.[0]?.segment // { startIndex: 2, endIndex: 3, text: '!' }
 */
export function encodeGrounding(searches: Array<Pick<WebSearchPart, 'queries' | 'sources'>>, texts: CitedText[]): GeminiGroundingMetadata | undefined {
	const chunks: Array<{ web: { uri: string; title?: string } }> = []
	const chunkOf = (url: string, title?: string): number => {
		const at = chunks.findIndex((c) => c.web.uri === url)
		if (at >= 0) return at
		chunks.push({ web: { uri: url, ...(title && { title }) } })
		return chunks.length - 1
	}
	for (const s of searches) for (const source of s.sources) chunkOf(source.url, source.title)
	const supports: Array<{ segment: { startIndex: number; endIndex: number; text: string }; groundingChunkIndices: number[] }> = []
	let offset = 0
	for (const t of texts) {
		for (const c of t.citations ?? []) {
			const start = Math.max(0, Math.min(c.start ?? 0, t.text.length))
			const end = Math.max(start, Math.min(c.end ?? t.text.length, t.text.length))
			const segment = { startIndex: offset + utf8Length(t.text.slice(0, start)), endIndex: offset + utf8Length(t.text.slice(0, end)), text: t.text.slice(start, end) }
			const chunk = chunkOf(c.url, c.title)
			const same = supports.find((s) => s.segment.startIndex === segment.startIndex && s.segment.endIndex === segment.endIndex)
			if (!same) supports.push({ segment, groundingChunkIndices: [chunk] })
			else if (!same.groundingChunkIndices.includes(chunk)) same.groundingChunkIndices.push(chunk)
		}
		offset += utf8Length(t.text)
	}
	const queries = searches.flatMap((s) => s.queries).filter((q) => q.trim() !== '')
	if (!queries.length && !chunks.length) return undefined
	return { ...(queries.length && { webSearchQueries: queries }), groundingChunks: chunks, ...(supports.length && { groundingSupports: supports }) }
}
