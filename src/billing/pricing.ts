/**
 * Prices and cost. A model's price is integer micro-USD per million tokens (pico-USD per token) plus optional
 * per-request and per-unit prices. A cost is computed from all components with one division and one
 * half-up rounding, so the same usage costs the same whatever protocol or stream mode carried it.
 *
 * Token kinds that vendors price apart have optional prices in the unit-price map (`TOKEN_PRICES`): audio input and
 * output, image output, 1-hour cache writes, and a long-context tier for prompts over 200k tokens. A kind without its
 * price costs what it cost before: the text price of its side (a 1-hour write the cache-write price).
 * @module
 */
import type { Usage } from '../core/ir'
import { EXACT, divRoundHalfUp, mulDivRound } from './money'

export type Price = {
	inputPerMtok: number
	outputPerMtok: number
	/** Defaults to the input price when not set. */
	cacheReadPerMtok?: number | null
	cacheWritePerMtok?: number | null
	perRequest?: number | null
	maxOutputTokens?: number | null
	/** Other unit prices, micro-USD per unit (per_image, per_minute, per_second, per_mchar …), and `TOKEN_PRICES`. */
	prices?: Record<string, number>
}

/** The token-kind prices (micro-USD per million tokens) kept in `Price.prices`, by their config and API names. */
export const TOKEN_PRICES = {
	/** OpenAI audio models (`gpt-4o-audio-preview`: $40 against $2.50 text), Gemini audio input (2.5 Flash: $1 against $0.30). */
	audioInput: 'audio_input_per_mtok',
	/** OpenAI audio output ($80 against $10 text), Gemini native-audio and TTS output. */
	audioOutput: 'audio_output_per_mtok',
	/** Gemini image output (`gemini-2.5-flash-image`: $30 against $2.50 text). */
	imageOutput: 'image_output_per_mtok',
	/** Anthropic 1-hour cache writes (2× base input, where 5-minute writes are 1.25×). */
	cacheWrite1h: 'cache_write_1h_per_mtok',
	/** Input of a request whose prompt exceeds `LONG_CONTEXT_TOKENS` (Gemini 2.5 Pro, Claude Sonnet 4/4.5 with 1M context). */
	inputLong: 'input_above_200k_per_mtok',
	/** Output of such a request. */
	outputLong: 'output_above_200k_per_mtok',
} as const

/**
 * Prompts longer than this (input + cache reads + cache writes) are billed at the long-context prices, on all their
 * tokens: "prompts > 200k tokens" (ai.google.dev/gemini-api/docs/pricing), "input tokens exceed 200K" (Anthropic's
 * long-context pricing, which counts cache reads and writes in the input).
 */
export const LONG_CONTEXT_TOKENS = 200_000

const MTOK = 1_000_000

/** The per-token rates (micro-USD per Mtok) that apply to one request. */
type Rates = { input: number; output: number; cacheRead: number; cacheWrite: number; cacheWrite1h: number; audioInput: number; audioOutput: number; imageOutput: number }

/**
 * The rates of a request whose prompt is `promptTokens` long. Above the long-context threshold, input and output take
 * their long prices and the cache prices scale as the input price does (both vendors double every cache price with
 * the input price); audio and image prices have no tier.
 */
export function ratesFor(p: Price, promptTokens: number): Rates {
	const extra = p.prices
	const inLong = extra?.[TOKEN_PRICES.inputLong]
	const long = promptTokens > LONG_CONTEXT_TOKENS && (inLong !== undefined || extra?.[TOKEN_PRICES.outputLong] !== undefined)
	const input = long ? (inLong ?? p.inputPerMtok) : p.inputPerMtok
	const output = long ? (extra?.[TOKEN_PRICES.outputLong] ?? p.outputPerMtok) : p.outputPerMtok
	const scale = (r: number) => (input === p.inputPerMtok || p.inputPerMtok === 0 ? r : mulDivRound(r, input, p.inputPerMtok))
	const cacheWrite = p.cacheWritePerMtok ?? p.inputPerMtok
	return {
		input,
		output,
		cacheRead: scale(p.cacheReadPerMtok ?? p.inputPerMtok),
		cacheWrite: scale(cacheWrite),
		cacheWrite1h: scale(extra?.[TOKEN_PRICES.cacheWrite1h] ?? cacheWrite),
		audioInput: extra?.[TOKEN_PRICES.audioInput] ?? input,
		audioOutput: extra?.[TOKEN_PRICES.audioOutput] ?? output,
		imageOutput: extra?.[TOKEN_PRICES.imageOutput] ?? output,
	}
}

/**
 * @example tokenCost({input: 1000, output: 500, cacheRead: 0, cacheWrite: 0, reasoning: 0}, gpt4oMini) // micro-USD
 */
export function tokenCost(u: Usage, p: Price): number {
	const r = ratesFor(p, u.input + u.cacheRead + u.cacheWrite)
	// Each sub-count is a share of its total, clamped to it: a vendor's odd report never bills a token twice.
	const audioIn = Math.min(u.audioInput ?? 0, u.input)
	const write1h = Math.min(u.cacheWrite1h ?? 0, u.cacheWrite)
	const audioOut = Math.min(u.audioOutput ?? 0, u.output)
	const imageOut = Math.min(u.imageOutput ?? 0, u.output - audioOut)
	const counts = [u.input - audioIn, audioIn, u.cacheRead, u.cacheWrite - write1h, write1h, u.output - audioOut - imageOut, audioOut, imageOut]
	const rates = [r.input, r.audioInput, r.cacheRead, r.cacheWrite, r.cacheWrite1h, r.output, r.audioOutput, r.imageOutput]
	let num = 0
	for (let i = 0; i < counts.length; i++) num += counts[i]! * rates[i]!
	// One half-up rounding of the exact sum: in doubles while that is exact, else in BigInt.
	let exact: number | bigint = num
	if (num >= EXACT) {
		exact = 0n
		for (let i = 0; i < counts.length; i++) exact += BigInt(counts[i]!) * BigInt(rates[i]!)
	}
	return divRoundHalfUp(exact, MTOK) + (p.perRequest ?? 0)
}

/**
 * The highest rates a request's tokens may be billed at: a prompt of up to `inputTokens` tokens (its tier), every
 * input token at the dearest input kind (uncached, cache writes of either duration, audio) and every output token at
 * the dearest output kind (text, audio, image). A model priced for audio or images reserves at those prices.
 */
function boundRates(inputTokens: number, p: Price): { input: number; output: number } {
	const r = ratesFor(p, inputTokens)
	return { input: Math.max(r.input, r.cacheRead, r.cacheWrite, r.cacheWrite1h, r.audioInput), output: Math.max(r.output, r.audioOutput, r.imageOutput) }
}

/** Worst-case cost of a request before it runs: all input at the dearest input price, full output cap at the dearest output price. */
export function upperBound(inputTokens: number, maxOutput: number, p: Price): number {
	const r = boundRates(inputTokens, p)
	return mulDivRound(inputTokens, r.input, MTOK) + mulDivRound(maxOutput, r.output, MTOK) + 1 + (p.perRequest ?? 0)
}

/** Largest output cap that `budget` micro-USD covers after the input, or 0. */
export function affordableOutput(budget: number, inputTokens: number, p: Price): number {
	const r = boundRates(inputTokens, p)
	const left = budget - (p.perRequest ?? 0) - mulDivRound(inputTokens, r.input, MTOK) - 1
	if (left <= 0) return 0
	if (r.output === 0) return Number.MAX_SAFE_INTEGER
	return Math.floor((left * MTOK) / r.output)
}
