import { describe, expect, it } from 'bun:test'
import { DEFAULT_ANSWER_TOKENS, defaultOutputCap, fitThinkingBudget, thinkingBudget } from '../../../src/core/reasoning'
import { upstreamCap, withUpstreamCap } from '../../../src/relay/budget'

describe('fitThinkingBudget (the caller’s cap is a total)', () => {
	it('should keep the budget asked for when there is no cap, raised to the vendor minimum', () => {
		expect(fitThinkingBudget(4096, false, undefined, 1024)).toBe(4096)
		expect(fitThinkingBudget(100, true, undefined, 1024)).toBe(1024)
	})

	it('should keep a budget derived from an effort only when it takes at most half of the cap', () => {
		expect(fitThinkingBudget(4096, false, 8192, 1024)).toBe(4096)
		expect(fitThinkingBudget(4096, false, 8000, 1024)).toBe(4000)
		expect(fitThinkingBudget(4096, false, 1000, 128)).toBe(500)
	})

	it('should keep a budget the caller gave while it is below the cap, else take half of the cap', () => {
		expect(fitThinkingBudget(31999, true, 32000, 1024)).toBe(31999)
		expect(fitThinkingBudget(4096, true, 4096, 1024)).toBe(2048)
		expect(fitThinkingBudget(5000, true, 3000, 1024)).toBe(1500)
	})

	it('should turn thinking off (undefined) rather than raise a cap too small for the minimum', () => {
		expect(fitThinkingBudget(4096, false, 1000, 1024)).toBeUndefined()
		expect(fitThinkingBudget(1024, true, 1024, 1024)).toBeUndefined()
		expect(fitThinkingBudget(2048, false, 200, 128)).toBeUndefined()
	})

	it('should never return a budget that reaches the cap', () => {
		for (const cap of [1, 2, 3, 100, 1023, 1024, 2047, 2048, 2049, 4096, 10000])
			for (const want of [1, 512, 1024, 2048, 4096, 50000])
				for (const explicit of [true, false]) {
					const b = fitThinkingBudget(want, explicit, cap, 1)
					if (b !== undefined) expect(b).toBeLessThan(cap)
				}
	})
})

describe('defaultOutputCap', () => {
	it('should leave a default answer’s room above the thinking budget', () => {
		expect(defaultOutputCap()).toBe(DEFAULT_ANSWER_TOKENS)
		expect(defaultOutputCap({ enabled: false, budgetTokens: 0 })).toBe(DEFAULT_ANSWER_TOKENS)
		expect(defaultOutputCap({ enabled: true, effort: 'high' })).toBe(DEFAULT_ANSWER_TOKENS + 4096)
		expect(defaultOutputCap({ enabled: true, budgetTokens: 10000 })).toBe(DEFAULT_ANSWER_TOKENS + 10000)
		expect(thinkingBudget({ enabled: true }, 2048)).toBe(2048)
	})
})

describe('upstreamCap (what a converted request carries)', () => {
	const free = { cap: 4096, capChanged: false }
	it('should send no cap when the client set none and nothing lowered the assumed one', () => {
		expect(upstreamCap(free, undefined, false)).toBeUndefined()
		expect(withUpstreamCap({ model: 'm', messages: [], stream: false }, free, false)).not.toHaveProperty('maxTokens')
	})

	it('should send the client’s cap, a cap the budget lowered, and the reserved cap where the protocol requires one', () => {
		expect(upstreamCap({ cap: 300, capChanged: false }, 300, false)).toBe(300)
		expect(upstreamCap({ cap: 120, capChanged: true }, undefined, false)).toBe(120)
		expect(upstreamCap(free, undefined, true)).toBe(4096)
		expect(withUpstreamCap({ model: 'm', messages: [], stream: false, maxTokens: 5000 }, { cap: 900, capChanged: true }, false).maxTokens).toBe(900)
	})
})
