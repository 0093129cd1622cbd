/**
 * Google's usage by modality (generateContent's `promptTokensDetails`…, Interactions' `input_tokens_by_modality`…) →
 * the canonical usage's audio and image counts, which are priced apart (ai.google.dev/gemini-api/docs/pricing). The
 * uncached input's share of a modality is the prompt's less the cache's, plus what built-in tools fed back; each share
 * is bounded by the total it splits, so a vendor's inconsistent lists never bill more than the totals.
 * @module
 */
import type { Usage } from './ir'

/** A modality's tokens in one of the vendor's lists: the prompt's, the cache's, the tools' fed back, the answer's. */
export type ModalityTokens = (list: 'prompt' | 'cached' | 'toolUse' | 'output', modality: 'audio' | 'image') => number

/**
 * Sets `out`'s audio and image counts from `tokens`; `cached` and `answer` are the cache reads and the answer's tokens
 * (thoughts excluded) that the lists split. Returns `out`.
 * @example splitModalities({ input: 100, output: 10, cacheRead: 0, cacheWrite: 0 }, (l, m) => (l === 'prompt' && m === 'audio' ? 40 : 0), 0, 10) // audioInput 40
 */
export function splitModalities(out: Usage, tokens: ModalityTokens, cached: number, answer: number): Usage {
	const uncached = (m: 'audio' | 'image') => Math.max(0, tokens('prompt', m) - tokens('cached', m)) + tokens('toolUse', m)
	const audioIn = Math.min(uncached('audio'), out.input)
	const imageIn = Math.min(uncached('image'), out.input - audioIn)
	const audioRead = Math.min(tokens('cached', 'audio'), cached)
	const audioOut = Math.min(tokens('output', 'audio'), answer)
	const imageOut = Math.min(tokens('output', 'image'), answer - audioOut)
	if (audioIn > 0) out.audioInput = audioIn
	if (imageIn > 0) out.imageInput = imageIn
	if (audioRead > 0) out.audioCacheRead = audioRead
	if (audioOut > 0) out.audioOutput = audioOut
	if (imageOut > 0) out.imageOutput = imageOut
	return out
}
