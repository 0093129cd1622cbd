import { describe, expect, it } from 'bun:test'
import { outputUsage } from '../../../src/tasks/batch-usage'
import { settlementRows } from '../../../src/tasks/batch'

const price = { inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 }
const line = (id: string, status: number, usage: unknown) => JSON.stringify({ custom_id: id, response: { status_code: status, body: { usage } } })

describe('outputUsage', () => {
	it("should sum each model's completed lines, cache and reasoning apart, and skip failed lines", () => {
		const text = [
			line('a', 200, { prompt_tokens: 10, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 2 } }),
			line('b', 200, { prompt_tokens: 5, completion_tokens: 1 }),
			line('c', 400, { prompt_tokens: 99, completion_tokens: 99 }),
			line('d', 200, { prompt_tokens: 7, completion_tokens: 0 }),
		].join('\n')
		const byModel = outputUsage(text, { endpoint: '/v1/chat/completions', prices: { m1: price, m2: price }, models: { d: 'm2' } }, 'm1')
		expect(byModel.get('m1')).toEqual({ usage: { input: 12, cacheRead: 3, cacheWrite: 0, output: 5, reasoning: 2 }, cost: 7 + 3 + 4 * 2 + 5 + 1 * 2 })
		expect(byModel.get('m2')).toEqual({ usage: { input: 7, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 }, cost: 7 })
	})
})

describe('settlementRows', () => {
	it("should give each other model its own cost and the first model the rest of the difference", () => {
		const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0 }
		const rows = settlementRows('a', new Map([['b', { usage, cost: 30 }], ['a', { usage, cost: 20 }]]), -50)
		expect(rows).toEqual([
			{ model: 'a', usage, cost: -80 },
			{ model: 'b', usage, cost: 30 },
		])
		// The first model completed nothing: its row carries no tokens.
		expect(settlementRows('a', new Map([['b', { usage, cost: 30 }]]), 10)[0]).toEqual({ model: 'a', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, cost: -20 })
	})
})
