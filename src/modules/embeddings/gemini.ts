/**
 * OpenAI embeddings ⇄ Gemini: one input → `models/{m}:embedContent`, several → `:batchEmbedContents`
 * (ai.google.dev/api/embeddings), and back to OpenAI's list. Gemini takes text only, so token-array input is a 400.
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import type { EmbeddingList, EmbeddingsRequest } from './model'

type Values = { values?: unknown }

/** The texts of an OpenAI `input`, or a 400 when it is token arrays. */
export function geminiTexts(input: EmbeddingsRequest['input']): string[] {
	if (typeof input === 'string') return [input]
	if (input.every((x): x is string => typeof x === 'string')) return input
	throw badRequest('Token-array input is not supported for this model; send text', 'input')
}

/** Path and body of the Gemini call for these texts. */
export function geminiEmbedCall(model: string, texts: string[], dimensions?: number): { path: string; body: Record<string, unknown> } {
	const one = (text: string) => ({ content: { parts: [{ text }] }, ...(dimensions ? { outputDimensionality: dimensions } : {}) })
	const m = encodeURIComponent(model)
	if (texts.length === 1) return { path: `/v1beta/models/${m}:embedContent`, body: one(texts[0]!) }
	return { path: `/v1beta/models/${m}:batchEmbedContents`, body: { requests: texts.map((text) => ({ model: `models/${model}`, ...one(text) })) } }
}

/** float32 little-endian, base64: what OpenAI returns for `encoding_format: base64`. */
export function floatsToBase64(values: number[]): string {
	const f = new Float32Array(values)
	return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64')
}

/** Gemini's answer (`embedding` or `embeddings`) → OpenAI's list. */
export function geminiToOpenAI(body: unknown, count: number, model: string, tokens: number, base64: boolean): EmbeddingList {
	const b = (body ?? {}) as { embedding?: Values; embeddings?: Values[] }
	const list = b.embeddings ?? (b.embedding ? [b.embedding] : [])
	if (list.length !== count || !list.every((e) => Array.isArray(e?.values)))
		throw new GatewayError('upstream', 'upstream sent a malformed embeddings response', { retryable: true, code: 'upstream_malformed' })
	return {
		object: 'list',
		data: list.map((e, index) => {
			const v = e.values as number[]
			return { object: 'embedding' as const, index, embedding: base64 ? floatsToBase64(v) : v }
		}),
		model,
		usage: { prompt_tokens: tokens, total_tokens: tokens },
	}
}
