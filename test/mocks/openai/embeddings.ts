/**
 * POST /v1/embeddings, /v1/moderations and /v1/rerank (Cohere/Jina style, as gateways accept at `{base}/rerank`).
 * Vectors are deterministic per text, so tests can compare them across calls.
 * @module
 */

import { asArr, asNum, asObj, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { countWords, floatsToBase64, stableId, vector } from '../shared/text'
import { checkModel, openaiError, requireObject } from './errors'

/** Default sizes of OpenAI's embedding models (platform.openai.com/docs/guides/embeddings). */
const DIMS: Record<string, number> = { 'text-embedding-3-large': 3072, 'text-embedding-3-small': 1536, 'text-embedding-ada-002': 1536 }

/** `input` as texts: a string, strings, or token arrays (which count as one "word" per token). */
function inputTexts(input: unknown): string[] | undefined {
	if (typeof input === 'string') return [input]
	if (!Array.isArray(input) || input.length === 0) return undefined
	if (input.every((x) => typeof x === 'number')) return [input.join(' ')]
	if (input.every((x) => typeof x === 'string')) return input as string[]
	if (input.every((x) => Array.isArray(x))) return input.map((x) => (x as unknown[]).join(' '))
}

/** POST /v1/embeddings: `encoding_format` float (default) or base64 (float32 LE), and `dimensions` for v3 models. */
export function embeddings(body: unknown, jsonError: boolean, models: string[] | undefined): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	const invalid = checkModel(b.model, models)
	if (invalid) return invalid
	const model = String(b.model)
	const texts = inputTexts(b.input)
	if (b.input === undefined) return openaiError(400, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter')
	if (!texts || texts.some((t) => t.length === 0)) return openaiError(400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input')
	const format = b.encoding_format ?? 'float'
	if (format !== 'float' && format !== 'base64') {
		return openaiError(400, `Invalid value: '${String(format)}'. Supported values are: 'float' and 'base64'.`, 'encoding_format', 'invalid_value')
	}
	const requested = asNum(b.dimensions)
	if (requested !== undefined && model === 'text-embedding-ada-002') return openaiError(400, 'This model does not support specifying dimensions.', 'dimensions')
	if (requested !== undefined && (requested < 1 || !Number.isInteger(requested))) {
		return openaiError(400, `Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got ${requested} instead.`, 'dimensions', 'integer_below_min_value')
	}
	const native = DIMS[model] ?? 1536
	// A v3 model shortens its vector, never lengthens it.
	if (requested !== undefined && requested > native) return openaiError(400, `Invalid value for 'dimensions' = ${requested}. Must be less than or equal to ${native}.`, 'dimensions', 'invalid_value')
	const dims = requested ?? native
	const data = texts.map((t, index) => {
		const v = vector(t, dims)
		return { object: 'embedding', index, embedding: format === 'base64' ? floatsToBase64(v) : v }
	})
	const tokens = texts.reduce((n, t) => n + countWords(t), 0)
	return json({ object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } })
}

const CATEGORIES = [
	'harassment',
	'harassment/threatening',
	'hate',
	'hate/threatening',
	'illicit',
	'illicit/violent',
	'self-harm',
	'self-harm/intent',
	'self-harm/instructions',
	'sexual',
	'sexual/minors',
	'violence',
	'violence/graphic',
]

/** POST /v1/moderations: a text containing `#flag` is flagged for violence; everything else is clean. */
export function moderations(body: unknown, jsonError: boolean): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	if (b.input === undefined) return openaiError(400, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter')
	const inputs: string[] =
		typeof b.input === 'string'
			? [b.input]
			: asArr(b.input).map((x) => (typeof x === 'string' ? x : (asStr(asObj(x)?.text) ?? '')))
	const model = asStr(b.model) ?? 'omni-moderation-latest'
	const results = inputs.map((text) => {
		const flagged = text.includes('#flag')
		const categories: Record<string, boolean> = {}
		const category_scores: Record<string, number> = {}
		const category_applied_input_types: Record<string, string[]> = {}
		for (const c of CATEGORIES) {
			categories[c] = flagged && c === 'violence'
			category_scores[c] = flagged && c === 'violence' ? 0.93 : 0.0001
			category_applied_input_types[c] = ['text']
		}
		return { flagged, categories, category_scores, category_applied_input_types }
	})
	return json({ id: stableId('modr-', inputs.join('|')), model, results })
}

/** POST /v1/rerank: relevance = share of query words found in the document; Cohere `meta` and Jina `usage` both present. */
export function rerank(body: unknown, jsonError: boolean): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	const query = asStr(b.query)
	if (!query) return openaiError(400, "Missing required parameter: 'query'.", 'query', 'missing_required_parameter')
	if (!Array.isArray(b.documents) || b.documents.length === 0) {
		return openaiError(400, "Missing required parameter: 'documents'.", 'documents', 'missing_required_parameter')
	}
	const docs = b.documents.map((d) => (typeof d === 'string' ? d : (asStr(asObj(d)?.text) ?? JSON.stringify(d))))
	const words = new Set(query.toLowerCase().split(/\W+/).filter(Boolean))
	const scored = docs.map((text, index) => {
		const docWords = new Set(text.toLowerCase().split(/\W+/).filter(Boolean))
		let hits = 0
		for (const w of words) if (docWords.has(w)) hits++
		const relevance_score = Math.round((words.size ? hits / words.size : 0) * 1e4) / 1e4
		return { index, relevance_score, ...(b.return_documents === false ? {} : { document: { text } }) }
	})
	scored.sort((x, y) => y.relevance_score - x.relevance_score || x.index - y.index)
	const topN = asNum(b.top_n) ?? scored.length
	const tokens = countWords(query) + docs.reduce((n, d) => n + countWords(d), 0)
	return json({
		id: stableId('rerank-', query),
		model: b.model ?? 'rerank-mock',
		results: scored.slice(0, topN),
		meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
		usage: { total_tokens: tokens },
	})
}
