/**
 * Rate-limit buckets in PostgreSQL (src/limits/pg-buckets.ts), as two instances without Redis use them: two limiters,
 * each on its own connection pool to one fresh database (DATABASE_URL). A key's requests and tokens are counted
 * once for both, exactly under concurrent admits; tokens still waiting at close are written; old minutes are swept;
 * and while the database does not answer (connections cut, or a silent one) each counts on its own with one
 * warning, sharing again once it is back. PGlite is one process's database (memory is exact there): skipped without
 * DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Db } from '../../../src/db/client'
import { openDb } from '../../../src/db/client'
import { GatewayError } from '../../../src/core/errors'
import type { Logger } from '../../../src/lib/log'
import { silentLogger } from '../../../src/lib/log'
import { pgBuckets } from '../../../src/limits/pg-buckets'
import { createRateLimiter, type LimitedToken, type RateLimiter } from '../../../src/limits/rate-limit'
import { createTestDb, type TestDb } from '../../helpers/db'
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy'

const ON_POSTGRES = !!process.env.DATABASE_URL
if (!ON_POSTGRES) console.log('skip limits/pg-buckets.test.ts: rate-limit buckets are kept in PostgreSQL only (on PGlite one process counts in memory); set DATABASE_URL to run it')

const MINUTE = 60_000

let tdb: TestDb
/** A second pool on the same database: the other instance. */
let other: Db
const opened: Array<{ close(): Promise<void> }> = []
beforeAll(async () => {
	if (!ON_POSTGRES) return
	tdb = await createTestDb()
	other = await openDb(tdb.url)
})
afterAll(async () => {
	for (const o of opened) await o.close()
	await other?.sql.close()
	await tdb?.drop()
})

const key = (limits: Partial<LimitedToken>): LimitedToken => ({ keyId: `pg-${crypto.randomUUID()}`, rpmLimit: null, tpmLimit: null, ...limits })

function limiter(db: Db, opts: { log?: Logger; now?: () => number; pg?: { flushMs?: number; timeoutMs?: number } } = {}): RateLimiter {
	const l = createRateLimiter({ log: opts.log ?? silentLogger, db, now: opts.now, pg: opts.pg })
	opened.push(l)
	return l
}

/** 'ok', or the refusal's message (after checking it is a 429). */
const admit = (l: RateLimiter, token: LimitedToken): Promise<string> =>
	(l.admit(token) ?? Promise.resolve()).then(
		() => 'ok',
		(e: unknown) => {
			expect(e).toBeInstanceOf(GatewayError)
			expect((e as GatewayError).status).toBe(429)
			return (e as GatewayError).message
		},
	)

/** The key's rows, as the database holds them. */
const rows = (keyId: string) => tdb.db.sql.query<{ minute: number; requests: number; tokens: number }>('SELECT minute, requests, tokens FROM rate_buckets WHERE key_id = $1 ORDER BY minute', [keyId])

/** Waits until the key's tokens in the database reach `n` (a batch is written a few ms later). */
async function tokensReach(keyId: string, n: number) {
	for (let i = 0; i < 200; i++) {
		if ((await rows(keyId)).reduce((s, r) => s + Number(r.tokens), 0) >= n) return
		await Bun.sleep(10)
	}
	throw new Error(`tokens of ${keyId} never reached ${n}`)
}

/** A logger that keeps what it is told. */
function recording() {
	const lines: Array<{ level: string; msg: string }> = []
	const at = (level: string) => (msg: string) => void lines.push({ level, msg })
	const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
	return { log, lines }
}

describe.skipIf(!ON_POSTGRES)('rate-limit buckets in PostgreSQL', () => {
	it("should share a key's requests per minute between two instances on one database", async () => {
		const a = limiter(tdb.db)
		const b = limiter(other)
		expect(a.shared).toBe(true)
		const token = key({ rpmLimit: 3 })
		expect([await admit(a, token), await admit(b, token), await admit(a, token)]).toEqual(['ok', 'ok', 'ok'])
		expect(await admit(b, token)).toMatch(/3 requests per minute/)
		expect(await admit(a, token)).toMatch(/3 requests per minute/)
		// Refused requests count too (as OpenAI counts them), one row for the key's minute.
		expect((await rows(token.keyId)).map((r) => r.requests)).toEqual([5])
	})

	it('should admit exactly the limit when both instances admit at once', async () => {
		const a = limiter(tdb.db)
		const b = limiter(other)
		const token = key({ rpmLimit: 7 })
		const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => admit(i % 2 ? a : b, token)))
		expect(outcomes.filter((o) => o === 'ok').length).toBe(7)
	})

	it('should cost a key without limits nothing: no promise, no row', async () => {
		const a = limiter(tdb.db)
		const token = key({})
		expect(a.admit(token)).toBeUndefined()
		expect(await rows(token.keyId)).toEqual([])
	})

	it('should refuse on one instance the tokens counted on the other, and not count a request refused for tokens toward requests', async () => {
		const a = limiter(tdb.db, { pg: { flushMs: 5 } })
		const b = limiter(other)
		const token = key({ tpmLimit: 10, rpmLimit: 5 })
		expect(await admit(b, token)).toBe('ok')
		a.addTokens(token.keyId, 25)
		await tokensReach(token.keyId, 25)
		expect(await admit(b, token)).toMatch(/10 tokens per minute/)
		expect(await admit(a, token)).toMatch(/10 tokens per minute/)
		// Only the admitted request counted, as in memory and Redis.
		expect((await rows(token.keyId)).map((r) => [r.requests, Number(r.tokens)])).toEqual([[1, 25]])
	})

	it('should count its own tokens at once, before their batch is written', async () => {
		const a = limiter(tdb.db, { pg: { flushMs: 3_600_000 } })
		const onlyTokens = key({ tpmLimit: 10 })
		const both = key({ tpmLimit: 10, rpmLimit: 5 })
		a.addTokens(onlyTokens.keyId, 12)
		a.addTokens(both.keyId, 12)
		expect(await admit(a, onlyTokens)).toMatch(/10 tokens per minute/)
		expect(await admit(a, both)).toMatch(/10 tokens per minute/)
		// Refused for tokens, so not counted toward requests, though the database does not hold the tokens yet.
		expect(await rows(both.keyId)).toEqual([{ minute: expect.any(Number), requests: 0, tokens: 0 }])
	})

	it('should read a key with only a token limit without writing a row', async () => {
		const a = limiter(tdb.db)
		const token = key({ tpmLimit: 10 })
		expect(await admit(a, token)).toBe('ok')
		expect(await rows(token.keyId)).toEqual([])
	})

	it('should write at close the tokens still waiting for their batch', async () => {
		// A batch an hour away: only close can write it.
		const a = limiter(tdb.db, { pg: { flushMs: 3_600_000 } })
		const b = limiter(other)
		const token = key({ tpmLimit: 10 })
		a.addTokens(token.keyId, 4)
		a.addTokens(token.keyId, 9)
		expect(await rows(token.keyId)).toEqual([])
		await a.close()
		expect((await rows(token.keyId)).map((r) => Number(r.tokens))).toEqual([13])
		expect(await admit(b, token)).toMatch(/tokens per minute/)
	})

	it('should sweep minutes no window reads any more, and keep the current one and the two before', async () => {
		const now = (Math.floor(Date.now() / MINUTE) + 5000) * MINUTE + 30_000
		const m = Math.floor(now / MINUTE)
		const store = pgBuckets(tdb.db.sql, { now: () => now })
		opened.push(store)
		const keyId = `pg-${crypto.randomUUID()}`
		for (const minute of [m - 5, m - 3, m - 2, m - 1, m]) await tdb.db.sql.query('INSERT INTO rate_buckets (key_id, minute, requests) VALUES ($1, $2, 1)', [keyId, minute])
		expect(await store.sweep()).toBeGreaterThanOrEqual(2)
		expect((await rows(keyId)).map((r) => r.minute)).toEqual([m - 2, m - 1, m])
	})

	describe('while the database does not answer', () => {
		let proxy: TcpProxy
		let viaProxy: Db
		beforeAll(async () => {
			const url = new URL(tdb.url!)
			proxy = await startTcpProxy(Number(url.port || 5432), { targetHost: url.hostname })
			url.hostname = '127.0.0.1'
			url.port = String(proxy.port)
			viaProxy = await openDb(url.toString())
		})
		afterAll(async () => {
			await viaProxy?.sql.close()
			proxy?.stop()
		})

		/** Admits a throwaway key through `l` until it is counted in the database: `l` is sharing again. */
		async function untilShared(l: RateLimiter) {
			for (let i = 0; i < 100; i++) {
				const probe = key({ rpmLimit: 1_000 })
				await admit(l, probe)
				if ((await rows(probe.keyId)).length) return
				await Bun.sleep(100)
			}
			throw new Error('never counted in the database again')
		}

		for (const outage of ['cut', 'stall'] as const)
			it(`should count per instance with one warning while ${outage === 'cut' ? 'its connections are cut' : 'it is silent'}, and share again once it is back`, async () => {
				const { log, lines } = recording()
				const a = limiter(tdb.db)
				const b = limiter(viaProxy, { log, pg: { timeoutMs: 300, flushMs: 5 } })
				await untilShared(b)
				proxy[outage]()
				try {
					const alone = key({ rpmLimit: 2 })
					const started = Date.now()
					// Fail open: b counts on its own meanwhile, with the full limit, and nothing waits long.
					expect([await admit(b, alone), await admit(b, alone), await admit(b, alone)]).toEqual(['ok', 'ok', expect.stringMatching(/2 requests per minute/)])
					expect(Date.now() - started).toBeLessThan(2_000)
					// Tokens whose batch could not be written are counted in memory instead.
					const tokens = key({ tpmLimit: 10 })
					b.addTokens(tokens.keyId, 50)
					let refused = ''
					for (let i = 0; i < 50 && !refused; i++) refused = (await admit(b, tokens)) === 'ok' ? (await Bun.sleep(50), '') : 'yes'
					expect(refused).toBe('yes')
					expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual(['postgres unavailable: rate limits are per instance until it returns'])
				} finally {
					await proxy.restore()
				}
				await untilShared(b)
				expect(lines.map((l) => l.msg)).toContain('postgres answers again: rate limits are shared across instances')
				const again = key({ rpmLimit: 2 })
				expect([await admit(a, again), await admit(b, again), await admit(b, again)]).toEqual(['ok', 'ok', expect.stringMatching(/2 requests per minute/)])
			}, 30_000)
	})
})
