/**
 * The Redis bus across outages, against a real Redis (REDIS_URL, default 127.0.0.1:6379) behind a TCP relay the test
 * cuts and restores. Each test uses its own channel prefix: Redis channels are not scoped by database, and other
 * test files publish on the gateway's real topics.
 */
import { afterEach, describe, expect, it } from 'bun:test'
import { type Bus, type RedisBusOptions, redisBus } from '../../../src/lib/bus'
import { type TcpProxy, startTcpProxy } from '../../helpers/tcp-proxy'

const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const REDIS_PORT = Number(REDIS.port || 6379)

const cleanup: Array<() => unknown> = []
afterEach(async () => {
	for (const f of cleanup.splice(0).reverse()) await f()
})

/** Fast reconnects, so a test waits at most a fraction of a second after Redis is back. */
const FAST: RedisBusOptions = { retry: { minMs: 20, maxMs: 200 }, connectWaitMs: 1_000 }

async function proxy(opts: { startCut?: boolean } = {}): Promise<TcpProxy> {
	const p = await startTcpProxy(REDIS_PORT, { targetHost: REDIS.hostname, ...opts })
	cleanup.push(() => p.stop())
	return p
}

async function bus(port: number, prefix: string, opts: RedisBusOptions = {}): Promise<Bus> {
	const b = await redisBus(`redis://${REDIS.hostname}:${port}/11`, () => {}, { ...FAST, prefix, ...opts })
	cleanup.push(() => b.close())
	return b
}

/** A subscriber that records what it hears and how often it was told to resync. */
function listen(b: Bus, topic: string) {
	const got: string[] = []
	const r = { got, resyncs: 0 }
	b.subscribe(
		topic,
		(m) => got.push(m),
		() => r.resyncs++,
	)
	return r
}

async function until(what: string, cond: () => boolean, ms = 10_000) {
	const deadline = Date.now() + ms
	while (!cond()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
		await Bun.sleep(10)
	}
}

const uniquePrefix = () => `sbtest-${crypto.randomUUID()}:`

describe('redis bus', () => {
	it('should subscribe again after Redis was cut, so messages from the other instance arrive', async () => {
		const prefix = uniquePrefix()
		const p = await proxy()
		const a = await bus(REDIS_PORT, prefix)
		const b = await bus(p.port, prefix)
		const atB = listen(b, 'news')
		const atA = listen(a, 'news')
		await a.ready()
		await b.ready()
		a.publish('news', 'before')
		await until('b hears a', () => atB.got.includes('before'))

		p.cut()
		await until('b notices the cut', () => !b.subscribed())
		await Bun.sleep(300) // several failed reconnects
		expect(b.subscribed()).toBe(false)
		await p.restore()
		await until('b is subscribed again', () => b.subscribed())

		a.publish('news', 'after')
		await until('b hears a again', () => atB.got.includes('after'))
		b.publish('news', 'from-b')
		await until('a hears b', () => atA.got.includes('from-b'))
		expect(atB.resyncs).toBe(1)
		expect(atA.resyncs).toBe(0)
		// Subscribed once on the new connection, not once per reconnect.
		expect(atB.got.filter((m) => m === 'after')).toEqual(['after'])
	})

	it('should join once Redis is reachable when it was down at start', async () => {
		const prefix = uniquePrefix()
		const p = await proxy({ startCut: true })
		const a = await bus(REDIS_PORT, prefix)
		const states: boolean[] = []
		const b = await bus(p.port, prefix, { connectWaitMs: 100, onState: (up) => states.push(up) })
		expect(b.kind).toBe('redis')
		expect(b.subscribed()).toBe(false)
		expect(await b.ping()).toBe(false)
		const atB = listen(b, 'news')
		await b.ready() // does not wait for Redis
		await Bun.sleep(300)

		await p.restore()
		await until('b is subscribed', () => b.subscribed())
		expect(await b.ping()).toBe(true)
		expect(states).toEqual([false, true])
		expect(atB.resyncs).toBe(1) // it may have missed everything published before
		a.publish('news', 'hello')
		await until('b hears a', () => atB.got.includes('hello'))
	})

	it('should send what it published while Redis was down once it is back', async () => {
		const prefix = uniquePrefix()
		const p = await proxy()
		const a = await bus(REDIS_PORT, prefix)
		const b = await bus(p.port, prefix)
		const atA = listen(a, 'news')
		const atB = listen(b, 'news')
		await a.ready()
		p.cut()
		await until('b notices the cut', () => !b.subscribed())
		b.publish('news', 'revoked-1')
		b.publish('news', 'revoked-1')
		b.publish('news', 'revoked-2')
		expect(atB.got).toEqual(['revoked-1', 'revoked-1', 'revoked-2']) // locally at once
		await Bun.sleep(100)
		expect(atA.got).toEqual([])
		await p.restore()
		await until('a hears what b published meanwhile', () => atA.got.includes('revoked-2'))
		expect(atA.got).toEqual(['revoked-1', 'revoked-2'])
	})

	it('should send to the others only with sendOthers, saying when it could not, and keep it for later only when asked', async () => {
		const prefix = uniquePrefix()
		const p = await proxy()
		const a = await bus(REDIS_PORT, prefix)
		const b = await bus(p.port, prefix)
		const atA = listen(a, 'news')
		const atB = listen(b, 'news')
		await a.ready()
		await b.ready()
		expect(await b.sendOthers!('news', 'sent', false)).toBe(1)
		await until('a hears it', () => atA.got.includes('sent'))
		expect(atB.got).toEqual([]) // not delivered to the sender's own handlers
		p.cut()
		await until('b notices the cut', () => !b.subscribed())
		expect(await b.sendOthers!('news', 'dropped', false)).toBeUndefined()
		expect(await b.sendOthers!('news', 'kept', true)).toBeUndefined()
		await p.restore()
		await until('a hears what b kept', () => atA.got.includes('kept'))
		expect(atA.got).toEqual(['sent', 'kept'])
	})

	it('should notice a connection that stopped answering without closing, and reconnect', async () => {
		const prefix = uniquePrefix()
		const p = await proxy()
		const a = await bus(REDIS_PORT, prefix)
		const b = await bus(p.port, prefix, { heartbeatMs: 100 })
		const atB = listen(b, 'news')
		await b.ready()
		p.stall()
		await until('b notices the silent connection', () => !b.subscribed(), 5_000)
		await p.restore()
		await until('b is subscribed again', () => b.subscribed())
		a.publish('news', 'hello')
		await until('b hears a', () => atB.got.includes('hello'))
		expect(atB.resyncs).toBe(1)
	})

	it('should stop reconnecting once closed', async () => {
		const p = await proxy({ startCut: true })
		const b = await bus(p.port, uniquePrefix(), { connectWaitMs: 50 })
		await b.close()
		await p.restore()
		await Bun.sleep(400)
		expect(b.subscribed()).toBe(false)
	})
})
