/**
 * Prices and cost. A model's price is integer micro-USD per million tokens (pico-USD per token) plus optional
 * per-request and per-unit prices. A cost is computed from all components with one division and one
 * half-up rounding, so the same usage costs the same whatever protocol or stream mode carried it.
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
	/** Other unit prices, micro-USD per unit (per_image, per_minute, per_second, per_mchar …). */
	prices?: Record<string, number>
}

const MTOK = 1_000_000

/**
 * @example tokenCost({input: 1000, output: 500, cacheRead: 0, cacheWrite: 0, reasoning: 0}, gpt4oMini) // micro-USD
 */
export function tokenCost(u: Usage, p: Price): number {
	const cacheRead = p.cacheReadPerMtok ?? p.inputPerMtok
	const cacheWrite = p.cacheWritePerMtok ?? p.inputPerMtok
	const num = u.input * p.inputPerMtok + u.cacheRead * cacheRead + u.cacheWrite * cacheWrite + u.output * p.outputPerMtok
	// One half-up rounding of the exact sum: in doubles while that is exact, else in BigInt.
	const exact =
		num < EXACT
			? num
			: BigInt(u.input) * BigInt(p.inputPerMtok) + BigInt(u.cacheRead) * BigInt(cacheRead) + BigInt(u.cacheWrite) * BigInt(cacheWrite) + BigInt(u.output) * BigInt(p.outputPerMtok)
	return divRoundHalfUp(exact, MTOK) + (p.perRequest ?? 0)
}

/** Worst-case cost of a request before it runs: all input uncached at the higher of the input prices, full output cap. */
export function upperBound(inputTokens: number, maxOutput: number, p: Price): number {
	const inRate = Math.max(p.inputPerMtok, p.cacheWritePerMtok ?? 0)
	return mulDivRound(inputTokens, inRate, MTOK) + mulDivRound(maxOutput, p.outputPerMtok, MTOK) + 1 + (p.perRequest ?? 0)
}

/** Largest output cap that `budget` micro-USD covers after the input, or 0. */
export function affordableOutput(budget: number, inputTokens: number, p: Price): number {
	const inRate = Math.max(p.inputPerMtok, p.cacheWritePerMtok ?? 0)
	const left = budget - (p.perRequest ?? 0) - mulDivRound(inputTokens, inRate, MTOK) - 1
	if (left <= 0) return 0
	if (p.outputPerMtok === 0) return Number.MAX_SAFE_INTEGER
	return Math.floor((left * MTOK) / p.outputPerMtok)
}
