/**
 * Google Search grounding as Google bills it (ai.google.dev/gemini-api/docs/pricing, "Grounding with Google Search"):
 * Gemini 3 models per search query the model ran, empty queries not counted and each distinct query once ("For
 * billing purposes, we ignore the empty web search queries when counting unique queries"); Gemini 2.5 and older per
 * grounded prompt, i.e. one per request whose answer was grounded. The answer reports what ran in each candidate's
 * `groundingMetadata` (`webSearchQueries`, `groundingChunks`); its `modelVersion` tells which rule applies. The count
 * is billed as the request's web searches, at the model's `per_web_search` price.
 * @module
 */
import { get, isObj, str } from './read'

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
