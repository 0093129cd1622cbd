/**
 * Text embeddings on Vertex AI (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api):
 * `POST …/publishers/google/models/{model}:predict` with `{"instances": [{content, task_type?, title?}], "parameters":
 * {outputDimensionality?}}`, answered `{"predictions": [{"embeddings": {values, statistics: {token_count, truncated}}}]}`
 * in instance order. The token counts are Vertex's own, so the charge is the sum of them (the local count only when
 * an answer lacks one).
 *
 * Limits per call (https://cloud.google.com/vertex-ai/generative-ai/docs/embeddings/get-text-embeddings): at most 250
 * texts and 20,000 tokens, and gemini-embedding-001 "supports one instance per request". Inputs are cut into batches
 * within them ({@link vertexBatches}); the first goes through the relay, the others after it succeeded (batch-pool.ts).
 * Calls carry the channel's OAuth token (or express mode key) through the Vertex adapter's hooks.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { Via } from '../../providers/adapter'
import { vertexGeminiAdapter, vertexGoogleUrl } from '../../providers/vertex'
import type { UpstreamRequest } from '../../passthrough/relay'
import { countText } from '../../relay/estimate'
import type { Channel } from '../../routing/catalog'
import { postJson, sendInOrder, type Spent } from './batch-pool'

/** One text to embed, as Vertex's instance takes it (`task_type` and `title` in snake_case, as the reference writes them). */
export type VertexInstance = { content: string; task_type?: string; title?: string }
export type VertexParams = { outputDimensionality?: number }
/** One call's answer: its vectors, and the tokens Vertex counted (undefined when any prediction lacks its count). */
export type VertexAnswer = { vectors: number[][]; tokens?: number }

/** Texts in one `:predict` call. */
export const VERTEX_BATCH_LIMIT = 250
/** Vertex's cap on one call's tokens. */
export const VERTEX_BATCH_TOKENS = 20_000
/**
 * The budget a batch is cut at, by the local (o200k) count: Google's tokenizer counts differently, so a quarter is
 * left for texts it counts longer.
 */
const LOCAL_BUDGET = (VERTEX_BATCH_TOKENS * 3) / 4

/** Texts one call may carry for this model: gemini-embedding models take one instance per request. */
export const vertexBatchLimit = (model: string): number => (model.startsWith('gemini-embedding') ? 1 : VERTEX_BATCH_LIMIT)

/**
 * The instances cut into batches, in order: at most {@link vertexBatchLimit} each and, but for a single text, no more
 * than the token budget by the local count.
 * @example vertexBatches([{ content: 'a' }, { content: 'b' }], 'gemini-embedding-001').length // 2
 */
export function vertexBatches(instances: VertexInstance[], model: string): VertexInstance[][] {
	const limit = vertexBatchLimit(model)
	const out: VertexInstance[][] = []
	let batch: VertexInstance[] = []
	let tokens = 0
	for (const x of instances) {
		const n = countText(x.content)
		if (batch.length && (batch.length >= limit || tokens + n > LOCAL_BUDGET)) {
			out.push(batch)
			batch = []
			tokens = 0
		}
		batch.push(x)
		tokens += n
	}
	if (batch.length) out.push(batch)
	return out
}

type PredictCall = { url: string; headers: Record<string, string>; body: Record<string, unknown>; via: Via }

/** The `:predict` call of one batch, authorized by the Vertex adapter's hooks when it is sent. */
export function vertexPredictCall(ch: Channel, model: string, instances: VertexInstance[], params: VertexParams): PredictCall {
	const parameters = params.outputDimensionality !== undefined ? { outputDimensionality: params.outputDimensionality } : undefined
	return {
		url: vertexGoogleUrl(ch, model, 'predict'),
		headers: vertexGeminiAdapter.headers(ch),
		body: { instances, ...(parameters && { parameters }) },
		via: { ch, adapter: vertexGeminiAdapter },
	}
}

/** The first batch's call as the passthrough relay sends it. */
export function vertexFirstRequest(ch: Channel, model: string, batches: VertexInstance[][], params: VertexParams): UpstreamRequest {
	const call = vertexPredictCall(ch, model, batches[0]!, params)
	return { ...call, body: JSON.stringify(call.body) }
}

const malformed = () => new GatewayError('upstream', 'upstream sent a malformed embeddings response', { retryable: true, code: 'upstream_malformed' })

type Prediction = { embeddings?: { values?: unknown; statistics?: { token_count?: unknown; tokenCount?: unknown } } }

/** The vectors and token count of one `:predict` answer, checked to hold `count` embeddings. */
export function vertexPredictions(body: unknown, count: number): VertexAnswer {
	const list = (body as { predictions?: unknown } | null)?.predictions
	if (!Array.isArray(list) || list.length !== count) throw malformed()
	const vectors: number[][] = []
	let tokens: number | undefined = 0
	for (const p of list as Prediction[]) {
		const values = p?.embeddings?.values
		if (!Array.isArray(values)) throw malformed()
		vectors.push(values as number[])
		// The reference writes `token_count`; the proto's JSON name is also taken.
		const n = p.embeddings!.statistics?.token_count ?? p.embeddings!.statistics?.tokenCount
		tokens = tokens !== undefined && typeof n === 'number' && n >= 0 ? tokens + n : undefined
	}
	return { vectors, tokens }
}

/** Adds an answered batch to `spent`: Vertex's count of its tokens, else the local one. */
export const spendBatch = (spent: Spent, instances: VertexInstance[], a: VertexAnswer): void => spent.add(a.tokens, () => instances.reduce((n, x) => n + countText(x.content), 0))

/** Sends batches 2…n (batch-pool.ts) and answers each one's vectors and tokens, in order; each answered batch is added to `spent`. */
export function vertexEmbedRest(ch: Channel, model: string, batches: VertexInstance[][], params: VertexParams, signal: AbortSignal, spent: Spent): Promise<VertexAnswer[]> {
	return sendInOrder(
		batches.slice(1),
		signal,
		async (instances, both) => {
			const call = vertexPredictCall(ch, model, instances, params)
			return vertexPredictions(await postJson(ch, call.url, call.headers, call.body, both, call.via), instances.length)
		},
		(instances, a) => spendBatch(spent, instances, a),
	)
}

/** Every batch's answer joined: the vectors in input order, the tokens summed (undefined when any batch lacks its count). */
export function joinAnswers(answers: VertexAnswer[]): VertexAnswer {
	let tokens: number | undefined = 0
	for (const a of answers) tokens = tokens !== undefined && a.tokens !== undefined ? tokens + a.tokens : undefined
	return { vectors: answers.flatMap((a) => a.vectors), tokens }
}

/** All the batches on one channel: the first, then (once it succeeded) the others; each answered one is added to `spent`. */
export async function vertexEmbedAll(ch: Channel, model: string, batches: VertexInstance[][], params: VertexParams, signal: AbortSignal, spent: Spent): Promise<VertexAnswer> {
	const call = vertexPredictCall(ch, model, batches[0]!, params)
	const first = vertexPredictions(await postJson(ch, call.url, call.headers, call.body, signal, call.via), batches[0]!.length)
	spendBatch(spent, batches[0]!, first)
	return joinAnswers([first, ...(batches.length > 1 ? await vertexEmbedRest(ch, model, batches, params, signal, spent) : [])])
}
