import { describe, expect, it } from 'bun:test'
import { Counter, Gauge, Histogram, Registry } from '../../../src/metrics/registry'

describe('metrics registry', () => {
	it('should keep one series per label set and render them in the exposition format', () => {
		const r = new Registry()
		const c = r.register(new Counter('req_total', 'Requests', ['endpoint', 'status']))
		c.inc({ endpoint: '/v1/chat', status: 200 })
		c.inc({ endpoint: '/v1/chat', status: '200' }, 2)
		c.inc({ endpoint: '/v1/messages', status: 200 })
		c.inc({ endpoint: '/v1/chat', status: 502 })
		expect(r.render()).toBe(
			[
				'# HELP req_total Requests',
				'# TYPE req_total counter',
				'req_total{endpoint="/v1/chat",status="200"} 3',
				'req_total{endpoint="/v1/messages",status="200"} 1',
				'req_total{endpoint="/v1/chat",status="502"} 1',
				'',
			].join('\n'),
		)
	})

	it('should not confuse label sets whose values would join to the same text', () => {
		const c = new Counter('x_total', 'x', ['a', 'b'])
		c.inc({ a: 'p', b: 'q r' })
		c.inc({ a: 'p q', b: 'r' })
		c.inc({ a: 'p' })
		expect(c.lines().slice(2)).toEqual(['x_total{a="p",b="q r"} 1', 'x_total{a="p q",b="r"} 1', 'x_total{a="p",b=""} 1'])
	})

	it('should keep the values of a label set, not the object given (observe-usage.ts refills one object per call)', () => {
		const c = new Counter('x_total', 'x', ['model', 'kind'])
		const h = new Histogram('y', 'y', ['model'], [1])
		const labels = { model: 'a', kind: 'input' }
		c.inc(labels, 2)
		h.observe(labels, 0.5)
		labels.model = 'b'
		labels.kind = 'output'
		c.inc(labels, 3)
		h.observe(labels, 2)
		expect(c.lines().slice(2)).toEqual(['x_total{model="a",kind="input"} 2', 'x_total{model="b",kind="output"} 3'])
		expect(h.lines().filter((l) => l.startsWith('y_count'))).toEqual(['y_count{model="a"} 1', 'y_count{model="b"} 1'])
	})

	it('should escape label values', () => {
		const c = new Counter('x_total', 'x', ['model'])
		c.inc({ model: 'a"b\\c\nd' })
		expect(c.lines()[2]).toBe('x_total{model="a\\"b\\\\c\\nd"} 1')
	})

	it('should count a gauge up and down, with or without labels', () => {
		const g = new Gauge('open', 'Open streams', [])
		g.inc()
		g.inc()
		g.dec()
		expect(g.get()).toBe(1)
		expect(g.lines()).toEqual(['# HELP open Open streams', '# TYPE open gauge', 'open 1'])
		const l = new Gauge('lease', 'Lease', ['account'])
		l.set({ account: 1 }, 5)
		l.inc({ account: '1' })
		expect(l.get({ account: 1 })).toBe(6)
		expect(l.get({ account: 2 })).toBe(0)
		// Reading a label set that was never set adds no series.
		expect(l.lines().slice(2)).toEqual(['lease{account="1"} 6'])
	})

	it('should count histogram observations into cumulative buckets with sum and count', () => {
		const h = new Histogram('dur_seconds', 'Duration', ['endpoint'], [0.1, 1])
		h.observe({ endpoint: 'e' }, 0.05)
		h.observe({ endpoint: 'e' }, 0.5)
		h.observe({ endpoint: 'e' }, 2)
		expect(h.lines().slice(2)).toEqual([
			'dur_seconds_bucket{endpoint="e",le="0.1"} 1',
			'dur_seconds_bucket{endpoint="e",le="1"} 2',
			'dur_seconds_bucket{endpoint="e",le="+Inf"} 3',
			'dur_seconds_sum{endpoint="e"} 2.55',
			'dur_seconds_count{endpoint="e"} 3',
		])
	})
})
