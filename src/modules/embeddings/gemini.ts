/**
 * OpenAI embeddings ⇄ Gemini: one input → `models/{m}:embedContent`, several → `:batchEmbedContents`
 * (ai.google.dev/api/embeddings), and back to OpenAI's list. Gemini takes text only, so token-array input is a 400.
 *
 * A batch holds at most 100 requests: past that Gemini answers 400 INVALID_ARGUMENT
 * "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch", while OpenAI (and our schema)
 * take up to 2048 inputs. Longer inputs are split into batches of 100 ({@link geminiBatches}); the relay sends the
 * first, and only once that succeeded are the others sent ({@link embedRest}, batch-pool.ts). Results are joined in input order. If any batch
 * fails, the whole request fails with that batch's error (the others in flight are cancelled), charged only for the
 * batches Gemini had answered (batch-pool.ts `Spent`).
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import { jsonHeaders, channelUrl } from '../../passthrough/upstream'
import { countText } from '../../relay/estimate'
import type { Channel } from '../../routing/catalog'
import { postJson, sendInOrder, type Spent } from './batch-pool'
import type { EmbeddingList, EmbeddingsRequest } from './model'

type Values = { values?: unknown }

/** Gemini's limit on requests in one batchEmbedContents call. */
export const GEMINI_BATCH_LIMIT = 100

/** The texts of an OpenAI `input`, or a 400 when it is token arrays. */
export function geminiTexts(input: EmbeddingsRequest['input']): string[] {
	if (typeof input === 'string') return [input]
	if (input.every((x): x is string => typeof x === 'string')) return input
	throw badRequest('Token-array input is not supported for this model; send text', 'input')
}

/**
 * The texts cut into batches of at most {@link GEMINI_BATCH_LIMIT}, in order.
 * @example geminiBatches(Array(150).fill('x')).map((b) => b.length) // [100, 50]
 */
export function geminiBatches(texts: string[], limit = GEMINI_BATCH_LIMIT): string[][] {
	const out: string[][] = []
	for (let i = 0; i < texts.length; i += limit) out.push(texts.slice(i, i + limit))
	return out
}

/** Path and body of the Gemini call for these texts (at most {@link GEMINI_BATCH_LIMIT}). */
export function geminiEmbedCall(model: string, texts: string[], dimensions?: number): { path: string; body: Record<string, unknown> } {
	const one = (text: string) => ({ content: { parts: [{ text }] }, ...(dimensions ? { outputDimensionality: dimensions } : {}) })
	const m = encodeURIComponent(model)
	if (texts.length === 1) return { path: `/v1beta/models/${m}:embedContent`, body: one(texts[0]!) }
	return { path: `/v1beta/models/${m}:batchEmbedContents`, body: { requests: texts.map((text) => ({ model: `models/${model}`, ...one(text) })) } }
}

const malformed = () => new GatewayError('upstream', 'upstream sent a malformed embeddings response', { retryable: true, code: 'upstream_malformed' })

/** The vectors of one Gemini answer (`embedding` or `embeddings`), checked to be `count` of them. */
export function geminiVectors(body: unknown, count: number): number[][] {
	const b = (body ?? {}) as { embedding?: Values; embeddings?: Values[] }
	const list = b.embeddings ?? (b.embedding ? [b.embedding] : [])
	if (list.length !== count || !list.every((e) => Array.isArray(e?.values))) throw malformed()
	return list.map((e) => e.values as number[])
}

/** Adds an answered batch to `spent`: Gemini reports no tokens, so its texts counted locally. */
export const spendTexts = (spent: Spent, texts: string[]): void => spent.add(undefined, () => texts.reduce((n, t) => n + countText(t), 0))

/** Sends batches 2…n of `batches` to the channel (batch-pool.ts) and answers their vectors in order; each answered batch is added to `spent`. */
export function embedRest(ch: Channel, model: string, batches: string[][], dimensions: number | undefined, signal: AbortSignal, spent: Spent): Promise<number[][][]> {
	return sendInOrder(
		batches.slice(1),
		signal,
		async (texts, both) => {
			const call = geminiEmbedCall(model, texts, dimensions)
			return geminiVectors(await postJson(ch, channelUrl(ch, call.path), jsonHeaders(ch), call.body, both), texts.length)
		},
		(texts) => spendTexts(spent, texts),
	)
}

/** float32 little-endian, base64: what OpenAI returns for `encoding_format: base64`. */
export function floatsToBase64(values: number[]): string {
	const f = new Float32Array(values)
	return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64')
}

/** Vectors in input order → OpenAI's list (index = position in the client's input). */
export function toOpenAIList(vectors: number[][], model: string, tokens: number, base64: boolean): EmbeddingList {
	return {
		object: 'list',
		data: vectors.map((v, index) => ({ object: 'embedding' as const, index, embedding: base64 ? floatsToBase64(v) : v })),
		model,
		usage: { prompt_tokens: tokens, total_tokens: tokens },
	}
}

/** Gemini's answer (`embedding` or `embeddings`) → OpenAI's list. */
export function geminiToOpenAI(body: unknown, count: number, model: string, tokens: number, base64: boolean): EmbeddingList {
	return toOpenAIList(geminiVectors(body, count), model, tokens, base64)
}
