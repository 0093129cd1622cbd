import { describe, expect, it } from 'bun:test'
import { inlinedUsage } from '../../../src/tasks/gemini-batch'

const price = { inputPerMtok: 1_000_000, outputPerMtok: 2_000_000, cacheReadPerMtok: 500_000 }
const terms = { endpoint: '/v1beta/models/{model}:batchGenerateContent', prices: { g: price } }
const answered = (usageMetadata: unknown) => ({ response: { candidates: [], usageMetadata }, metadata: { k: 1 } })

describe('inlinedUsage', () => {
	it('should sum the answered responses (cached and thinking tokens apart) and skip error responses', () => {
		const list = [
			answered({ promptTokenCount: 10, cachedContentTokenCount: 4, candidatesTokenCount: 3, thoughtsTokenCount: 2 }),
			{ error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' } },
			answered({ promptTokenCount: 5, candidatesTokenCount: 1 }),
		]
		const op = { done: true, response: { inlinedResponses: { inlinedResponses: list } } }
		const want = { usage: { input: 11, cacheRead: 4, cacheWrite: 0, output: 6, reasoning: 2 }, cost: 6 + 2 + 5 * 2 + 5 + 1 * 2 }
		expect(inlinedUsage(op, terms, 'g').get('g')).toEqual(want)
		// The same list under `metadata.output` (an Operation without `response`) reads the same.
		expect(inlinedUsage({ done: true, metadata: { output: { inlinedResponses: { inlinedResponses: list } } } }, terms, 'g').get('g')).toEqual(want)
		expect(inlinedUsage({ done: true, metadata: { state: 'BATCH_STATE_EXPIRED' } }, terms, 'g').size).toBe(0)
	})
})
