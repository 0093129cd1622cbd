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
