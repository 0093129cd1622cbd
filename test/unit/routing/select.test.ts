import { describe, expect, it } from 'bun:test'
import { orderChannels } from '../../../src/routing/select'

const ch = (name: string, priority: number, weight: number) => ({ name, priority, weight })

describe('orderChannels', () => {
	it('should try the lowest priority number first', () => {
		const out = orderChannels([ch('b', 1, 1), ch('a', 0, 1), ch('c', 2, 1)], () => 0.5)
		expect(out.map((c) => c.name)).toEqual(['a', 'b', 'c'])
	})
	it('should pick by weight among equal priorities', () => {
		const counts = { x: 0, y: 0 }
		let seed = 1
		const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647)
		for (let i = 0; i < 4000; i++) counts[orderChannels([ch('x', 0, 3), ch('y', 0, 1)], rand)[0]!.name as 'x' | 'y']++
		expect(counts.x / 4000).toBeGreaterThan(0.7)
		expect(counts.x / 4000).toBeLessThan(0.8)
	})
	it('should keep every channel once, weight-0 ones included', () => {
		const out = orderChannels([ch('a', 0, 0), ch('b', 0, 5), ch('c', 0, 1)])
		expect(out.map((c) => c.name).sort()).toEqual(['a', 'b', 'c'])
	})
})

describe('orderChannels, weight 0', () => {
	it('should put a weight-0 channel after every other channel of its priority, and before the next priority', () => {
		// README: weight 0 is a standby. A random draw must never pick it first while another channel shares its tier.
		for (const r of [0, 0.25, 0.5, 0.75, 0.999999]) {
			const out = orderChannels([ch('standby', 0, 0), ch('a', 0, 1), ch('b', 0, 5), ch('next', 1, 1)], () => r).map((c) => c.name)
			expect(out.slice(2)).toEqual(['standby', 'next'])
		}
	})
})
