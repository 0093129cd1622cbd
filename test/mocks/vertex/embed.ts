/**
 * The mock's text embedding models on `…/publishers/google/models/{model}:predict`, as the Text embeddings API
 * reference describes them (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api):
 * `{"instances": [{content, task_type?, title?}], "parameters": {outputDimensionality?, autoTruncate?}}` →
 * `{"predictions": [{"embeddings": {"values", "statistics": {"token_count", "truncated"}}}]}`, one per instance in
 * order. Limits as documented: at most 250 instances and 20,000 tokens a call, one instance for gemini-embedding-001,
 * 2,048 tokens a text (cut when `autoTruncate` is not false, else refused); a `title` only with RETRIEVAL_DOCUMENT.
 * Tokens are words (countWords); the vector is the shared deterministic one of the text. Refusals are Google's
 * 400 INVALID_ARGUMENT, in the mock's words.
 * @module
 */
import { countWords, vector } from '../shared/text'

/** Default (and largest) output sizes. */
export const VERTEX_EMBEDDING_DIMS: Record<string, number> = { 'gemini-embedding-001': 3072, 'text-embedding-005': 768, 'text-multilingual-embedding-002': 768 }

const TASK_TYPES = ['RETRIEVAL_QUERY', 'RETRIEVAL_DOCUMENT', 'SEMANTIC_SIMILARITY', 'CLASSIFICATION', 'CLUSTERING', 'QUESTION_ANSWERING', 'FACT_VERIFICATION', 'CODE_RETRIEVAL_QUERY']
const MAX_INSTANCES = 250
const MAX_CALL_TOKENS = 20_000
const MAX_TEXT_TOKENS = 2048

const invalid = (message: string) => Response.json({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }, { status: 400 })

export const isEmbeddingModel = (model: string) => model in VERTEX_EMBEDDING_DIMS

/** The answer of `:predict` for an embedding model. */
export function predictEmbeddings(model: string, body: Record<string, unknown>): Response {
	const instances = body.instances
	if (!Array.isArray(instances) || instances.length === 0) return invalid('instances: at least one instance is required.')
	if (model.startsWith('gemini-embedding') && instances.length > 1) return invalid(`${model} supports only one instance per request; got ${instances.length}.`)
	if (instances.length > MAX_INSTANCES) return invalid(`A request may have at most ${MAX_INSTANCES} instances; got ${instances.length}.`)
	const params = (body.parameters ?? {}) as { outputDimensionality?: unknown; autoTruncate?: unknown }
	const max = VERTEX_EMBEDDING_DIMS[model]!
	const dims = params.outputDimensionality ?? max
	if (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1 || dims > max) return invalid(`parameters.outputDimensionality must be an integer from 1 to ${max}.`)
	const predictions: unknown[] = []
	let total = 0
	for (const [i, x] of instances.entries()) {
		const inst = x as { content?: unknown; task_type?: unknown; title?: unknown }
		if (typeof inst?.content !== 'string') return invalid(`instances[${i}].content: a string is required.`)
		if (inst.task_type !== undefined && !TASK_TYPES.includes(inst.task_type as string)) return invalid(`instances[${i}].task_type: unknown task type ${JSON.stringify(inst.task_type)}.`)
		if (inst.title !== undefined && inst.task_type !== 'RETRIEVAL_DOCUMENT') return invalid(`instances[${i}].title is only valid with task_type RETRIEVAL_DOCUMENT.`)
		const words = countWords(inst.content)
		if (words > MAX_TEXT_TOKENS && params.autoTruncate === false) return invalid(`instances[${i}].content is longer than ${MAX_TEXT_TOKENS} tokens.`)
		const tokens = Math.min(words, MAX_TEXT_TOKENS)
		total += tokens
		predictions.push({ embeddings: { statistics: { truncated: words > tokens, token_count: tokens }, values: vector(inst.content, dims) } })
	}
	if (total > MAX_CALL_TOKENS) return invalid(`A request may have at most ${MAX_CALL_TOKENS} input tokens; got ${total}.`)
	return Response.json({ predictions, metadata: { billableCharacterCount: instances.reduce((n, x) => n + (x as { content: string }).content.replace(/\s/g, '').length, 0) } })
}
