/**
 * Money is integer micro-USD everywhere inside the gateway. USD numbers exist only at the API edge, and are
 * converted by parsing their decimal text (not by float multiplication), so 0.15 becomes exactly 150000.
 * @module
 */

export const MICROS_PER_USD = 1_000_000

/**
 * USD (number or decimal string, up to 6 decimals) → integer micro-USD. Throws on more precision than that.
 * @example usdToMicros(0.15) === 150000
 */
export function usdToMicros(usd: number | string): number {
	const s = typeof usd === 'number' ? numberToPlain(usd) : usd.trim()
	const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(s)
	if (!m) throw new Error(`not a USD amount: ${usd}`)
	const frac = (m[3] ?? '').replace(/0+$/, '')
	if (frac.length > 6) throw new Error(`USD amount has more than 6 decimals: ${usd}`)
	const micros = Number(m[2]) * MICROS_PER_USD + Number(frac.padEnd(6, '0') || '0')
	if (!Number.isSafeInteger(micros)) throw new Error(`USD amount out of range: ${usd}`)
	return m[1] ? -micros : micros
}

/** @example microsToUsd(150000) === 0.15 */
export const microsToUsd = (micros: number): number => micros / MICROS_PER_USD

/** Numbers like 1e-7 print in exponent form; render them as plain decimals for parsing. */
function numberToPlain(n: number): string {
	if (!Number.isFinite(n)) throw new Error(`not a USD amount: ${n}`)
	const s = String(n)
	return /e/i.test(s) ? n.toFixed(12).replace(/0+$/, '').replace(/\.$/, '') : s
}

/** Below this, integer products and sums are exact in doubles (with room for the half-up term). */
export const EXACT = 2 ** 52

/**
 * floor(a / b) of non-negative integers, exact: the float quotient is corrected by one either way when it rounded
 * across an integer. For a < 2^52.
 */
function floorDiv(a: number, b: number): number {
	let q = Math.floor(a / b)
	if (q * b > a) q--
	else if ((q + 1) * b <= a) q++
	return q
}

/**
 * `num / divisor` rounded half up, for a non-negative integer numerator given as a number when it is exact (the
 * common case, no allocation) and in BigInt otherwise.
 */
export function divRoundHalfUp(num: number | bigint, divisor: number): number {
	if (typeof num === 'number' && num < EXACT) return floorDiv(num * 2 + divisor, 2 * divisor)
	const d = BigInt(divisor)
	return Number((BigInt(num) * 2n + d) / (2n * d))
}

/**
 * Exact `amount × rate / divisor`, rounded once, half up (no float error).
 * @example mulDivRound(1234, 150000, 1_000_000) === 185  // 185.1 → 185
 */
export function mulDivRound(amount: number, rate: number, divisor: number): number {
	if (amount === 0 || rate === 0) return 0
	const num = amount * rate
	return divRoundHalfUp(num < EXACT ? num : BigInt(amount) * BigInt(rate), divisor)
}
