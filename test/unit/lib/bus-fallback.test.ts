/**
 * The Redis bus with PostgreSQL behind it (src/lib/bus-fallback.ts), over two fake shared buses the test drives: what
 * goes through which, when Redis does not take a message (down, a failed or a hung PUBLISH), the copies an instance
 * that heard a fallen-back one sends, and what `subscribed` says. The real buses are tested in bus.test.ts and
 * pg-bus.test.ts, the three together across processes in test/integration/multi-instance/degraded-publisher.test.ts.
 */
import { describe, expect, it } from 'bun:test'
import type { Bus } from '../../../src/lib/bus'
import { fallbackBus } from '../../../src/lib/bus-fallback'

/** A shared bus whose state and sends the test sets: `up`, and what a send resolves to (a count, undefined: failed, or never). */
function fake(kind: 'redis' | 'postgres') {
	const handlers = new Map<string, (m: string) => void>()
	const resyncs = new Map<string, () => void>()
	const state = {
		up: true,
		reached: 1 as number | undefined | 'hang',
		sent: [] as string[],
		kept: [] as string[],
		closed: false,
	}
	const bus: Bus = {
		kind,
		publish: () => {
			throw new Error('not used by the fallback bus')
		},
		publishCounted: () => {
			throw new Error('not used by the fallback bus')
		},
		subscribe(topic, handler, resync) {
			handlers.set(topic, handler)
			if (resync) resyncs.set(topic, resync)
		},
		close: async () => {
			state.closed = true
		},
		ready: async () => {},
		ping: async () => state.up,
		subscribed: () => state.up,
		async sendOthers(topic, message, keep) {
			if (!state.up) {
				if (keep) state.kept.push(`${topic} ${message}`)
				return undefined
			}
			state.sent.push(`${topic} ${message}`)
			if (state.reached === 'hang') return new Promise<never>(() => {})
			if (state.reached === undefined && keep) state.kept.push(`${topic} ${message}`)
			return state.reached
		},
	}
	return {
		bus,
		state,
		/** A message from another instance arriving on this bus. */
		hear: (topic: string, message: string) => handlers.get(topic)?.(message),
		resync: (topic: string) => resyncs.get(topic)?.(),
		topics: () => [...handlers.keys()].sort(),
	}
}

function setup() {
	const redis = fake('redis')
	const pg = fake('postgres')
	const errors: unknown[] = []
	const bus = fallbackBus(redis.bus, pg.bus, (e) => errors.push(e))
	const got: string[] = []
	let resyncs = 0
	bus.subscribe(
		'news',
		(m) => got.push(m),
		() => resyncs++,
	)
	return { redis, pg, bus, got, errors, resyncs: () => resyncs }
}

describe('fallback bus', () => {
	it('should send through Redis only while Redis takes the messages, and deliver here at once', async () => {
		const { redis, pg, bus, got } = setup()
		redis.state.reached = 2
		expect(await bus.publishCounted('news', 'a')).toBe(2)
		bus.publish('news', 'b')
		await Bun.sleep(0)
		expect(got).toEqual(['a', 'b'])
		expect(redis.state.sent).toEqual(['news a', 'news b'])
		expect(pg.state.sent).toEqual([])
		// Listening on both, the copies' topic too.
		expect(redis.topics()).toEqual(['news'])
		expect(pg.topics()).toEqual(['copy:news', 'news'])
		expect(bus.kind).toBe('redis')
	})

	it('should send through PostgreSQL what it cannot send through Redis: Redis down, a PUBLISH failed or not answered within 0.5 s', async () => {
		const { redis, pg, bus, got, errors } = setup()
		pg.state.reached = 3
		redis.state.up = false
		expect(await bus.publishCounted('news', 'down')).toBe(3)
		redis.state.up = true
		redis.state.reached = undefined
		expect(await bus.publishCounted('news', 'failed')).toBe(3)
		redis.state.reached = 'hang'
		const t0 = Date.now()
		expect(await bus.publishCounted('news', 'hung')).toBe(3)
		expect(Date.now() - t0).toBeGreaterThanOrEqual(450)
		expect(Date.now() - t0).toBeLessThan(1_500)
		expect(got).toEqual(['down', 'failed', 'hung'])
		expect(redis.state.sent).toEqual(['news failed', 'news hung'])
		expect(pg.state.sent).toEqual(['news down', 'news failed', 'news hung'])
		// Neither kept a message the other took.
		expect([redis.state.kept, pg.state.kept]).toEqual([[], []])
		expect(String(errors.at(-1))).toContain('redis publish timed out')
	})

	it('should keep for both a message neither could send, and say so', async () => {
		const { redis, pg, bus, got, errors } = setup()
		redis.state.up = false
		pg.state.up = false
		expect(await bus.publishCounted('news', 'lost?')).toBe(0)
		expect(got).toEqual(['lost?'])
		expect(redis.state.kept).toEqual(['news lost?'])
		expect(pg.state.kept).toEqual(['news lost?'])
		expect(String(errors.at(-1))).toContain('could not tell the other instances (news)')
	})

	it('should also send copies through PostgreSQL for a while after hearing an instance that fell back, which do not start the same elsewhere', async () => {
		const { redis, pg, bus, got } = setup()
		// A copy from another instance is delivered, and sends nothing through PostgreSQL after it.
		pg.hear('copy:news', 'copied')
		bus.publish('news', 'after a copy')
		// An instance that fell back: this one's answers must reach it through PostgreSQL too.
		pg.hear('news', 'fell back')
		bus.publish('news', 'answer')
		await Bun.sleep(0)
		expect(got).toEqual(['copied', 'after a copy', 'fell back', 'answer'])
		expect(redis.state.sent).toEqual(['news after a copy', 'news answer'])
		expect(pg.state.sent).toEqual(['copy:news answer'])
		// Heard through Redis: nothing changes.
		redis.hear('news', 'plain')
		expect(got.at(-1)).toBe('plain')
	})

	it("should be subscribed as Redis is (whatever the LISTEN session does), resync from either, and close both", async () => {
		const { redis, pg, bus, resyncs } = setup()
		expect(bus.subscribed()).toBe(true)
		// A LISTEN session down, or one that never listens (a transaction-pooling PgBouncer): no polling for it.
		pg.state.up = false
		expect(bus.subscribed()).toBe(true)
		redis.state.up = false
		expect(bus.subscribed()).toBe(false)
		expect(await bus.ping()).toBe(false)
		redis.resync('news')
		pg.resync('news')
		expect(resyncs()).toBe(2)
		await bus.close()
		expect([redis.state.closed, pg.state.closed]).toEqual([true, true])
	})

	it("should not let a handler that throws stop the others or reach the publisher", async () => {
		const { bus, got, errors } = setup()
		bus.subscribe('news', () => {
			throw new Error('boom')
		})
		bus.subscribe('news', (m) => got.push(`second ${m}`))
		expect(() => bus.publish('news', 'x')).not.toThrow()
		expect(got).toEqual(['x', 'second x'])
		expect(String(errors[0])).toContain('boom')
	})
})
