/**
 * A 429's `retry-after` is a promise the SDKs keep: the OpenAI and Anthropic clients wait that long and send the
 * request again. A retry made exactly then must be admitted, on one instance or on two counting in Redis or in one
 * PostgreSQL (with DATABASE_URL), for the requests-per-minute and the tokens-per-minute limit alike (the window
 * slides, so the bucket's end is not the answer).
 */
import { afterAll, describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { type Db, openDb } from '../../../src/db/client'
import { silentLogger } from '../../../src/lib/log'
import { createRateLimiter, type LimitedToken } from '../../../src/limits/rate-limit'
import { createTestDb, type TestDb } from '../../helpers/db'
import { REDIS_URL, redisPrefix } from '../../helpers/redis'

const MINUTE = 60_000

type Mode = 'one instance' | 'two instances, Redis' | 'two instances, PostgreSQL'

/** The PostgreSQL both instances share, and each one's own pool to it. */
let pg: Promise<{ tdb: TestDb; pools: Db[] }> | undefined
afterAll(async () => {
	const p = await pg
	for (const db of p?.pools ?? []) await db.sql.close()
	await p?.tdb.drop()
})
const pools = () =>
	(pg ??= (async () => {
		const tdb = await createTestDb()
		return { tdb, pools: [tdb.db, await openDb(tdb.url)] }
	})())

/** A limiter (or two sharing Redis or PostgreSQL, once both count there) on a clock the test moves. */
async function limiters(mode: Mode) {
	const clock = { now: Date.now() }
	const dbs = mode === 'two instances, PostgreSQL' ? (await pools()).pools : []
	const make = (i: number) =>
		createRateLimiter({
			redisUrl: mode === 'two instances, Redis' ? REDIS_URL : undefined,
			prefix: redisPrefix(import.meta.path),
			log: silentLogger,
			now: () => clock.now,
			db: dbs[i],
			// Tokens written at once, as Redis adds them.
			pg: { flushMs: 1 },
		})
	const a = make(0)
	const b = mode === 'one instance' ? undefined : make(1)
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

for (const mode of ['one instance', 'two instances, Redis', 'two instances, PostgreSQL'] as const)
	describe.skipIf(mode === 'two instances, PostgreSQL' && !process.env.DATABASE_URL)(`retry-after of a key's rate limit (${mode})`, () => {
		it('should admit the retry a client makes when retry-after says, over requests per minute', async () => {
			const { clock, a, b } = await limiters(mode)
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
			const { clock, a, b } = await limiters(mode)
			clock.now = (Math.floor(Date.now() / MINUTE) + 2000) * MINUTE + 50_000
			const token = key({ rpmLimit: 3 })
			for (let i = 0; i < 3; i++) expect(await admit(i % 2 ? (b ?? a) : a, token)).toBe(0)
			const wait = await admit(a, token)
			// A second earlier it would still be refused (and counted), which a client must not be sent into.
			clock.now += (wait - 1) * 1000
			expect(await admit(b ?? a, token)).toBeGreaterThan(0)
		})

		it('should admit the retry a client makes when retry-after says, over tokens per minute', async () => {
			const { clock, a, b } = await limiters(mode)
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
