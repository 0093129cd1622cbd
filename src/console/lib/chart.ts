/** Data shaping for the spend chart: one bar per calendar day, and a round y-axis scale. */
import { localDate } from './expiry'

export type DayPoint = { day: string; cost: number; requests: number }

/**
 * Every day from `from` to `to` (viewer's zone), with zeros where the API returned nothing.
 * @example fillDays(new Date(2025, 0, 1), new Date(2025, 0, 3), [{ day: '2025-01-02', cost: 1, requests: 2 }]).length === 3
 */
export function fillDays(from: Date, to: Date, data: Array<{ day: string; cost: number; requests: number }>): DayPoint[] {
	const byDay = new Map(data.map((d) => [d.day, d]))
	const out: DayPoint[] = []
	const cur = new Date(from.getFullYear(), from.getMonth(), from.getDate())
	const end = new Date(to.getFullYear(), to.getMonth(), to.getDate())
	for (let i = 0; cur <= end && i < 1000; i++) {
		const day = localDate(cur)
		const hit = byDay.get(day)
		out.push({ day, cost: hit?.cost ?? 0, requests: hit?.requests ?? 0 })
		cur.setDate(cur.getDate() + 1)
	}
	return out
}

/**
 * The smallest "nice" number (1, 2, 2.5 or 5 × 10^k) at or above `v`, so axis steps are round.
 * @example niceCeil(0.0132) === 0.02; niceCeil(7) === 10; niceCeil(0) === 1
 */
export function niceCeil(v: number): number {
	if (!(v > 0)) return 1
	const exp = Math.floor(Math.log10(v))
	const base = 10 ** exp
	for (const m of [1, 2, 2.5, 5, 10]) {
		const n = Number((m * base).toPrecision(12))
		if (n >= v) return n
	}
	return 10 * base
}

export type Scale = { max: number; ticks: number[]; decimals: number }

/**
 * A y-axis from 0 with `count` round steps covering `top`, and how many decimals its labels need so that no two
 * ticks print alike (a $0.000025 axis must not read "$0.00" five times).
 * @example niceScale(7) // { max: 8, ticks: [0, 2, 4, 6, 8], decimals: 2 }
 */
export function niceScale(top: number, count = 4): Scale {
	const step = top > 0 ? niceCeil(top / count) : 0.25
	const ticks = Array.from({ length: count + 1 }, (_, i) => Number((step * i).toPrecision(12)))
	const exp = Math.floor(Math.log10(step))
	const mantissa = step / 10 ** exp
	const decimals = Math.max(2, -exp + (Math.abs(mantissa - 2.5) < 1e-9 ? 1 : 0))
	return { max: ticks[count]!, ticks, decimals }
}

/** @example axisUsd(0.000005, 6) === '$0.000005' */
export const axisUsd = (v: number, decimals: number) => `$${v.toFixed(decimals)}`
