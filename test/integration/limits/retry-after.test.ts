/**
 * A 429's `retry-after` is a promise the SDKs keep: the OpenAI and Anthropic clients wait that long and send the
 * request again. A retry made exactly then must be admitted, on one instance or on two counting in Redis, for the
 * requests-per-minute and the tokens-per-minute limit alike (the window slides, so the bucket's end is not the answer).
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { silentLogger } from '../../../src/lib/log'
import { createRateLimiter, type LimitedToken } from '../../../src/limits/rate-limit'
import { REDIS_URL, redisPrefix } from '../../helpers/redis'

const MINUTE = 60_000

/** A limiter (or two sharing Redis, once both count there) on a clock the test moves. */
async function limiters(shared: boolean) {
	const clock = { now: Date.now() }
	const make = () => createRateLimiter({ redisUrl: shared ? REDIS_URL : undefined, prefix: redisPrefix(import.meta.path), log: silentLogger, now: () => clock.now })
	const a = make()
	const b = shared ? make() : undefined
	// Until connected, each counts on its own: wait until a request on one is counted on the other.
	for (let i = 0; b && i < 200; i++) {
		const probe = key({ rpmLimit: 1 })
		await admit(a, probe)
		if ((await admit(b, probe)) > 0) break
		await Bun.sleep(25)
	}
	return { clock, a, b }
}

/** Resolves to the 429's retry-after in seconds, or 0 when admitted. */
const admit = (limiter: ReturnType<typeof createRateLimiter>, token: LimitedToken): Promise<number> =>
	(limiter.admit(token) ?? Promise.resolve()).then(
		() => 0,
		(e: unknown) => {
			expect(e).toBeInstanceOf(GatewayError)
			expect((e as GatewayError).status).toBe(429)
			return (e as GatewayError).retryAfter!
		},
	)

const key = (limits: Partial<LimitedToken>): LimitedToken => ({ keyId: `ra-${crypto.randomUUID()}`, rpmLimit: null, tpmLimit: null, ...limits })

for (const shared of [false, true])
	describe(`retry-after of a key's rate limit (${shared ? 'two instances, Redis' : 'one instance'})`, () => {
		it('should admit the retry a client makes when retry-after says, over requests per minute', async () => {
			const { clock, a, b } = await limiters(shared)
			// A bucket start in the clock's future of real time: the Redis keys of this run only.
			clock.now = (Math.floor(Date.now() / MINUTE) + 1000) * MINUTE + 1_000
			const token = key({ rpmLimit: 2 })
			expect(await admit(a, token)).toBe(0)
			expect(await admit(b ?? a, token)).toBe(0)
			const wait = await admit(a, token)
			expect(wait).toBeGreaterThan(0)
			clock.now += wait * 1000
			expect(await admit(b ?? a, token)).toBe(0)
		})

		it('should not tell a client to come back before the window would admit it', async () => {
			const { clock, a, b } = await limiters(shared)
			clock.now = (Math.floor(Date.now() / MINUTE) + 2000) * MINUTE + 50_000
			const token = key({ rpmLimit: 3 })
			for (let i = 0; i < 3; i++) expect(await admit(i % 2 ? (b ?? a) : a, token)).toBe(0)
			const wait = await admit(a, token)
			// A second earlier it would still be refused (and counted), which a client must not be sent into.
			clock.now += (wait - 1) * 1000
			expect(await admit(b ?? a, token)).toBeGreaterThan(0)
		})

		it('should admit the retry a client makes when retry-after says, over tokens per minute', async () => {
			const { clock, a, b } = await limiters(shared)
			clock.now = (Math.floor(Date.now() / MINUTE) + 3000) * MINUTE + 10_000
			const token = key({ tpmLimit: 100 })
			expect(await admit(a, token)).toBe(0)
			a.addTokens(token.keyId, 300)
			await Bun.sleep(50) // the count is added without waiting
			const wait = await admit(b ?? a, token)
			expect(wait).toBeGreaterThan(0)
			clock.now += wait * 1000
			expect(await admit(a, token)).toBe(0)
		})
	})
