/**
 * models/{model}:embedContent and :batchEmbedContents (ai.google.dev/api/embeddings).
 * @module
 */

import { asArr, asNum, asObj, pick, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { vector } from '../shared/text'
import { geminiError } from './errors'
import { partsOf } from './read'

/** Requests allowed in one batchEmbedContents call. */
export const MAX_BATCH = 100

/** Default output sizes of Google's embedding models. */
const DIMS: Record<string, number> = { 'gemini-embedding-001': 3072, 'text-embedding-004': 768, 'embedding-001': 768 }

/** The embedding of one EmbedContentRequest, or an error text. */
function embedOne(model: string, req: Obj, where: string): { values: number[] } | string {
	const content = asObj(req.content)
	if (!content) return `* ${where}.content: content is not specified\n`
	const text = partsOf(content)
		.map((p) => (typeof p.text === 'string' ? p.text : ''))
		.join(' ')
	const native = DIMS[model] ?? 768
	const asked = asNum(pick(req, 'outputDimensionality', 'output_dimensionality'))
	// The vector is truncated to the size asked for, which cannot exceed the model's own (MRL).
	if (asked !== undefined && (!Number.isInteger(asked) || asked < 1 || asked > native)) return `* ${where}.output_dimensionality: must be between 1 and ${native}\n`
	const dims = asked ?? native
	return { values: vector(text, dims) }
}

/** embedContent: `{ content }` → `{ embedding: { values } }`. */
export function embedContent(model: string, body: unknown, jsonError: boolean): Reply {
	if (jsonError || !asObj(body)) return geminiError(400, 'Invalid JSON payload received. Unexpected token.')
	const r = embedOne(model, body as Obj, 'EmbedContentRequest')
	return typeof r === 'string' ? geminiError(400, r) : json({ embedding: r })
}

/** batchEmbedContents: `{ requests: [{ model, content }] }` (1 to 100 of them) → `{ embeddings: [{ values }] }`, in order. */
export function batchEmbedContents(model: string, body: unknown, jsonError: boolean): Reply {
	if (jsonError || !asObj(body)) return geminiError(400, 'Invalid JSON payload received. Unexpected token.')
	const requests = asArr((body as Obj).requests)
	if (requests.length === 0) return geminiError(400, '* BatchEmbedContentsRequest.requests: at least one request is required\n')
	// The real API's limit (its wording, as quoted in geldata/gel#9032 and vercel/ai#16575).
	if (requests.length > MAX_BATCH) return geminiError(400, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n')
	const embeddings: { values: number[] }[] = []
	for (let i = 0; i < requests.length; i++) {
		const req = asObj(requests[i]) ?? {}
		if (req.model !== undefined && req.model !== `models/${model}`) {
			return geminiError(400, `* BatchEmbedContentsRequest.requests[${i}].model: model must match the parent model models/${model}\n`)
		}
		const r = embedOne(model, req, `BatchEmbedContentsRequest.requests[${i}]`)
		if (typeof r === 'string') return geminiError(400, r)
		embeddings.push(r)
	}
	return json({ embeddings })
}
