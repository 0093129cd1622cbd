/**
 * Shared rate limits across a Redis outage, against a real Redis (REDIS_URL, default 127.0.0.1:6379) behind a TCP
 * relay the test cuts and restores. Policy: while Redis is down each instance counts on its own (fail open), and the
 * counters are shared again once it answers, even after Bun's client gave up reconnecting.
 */
import { afterAll, describe, expect, it } from 'bun:test'
import { silentLogger } from '../../../src/lib/log'
import { createRateLimiter, type LimitedToken } from '../../../src/limits/rate-limit'
import { startTcpProxy } from '../../helpers/tcp-proxy'

const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const DIRECT = `redis://${REDIS.hostname}:${REDIS.port || 6379}/13`
const proxy = await startTcpProxy(Number(REDIS.port || 6379), { targetHost: REDIS.hostname })
afterAll(() => proxy.stop())

const token = (rpm: number): LimitedToken => ({ keyId: `rltest-${crypto.randomUUID()}`, rpmLimit: rpm, tpmLimit: null })
const admitted = (p: Promise<void> | undefined) =>
	(p ?? Promise.resolve()).then(
		() => true,
		() => false,
	)

/** Calls `limiter` with a throwaway key until its count lands in Redis: it is connected and counts there. */
async function untilShared(limiter: ReturnType<typeof createRateLimiter>) {
	const probe = token(1_000_000)
	const direct = new Bun.RedisClient(DIRECT)
	const deadline = Date.now() + 10_000
	try {
		for (;;) {
			await limiter.admit(probe)
			const bucket = Math.floor(Date.now() / 60_000)
			const seen = Number((await direct.get(`sb:rpm:${probe.keyId}:${bucket}`)) ?? 0) + Number((await direct.get(`sb:rpm:${probe.keyId}:${bucket - 1}`)) ?? 0)
			if (seen) return
			if (Date.now() > deadline) throw new Error('the limiter never counted in Redis')
			await Bun.sleep(100)
		}
	} finally {
		direct.close()
	}
}

describe('rate limits across a Redis outage', () => {
	it('should count per instance while Redis is down and share the counters again once it is back', async () => {
		const a = createRateLimiter({ redisUrl: DIRECT, log: silentLogger })
		// Few retries, so the client gives up within the test (by default after about 30 s down).
		const b = createRateLimiter({ redisUrl: `redis://127.0.0.1:${proxy.port}/13`, log: silentLogger, redis: { maxRetries: 2 } })
		await untilShared(a)
		await untilShared(b)
		const shared = token(2)
		expect(await admitted(a.admit(shared))).toBe(true)
		expect(await admitted(b.admit(shared))).toBe(true)
		expect(await admitted(b.admit(shared))).toBe(false) // one window for both

		proxy.cut()
		// Fail open: b counts on its own meanwhile, with the full limit.
		const alone = token(2)
		expect(await admitted(b.admit(alone))).toBe(true)
		expect(await admitted(b.admit(alone))).toBe(true)
		expect(await admitted(b.admit(alone))).toBe(false)
		await Bun.sleep(1_500) // every retry spent: Bun's client has given up
		await proxy.restore()

		// Back to shared counting (the first calls may still count locally while it reconnects).
		await untilShared(b)
		const again = token(2)
		expect(await admitted(a.admit(again))).toBe(true)
		expect(await admitted(b.admit(again))).toBe(true)
		expect(await admitted(b.admit(again))).toBe(false)
	})
})

describe('rate limits across a Redis that stops answering', () => {
	it('should count per instance within about a second of a stall, not wait on Redis forever, and share again after', async () => {
		const stallProxy = await startTcpProxy(Number(REDIS.port || 6379), { targetHost: REDIS.hostname })
		try {
			const a = createRateLimiter({ redisUrl: DIRECT, log: silentLogger })
			const b = createRateLimiter({ redisUrl: `redis://127.0.0.1:${stallProxy.port}/13`, log: silentLogger })
			await untilShared(a)
			await untilShared(b)
			// The connection stays open but nothing comes back (a partition): no command fails by itself.
			stallProxy.stall()
			const alone = token(2)
			const t0 = performance.now()
			expect(await admitted(b.admit(alone))).toBe(true)
			// The first call waits out the command's second, the next ones skip Redis at once for a while.
			expect(performance.now() - t0).toBeLessThan(2_500)
			const t1 = performance.now()
			expect(await admitted(b.admit(alone))).toBe(true)
			expect(await admitted(b.admit(alone))).toBe(false)
			expect(performance.now() - t1).toBeLessThan(500)
			// The relay dropped what it was sent (TCP would have delivered it late): the connection ends, as a long
			// partition's does, and the client opens a new one.
			stallProxy.cut()
			await stallProxy.restore()
			await untilShared(b)
			const again = token(2)
			expect(await admitted(a.admit(again))).toBe(true)
			expect(await admitted(b.admit(again))).toBe(true)
			expect(await admitted(b.admit(again))).toBe(false)
		} finally {
			stallProxy.stop()
		}
	}, 30_000)
})
