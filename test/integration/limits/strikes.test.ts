/**
 * The failure counts behind the sign-in and ADMIN_KEY lockouts (src/limits/strikes.ts), in a real Redis (REDIS_URL,
 * default 127.0.0.1:6379) and, with DATABASE_URL, in PostgreSQL: fixed and sliding windows, reads, clears, lapsing and
 * the sweep; limiters on one store act as instances sharing it; the right ADMIN_KEY costs no call on an instance that
 * saw no wrong one; while Redis is down the limits count in memory (fail open) and share again once it is back; a Redis
 * that stalls is waited for once, then skipped.
 */
import { afterAll, describe, expect, it } from 'bun:test'
import type { Db } from '../../../src/db/client'
import type { Logger } from '../../../src/lib/log'
import { silentLogger } from '../../../src/lib/log'
import { sharedLoginBackoff } from '../../../src/limits/login-backoff'
import { sharedSecretGuessGuard } from '../../../src/limits/secret-guess'
import { createStrikes, type Strikes } from '../../../src/limits/strikes'
import { sharedLoginLimiter } from '../../../src/modules/console/login-limiter'
import { createTestDb, type TestDb } from '../../helpers/db'
import { REDIS_URL, redisPrefix } from '../../helpers/redis'
import { startTcpProxy } from '../../helpers/tcp-proxy'

const prefix = () => `${redisPrefix(import.meta.path)}${crypto.randomUUID().slice(0, 8)}:`
const ON_POSTGRES = !!process.env.DATABASE_URL

let tdb: TestDb | undefined
const stores: Strikes[] = []
afterAll(async () => {
	for (const s of stores) await s.close()
	await tdb?.drop()
})

const backends: Array<[string, () => Promise<Strikes>]> = [
	['redis', async () => createStrikes({ redisUrl: REDIS_URL, prefix: prefix(), log: silentLogger })!],
	[
		'postgres',
		async () => {
			tdb ??= await createTestDb()
			return createStrikes({ db: tdb.db, log: silentLogger, sweepMs: 50 })!
		},
	],
]

for (const [name, open] of backends) {
	describe.skipIf(name === 'postgres' && !ON_POSTGRES)(`strikes in ${name}`, () => {
		const store = async () => {
			const s = await open()
			stores.push(s)
			expect(s.kind).toBe(name as Strikes['kind'])
			return s
		}

		it('should count in a window fixed at the first failure, or sliding with each, and read and clear the counts', async () => {
			const s = await store()
			const k = `t:${crypto.randomUUID()}`
			expect(await s.hit(`${k}:fixed`, 60_000, false)).toMatchObject({ count: 1 })
			await Bun.sleep(300)
			const fixed = (await s.hit(`${k}:fixed`, 60_000, false))!
			expect(fixed.count).toBe(2)
			expect(fixed.ttlMs).toBeLessThanOrEqual(59_750)
			await s.hit(`${k}:sliding`, 60_000, true)
			await Bun.sleep(300)
			const sliding = (await s.hit(`${k}:sliding`, 60_000, true))!
			expect(sliding.count).toBe(2)
			expect(sliding.ttlMs).toBeGreaterThan(59_700)
			const [f, none, sl] = (await s.read([`${k}:fixed`, `${k}:none`, `${k}:sliding`]))!
			expect(f!.count).toBe(2)
			expect(none).toBeNull()
			expect(sl!.count).toBe(2)
			await s.clear(`${k}:fixed`)
			expect(await s.read([`${k}:fixed`])).toEqual([null])
		})

		it('should forget a count once its window lapsed, and start again from one', async () => {
			const s = await store()
			const k = `t:${crypto.randomUUID()}`
			await s.hit(k, 150, false)
			await s.hit(k, 150, false)
			await Bun.sleep(250)
			expect(await s.read([k])).toEqual([null])
			expect(await s.hit(k, 60_000, false)).toMatchObject({ count: 1 })
			if (name !== 'postgres') return
			// Lapsed rows are swept (every 50 ms here).
			await s.hit(`${k}:gone`, 50, false)
			await Bun.sleep(300)
			const rows = await tdb!.db.sql.query<{ key: string }>('SELECT key FROM login_strikes WHERE key LIKE $1', [`${k}%`])
			expect(rows.map((r) => r.key)).toEqual([k])
		})

		it('should lock a key on every limiter that shares the store, wherever its failures were counted', async () => {
			const s = await store()
			const [a, b] = [sharedLoginLimiter(s, 'login'), sharedLoginLimiter(s, 'login')]
			for (let i = 0; i < 5; i++) await (i % 2 ? b : a).fail('alice|1.2.3.4')
			expect(await a.retryAfter('alice|1.2.3.4')).toBeGreaterThan(0)
			expect(await b.retryAfter('alice|1.2.3.4')).toBeGreaterThan(0)
			expect(await b.retryAfter('alice|5.6.7.8')).toBe(0)
			// A success clears it for both.
			const k = 'bob|1.2.3.4'
			for (let i = 0; i < 4; i++) await a.fail(k)
			await b.succeed(k)
			await a.fail(k)
			expect(await a.retryAfter(k)).toBe(0)
		})

		it("should share a username's back-off and the addresses its owner signed in from", async () => {
			const s = await store()
			const [a, b] = [sharedLoginBackoff(s, 'login-user', { freeFailures: 2 }), sharedLoginBackoff(s, 'login-user', { freeFailures: 2 })]
			await a.succeed('carol', '9.9.9.9')
			for (let i = 0; i < 3; i++) await (i % 2 ? b : a).fail('carol', `1.1.1.${i}`)
			expect(await b.retryAfter('Carol', '1.1.1.99')).toBe(1)
			expect(await b.retryAfter('carol', '9.9.9.9')).toBe(0)
		})
	})
}

describe('the ADMIN_KEY guard on shared counts', () => {
	it('should ask the store nothing for the right key until this instance sees a wrong one, and then find the lock', async () => {
		const s = createStrikes({ redisUrl: REDIS_URL, prefix: prefix(), log: silentLogger })!
		stores.push(s)
		const calls = { hit: 0, read: 0, clear: 0 }
		const spy: Strikes = {
			kind: s.kind,
			hit: (...a) => (calls.hit++, s.hit(...a)),
			read: (...a) => (calls.read++, s.read(...a)),
			clear: (...a) => (calls.clear++, s.clear(...a)),
			close: () => s.close(),
		}
		const [a, b] = [sharedSecretGuessGuard(spy), sharedSecretGuessGuard(s)]
		for (let i = 0; i < 100; i++) {
			expect(await a.retryAfter('10.0.0.1')).toBe(0)
			await a.succeed('10.0.0.1')
		}
		// Only the address remembered as one that used the right key, once.
		expect(calls).toEqual({ hit: 1, read: 0, clear: 0 })
		// Ten wrong keys through the other instance lock the address; this one's first wrong key finds it locked.
		for (let i = 0; i < 10; i++) expect(await b.fail('10.0.0.2')).toBe(0)
		expect(await a.retryAfter('10.0.0.2')).toBe(0)
		expect(await a.fail('10.0.0.2')).toBeGreaterThan(0)
		// From then on this instance asks, and refuses the right key too.
		expect(await a.retryAfter('10.0.0.2')).toBeGreaterThan(0)
		for (let i = 0; i < 10; i++) await b.fail('10.0.0.3')
		expect(await a.retryAfter('10.0.0.3')).toBeGreaterThan(0)
	})
})

describe('shared counts while Redis is down', () => {
	it('should lock in memory meanwhile, warning once, and share the counts again once Redis is back', async () => {
		const target = new URL(REDIS_URL)
		const proxy = await startTcpProxy(Number(target.port || 6379), { targetHost: target.hostname, startCut: true })
		try {
			const warnings: string[] = []
			const log: Logger = { ...silentLogger, warn: (m) => warnings.push(m) }
			const p = prefix()
			const s = createStrikes({ redisUrl: `redis://127.0.0.1:${proxy.port}`, prefix: p, log, redis: { maxRetries: 1 } })!
			stores.push(s)
			const l = sharedLoginLimiter(s, 'login')
			for (let i = 0; i < 5; i++) expect(await l.fail('dan|1.2.3.4')).toBe(0)
			expect(await l.retryAfter('dan|1.2.3.4')).toBeGreaterThan(0)
			expect(warnings).toEqual(['redis unavailable: sign-in and ADMIN_KEY lockouts are per instance until it returns'])

			await proxy.restore()
			const direct = createStrikes({ redisUrl: REDIS_URL, prefix: p, log: silentLogger })!
			stores.push(direct)
			const deadline = Date.now() + 10_000
			while (!(await s.hit('probe', 60_000, false))) {
				if (Date.now() > deadline) throw new Error('never shared again')
				await Bun.sleep(100)
			}
			for (let i = 0; i < 5; i++) await sharedLoginLimiter(direct, 'login').fail('erin|1.2.3.4')
			expect(await l.retryAfter('erin|1.2.3.4')).toBeGreaterThan(0)
		} finally {
			proxy.stop()
		}
	}, 30_000)
})

describe('shared counts while Redis stalls', () => {
	it('should wait for Redis about a second once, then count in memory at once until it answers again', async () => {
		const target = new URL(REDIS_URL)
		const proxy = await startTcpProxy(Number(target.port || 6379), { targetHost: target.hostname })
		try {
			const s = createStrikes({ redisUrl: `redis://127.0.0.1:${proxy.port}`, prefix: prefix(), log: silentLogger })!
			stores.push(s)
			expect(await s.hit('frank', 60_000, false)).toMatchObject({ count: 1 })
			// The connection stays open and nothing comes back (a partition): every ADMIN_KEY request reads the counts.
			proxy.stall()
			const t0 = performance.now()
			expect(await s.read(['frank'])).toBeUndefined()
			expect(performance.now() - t0).toBeLessThan(2_500)
			const t1 = performance.now()
			for (let i = 0; i < 5; i++) expect(await s.read(['frank'])).toBeUndefined()
			expect(performance.now() - t1).toBeLessThan(300)
		} finally {
			proxy.stop()
		}
	}, 30_000)
})

describe('without a shared store', () => {
	it('should keep the counts in memory on PGlite, one process', () => {
		expect(createStrikes({ db: { kind: 'pglite' } as Db, log: silentLogger })).toBeUndefined()
		const l = sharedLoginLimiter(undefined, 'login')
		for (let i = 0; i < 5; i++) l.fail('fay|1.2.3.4')
		expect(l.retryAfter('fay|1.2.3.4')).toBeGreaterThan(0)
	})
})
