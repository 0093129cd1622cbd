import { describe, expect, it } from 'bun:test'
import { newId, randomString, requestId } from '../../../src/lib/ids'

describe('random ids', () => {
	it('should give strings of the asked length over [A-Za-z0-9]', () => {
		for (const n of [1, 8, 24, 48, 200]) expect(randomString(n)).toMatch(new RegExp(`^[A-Za-z0-9]{${n}}$`))
		expect(requestId()).toMatch(/^req_[A-Za-z0-9]{24}$/)
		expect(newId('chatcmpl')).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/)
		expect(newId('call_', 10)).toMatch(/^call_[A-Za-z0-9]{10}$/)
	})
	it('should use every character about equally often and not repeat', () => {
		const counts = new Map<string, number>()
		const seen = new Set<string>()
		for (let i = 0; i < 6_200; i++) {
			const s = randomString(10)
			seen.add(s)
			for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1)
		}
		expect(seen.size).toBe(6_200)
		expect(counts.size).toBe(62)
		// 1,000 expected per character; a biased mapping (byte % 62 without rejection) gives the first 8 ~1,250.
		for (const n of counts.values()) {
			expect(n).toBeGreaterThan(850)
			expect(n).toBeLessThan(1_150)
		}
	})
})
