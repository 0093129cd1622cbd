import { describe, expect, it } from 'bun:test'
import { microsToUsd, mulDivRound, usdToMicros } from '../../../src/billing/money'
import { affordableOutput, tokenCost, upperBound } from '../../../src/billing/pricing'

describe('usdToMicros', () => {
	it('should convert decimal USD exactly, without float error', () => {
		expect(usdToMicros(0.15)).toBe(150_000)
		expect(usdToMicros(0.075)).toBe(75_000)
		expect(usdToMicros('12.345678')).toBe(12_345_678)
		expect(usdToMicros(1e-6)).toBe(1)
		expect(usdToMicros(-2.5)).toBe(-2_500_000)
	})
	it('should refuse more than six decimals rather than round silently', () => {
		expect(() => usdToMicros(0.0000001)).toThrow(/6 decimals/)
		expect(() => usdToMicros('abc')).toThrow()
	})
	it('should round-trip to USD at the edge', () => expect(microsToUsd(150_000)).toBe(0.15))
})

describe('mulDivRound', () => {
	it('should round half up once', () => {
		expect(mulDivRound(1, 500_000, 1_000_000)).toBe(1) // 0.5 → 1
		expect(mulDivRound(1, 499_999, 1_000_000)).toBe(0)
		expect(mulDivRound(3, 1, 2)).toBe(2) // 1.5 → 2
	})
})

describe('tokenCost', () => {
	const price = { inputPerMtok: 150_000, outputPerMtok: 600_000 } // $0.15 / $0.60 per Mtok
	it('should price all components with one rounding', () => {
		// 1000 × 0.15 + 500 × 0.60 = 150 + 300 = 450 micro-USD
		expect(tokenCost({ input: 1000, output: 500, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, price)).toBe(450)
		// 7 × 0.15 + 1 × 0.6 = 1.05 + 0.6 = 1.65 → 2; rounding each part first would give 1 + 1 = 2 too, so also:
		expect(tokenCost({ input: 7, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, price)).toBe(2)
		// 3 × 0.15 + 3 × 0.15 (cache read at input rate) = 0.9 → 1, where per-part rounding gives 0 + 0 = 0
		expect(tokenCost({ input: 3, output: 0, cacheRead: 3, cacheWrite: 0, reasoning: 0 }, price)).toBe(1)
	})
	it('should price cache reads at their own rate, defaulting to the input rate', () => {
		const u = { input: 0, output: 0, cacheRead: 1_000_000, cacheWrite: 0, reasoning: 0 }
		expect(tokenCost(u, price)).toBe(150_000)
		expect(tokenCost(u, { ...price, cacheReadPerMtok: 15_000 })).toBe(15_000)
	})
	it('should add the per-request price', () => expect(tokenCost({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, { ...price, perRequest: 40_000 })).toBe(40_000))
})

describe('upperBound and affordableOutput', () => {
	const price = { inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 } // $1 / $2 per Mtok
	it('should bound the worst case from input and the output cap', () => expect(upperBound(1000, 1000, price)).toBe(1000 + 2000 + 1))
	it('should give the largest cap a budget covers', () => {
		const cap = affordableOutput(2001, 1000, price)
		expect(cap).toBe(500)
		expect(upperBound(1000, cap, price)).toBeLessThanOrEqual(2001)
	})
})

describe('exact rounding without BigInt on the common path', () => {
	const reference = (amount: number, rate: number, divisor: number) => {
		const d = BigInt(divisor)
		return Number((BigInt(amount) * BigInt(rate) * 2n + d) / (2n * d))
	}
	it('should agree with BigInt arithmetic for random and boundary values', () => {
		let seed = 7
		const rnd = (max: number) => {
			seed = (seed * 1103515245 + 12345) % 2 ** 31
			return Math.floor((seed / 2 ** 31) * max)
		}
		const cases: Array<[number, number, number]> = [
			[1, 500_000, 1_000_000], // exactly half: rounds up
			[3, 500_000, 1_000_000],
			[1, 499_999, 1_000_000],
			[2 ** 26, 2 ** 26 - 1, 1_000_000], // just below 2^52
			[2 ** 27, 2 ** 27, 1_000_000], // past it: BigInt path
			[Number.MAX_SAFE_INTEGER, 3, 7],
		]
		for (let i = 0; i < 5000; i++) cases.push([rnd(2 ** 31), rnd(2 ** 24), 1 + rnd(2 ** 21)])
		for (const [a, r, d] of cases) expect(mulDivRound(a, r, d)).toBe(reference(a, r, d))
	})
	it('should price usage the same as exact arithmetic', () => {
		const p = { inputPerMtok: 150_000, outputPerMtok: 600_000, cacheReadPerMtok: 75_000, cacheWritePerMtok: 187_500, perRequest: 3 }
		for (const u of [
			{ input: 1234, output: 567, cacheRead: 89, cacheWrite: 10, reasoning: 0 },
			{ input: 2 ** 40, output: 2 ** 33, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
		]) {
			const num = BigInt(u.input) * 150_000n + BigInt(u.cacheRead) * 75_000n + BigInt(u.cacheWrite) * 187_500n + BigInt(u.output) * 600_000n
			expect(tokenCost(u, p)).toBe(Number((num * 2n + 1_000_000n) / 2_000_000n) + 3)
		}
	})
})
