import { describe, expect, it } from 'bun:test'
import { settledCost } from '../../../src/tasks/refund'

describe('settledCost', () => {
	it('should charge usage under the hold as it is, and beyond the hold only as far as the room goes', () => {
		expect(settledCost(100, 60, 0)).toBe(60)
		expect(settledCost(100, 100, 0)).toBe(100)
		expect(settledCost(100, 150, 20)).toBe(120)
		expect(settledCost(100, 150, 500)).toBe(150)
		expect(settledCost(100, 150, 0)).toBe(100)
	})
})
