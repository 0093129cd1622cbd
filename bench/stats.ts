/**
 * Small statistics helpers for the benchmark.
 * @module
 */
import type { Percentiles } from './types'

const round3 = (x: number) => Math.round(x * 1000) / 1000

/**
 * Nearest-rank percentiles of latency samples in milliseconds.
 * @example percentiles([1, 2, 3]).p50 // 2
 */
export function percentiles(samples: number[]): Percentiles {
	const n = samples.length
	if (n === 0) return { n: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 }
	const s = Float64Array.from(samples).sort()
	const at = (p: number) => round3(s[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))])
	let sum = 0
	for (const x of s) sum += x
	return { n, p50: at(50), p90: at(90), p99: at(99), max: round3(s[n - 1]), mean: round3(sum / n) }
}

/**
 * Median of numbers (rounds are combined by their median, which a single noisy round cannot move far).
 * @example median([3, 1, 2]) // 2
 */
export function median(xs: number[]): number {
	if (xs.length === 0) return Number.NaN
	const s = [...xs].sort((a, b) => a - b)
	const m = s.length >> 1
	return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
