/**
 * Grounding with Google Search (ai.google.dev/gemini-api/docs/google-search): for `#search` in the last user text,
 * with a `googleSearch` (REST also `google_search`) tool offered, the answer is grounded and its candidate carries
 * `groundingMetadata`: the `webSearchQueries` the model ran (two distinct ones, and an empty entry, which the API
 * sometimes reports and Google does not bill), `searchEntryPoint.renderedContent`, `groundingChunks` (web sources)
 * and `groundingSupports` linking the answer's text to them (segmentOf). Streamed, it rides on the last two chunks (the last with finishReason), the whole of it on each.
 */
type Obj = Record<string, unknown>

const SEARCH_TOOLS = ['googleSearch', 'google_search']

/** The answer's groundingMetadata, or undefined when the request is not grounded. */
export function groundingFor(tools: unknown, lastUserText: string, answer: string): Obj | undefined {
	if (!lastUserText.includes('#search')) return undefined
	const offered = (Array.isArray(tools) ? tools : []).some((t) => t && typeof t === 'object' && SEARCH_TOOLS.some((k) => (t as Obj)[k] && typeof (t as Obj)[k] === 'object'))
	if (!offered) return undefined
	const topic = lastUserText.replace('#search', '').trim() || 'the question'
	return {
		webSearchQueries: [`${topic} latest`, '', `${topic} explained`],
		searchEntryPoint: { renderedContent: `<div class="container"><a class="chip" href="https://www.google.com/search?q=${encodeURIComponent(topic)}">${topic}</a></div>` },
		groundingChunks: [{ web: { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/mock-1', title: 'example.com' } }],
		groundingSupports: [{ segment: segmentOf(answer), groundingChunkIndices: [0], confidenceScores: [0.9] }],
	}
}

/**
 * The span the support cites: the whole answer, or with `#cited-tail` in it the answer from that tag on. Its indices
 * count UTF-8 bytes of the answer's text (ai.google.dev/api/generate-content#Segment).
 */
function segmentOf(answer: string): Obj {
	const bytes = (s: string) => new TextEncoder().encode(s).length
	const at = Math.max(0, answer.indexOf('#cited-tail'))
	return { startIndex: bytes(answer.slice(0, at)), endIndex: bytes(answer), text: answer.slice(at) }
}
