/**
 * OpenAI embeddings ⇄ Gemini: one input → `models/{m}:embedContent`, several → `:batchEmbedContents`
 * (ai.google.dev/api/embeddings), and back to OpenAI's list. Gemini takes text only, so token-array input is a 400.
 *
 * A batch holds at most 100 requests: past that Gemini answers 400 INVALID_ARGUMENT
 * "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch", while OpenAI (and our schema)
 * take up to 2048 inputs. Longer inputs are split into batches of 100 ({@link geminiBatches}); the relay sends the
 * first, and only once that succeeded are the others sent ({@link embedRest}), at most {@link BATCH_CONCURRENCY} at a
 * time: a channel that refuses (bad key, 429, 5xx) costs one call, not twenty, before the relay fails over, and the
 * bound keeps one request from bursting a channel's rate limit. Results are joined in input order. If any batch
 * fails, the whole request fails with that batch's error (the others in flight are cancelled) and, as every failed
 * passthrough call, is not charged.
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import { jsonHeaders, channelUrl } from '../../passthrough/upstream'
import { upstreamError } from '../../providers/upstream-error'
import { bodyTimeout, channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import type { EmbeddingList, EmbeddingsRequest } from './model'

type Values = { values?: unknown }

/** Gemini's limit on requests in one batchEmbedContents call. */
export const GEMINI_BATCH_LIMIT = 100

/** Batches in flight at once for one client request (after the first). */
export const BATCH_CONCURRENCY = 4

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

/**
 * Sends batches 2…n of `batches` to the channel, at most {@link BATCH_CONCURRENCY} at a time, and answers their
 * vectors in order. The first failure cancels the calls still in flight and is thrown (a GatewayError, retryable as
 * the upstream's status says).
 */
export async function embedRest(ch: Channel, model: string, batches: string[][], dimensions: number | undefined, signal: AbortSignal): Promise<number[][][]> {
	const rest = batches.slice(1)
	const out: number[][][] = new Array(rest.length)
	const stop = new AbortController()
	const both = AbortSignal.any([signal, stop.signal])
	let next = 0
	let failure: GatewayError | undefined
	async function worker() {
		while (!failure && next < rest.length) {
			const i = next++
			const texts = rest[i]!
			const call = geminiEmbedCall(model, texts, dimensions)
			try {
				const up = await fetchUpstream(channelUrl(ch, call.path), { headers: jsonHeaders(ch), body: JSON.stringify(call.body) }, channelTimeouts(ch.settings), both)
				const text = await up.res.text().catch((e) => {
					throw bodyTimeout(e) ?? malformed()
				})
				up.release()
				if (!up.res.ok) throw upstreamError(up.res.status, text, up.res.headers)
				let json: unknown
				try {
					json = JSON.parse(text)
				} catch {
					throw malformed()
				}
				out[i] = geminiVectors(json, texts.length)
			} catch (e) {
				// The first failure is the one reported; the cancelled calls' errors are its echo.
				if (!failure) failure = e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true, code: 'upstream_error' })
				stop.abort()
			}
		}
	}
	await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, rest.length) }, worker))
	if (failure) throw failure
	return out
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
