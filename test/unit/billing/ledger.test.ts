import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createLedger, type Hold, type Ledger, type LedgerOptions } from '../../../src/billing/ledger'
import type { UsageRecord } from '../../../src/billing/usage-record'
import { GatewayError } from '../../../src/core/errors'
import type { Db, Sql } from '../../../src/db/client'
import { type Bus, memoryBus, redisBus } from '../../../src/lib/bus'
import { createTestDb, type TestDb } from '../../helpers/db'
import { redisPrefix } from '../../helpers/redis'

let t: TestDb
let ledger: Ledger
const ledgers: Ledger[] = []
let n = 0

/** A ledger on the test database; the timer is slow so the tests decide when to flush. */
const open = (o: Partial<LedgerOptions> = {}, db: Db = t.db) => {
	const l = createLedger(db, { ttlSeconds: 60, flushMs: 60_000, ...o })
	ledgers.push(l)
	return l
}

beforeAll(async () => {
	t = await createTestDb()
	ledger = open()
}, 120_000)
afterAll(async () => {
	for (const l of ledgers) await l.close().catch(() => {})
	await t.drop()
})

async function account(balance: number, spendLimit: number | null = null) {
	const [a] = await t.db.sql.query<{ id: number }>('INSERT INTO accounts (name, balance) VALUES ($1, $2) RETURNING id', ['a', balance])
	await t.db.sql.query('INSERT INTO credits (account_id, amount) VALUES ($1, $2)', [a!.id, balance])
	const [k] = await t.db.sql.query<{ id: number }>(
		`INSERT INTO api_tokens (account_id, name, key_hash, key_enc, key_hint, spend_limit) VALUES ($1, 'k', $2, 'x', 'x', $3) RETURNING id`,
		[a!.id, `h${++n}-${Math.random()}`, spendLimit],
	)
	return { accountId: a!.id, tokenId: k!.id }
}

const usage = (o: { accountId: number; tokenId: number }, requestId: string): UsageRecord => ({
	requestId,
	accountId: o.accountId,
	tokenId: o.tokenId,
	model: 'm',
	endpoint: '/test',
	inputTokens: 1,
	outputTokens: 1,
	cachedTokens: 0,
	cacheWriteTokens: 0,
	reasoningTokens: 0,
	status: 200,
	latencyMs: 1,
	estimated: false,
	endReason: 'ok',
	stream: false,
})

/**
 * After a flush: credits = balance + Σ usage cost + Σ leases; spent = Σ the key's usage cost; reserved = Σ its
 * leases. `available` is the balance a view shows (leased but unused money counts), `inUse` what requests hold.
 */
async function invariant(o: { accountId: number; tokenId: number }, ...flush: Ledger[]) {
	for (const l of flush.length ? flush : [ledger]) await l.flush()
	const [r] = await t.db.sql.query<{ credits: number; balance: number; costs: number; leased: number; inuse: number; spent: number; keycosts: number; reserved: number; keyleased: number }>(
		`SELECT (SELECT coalesce(sum(amount),0)::int8 FROM credits WHERE account_id = $1) AS credits,
		        (SELECT balance FROM accounts WHERE id = $1) AS balance,
		        (SELECT coalesce(sum(cost),0)::int8 FROM usage_logs WHERE account_id = $1) AS costs,
		        (SELECT coalesce(sum(amount),0)::int8 FROM ledger_leases WHERE account_id = $1) AS leased,
		        (SELECT coalesce(sum(in_use),0)::int8 FROM ledger_leases WHERE account_id = $1) AS inuse,
		        (SELECT spent FROM api_tokens WHERE id = $2) AS spent,
		        (SELECT reserved FROM api_tokens WHERE id = $2) AS reserved,
		        (SELECT coalesce(sum(amount),0)::int8 FROM ledger_leases WHERE token_id = $2) AS keyleased,
		        (SELECT coalesce(sum(cost),0)::int8 FROM usage_logs WHERE token_id = $2) AS keycosts`,
		[o.accountId, o.tokenId],
	)
	expect(r!.credits).toBe(r!.balance + r!.costs + r!.leased)
	expect(r!.spent).toBe(r!.keycosts)
	expect(r!.reserved).toBe(r!.keyleased)
	expect(r!.balance).toBeGreaterThanOrEqual(0)
	return { ...r!, available: r!.balance + r!.leased - r!.inuse }
}

const settled = (rs: PromiseSettledResult<Hold>[]) => rs.filter((r): r is PromiseFulfilledResult<Hold> => r.status === 'fulfilled').map((r) => r.value)

/** A Sql that counts statements and can be made to fail like a database that went away. */
function flaky(sql: Sql) {
	const s = { queries: 0, down: false }
	const fail = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
	const wrapped: Sql = {
		...sql,
		query: (text, params) => (s.queries++, s.down ? fail() : sql.query(text, params)),
		exec: (text) => (s.queries++, s.down ? fail() : sql.exec(text)),
		transaction: (fn) => sql.transaction(fn),
		close: async () => {},
	}
	return { s, db: { ...t.db, sql: wrapped } as Db }
}

/**
 * The test database with a hook: `during(fn)` runs `fn` the next time the ledger calls the database function `name`,
 * before that query goes out (what another request does while the ledger waits on the database).
 */
function gated(name: string) {
	let hook: (() => Promise<unknown>) | undefined
	const sql: Sql = {
		...t.db.sql,
		query: async (text, params) => {
			if (hook && text.includes(name)) {
				const f = hook
				hook = undefined
				await f()
			}
			return t.db.sql.query(text, params)
		},
	}
	return { db: { ...t.db, sql } as Db, during: (fn: () => Promise<unknown>) => (hook = fn) }
}

/**
 * The test database where the next call of the database function `name` is applied and its reply then lost, as when
 * the connection is cut after the commit: the ledger sees an error for what the database did.
 */
function replyLost(name: string) {
	let armed = false
	const sql: Sql = {
		...t.db.sql,
		query: async <T,>(text: string, params?: unknown[]) => {
			const r = await t.db.sql.query<T>(text, params)
			if (armed && text.includes(name)) {
				armed = false
				throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
			}
			return r
		},
	}
	return { db: { ...t.db, sql } as Db, arm: () => (armed = true) }
}

/** `n` requests one after another, each reserving 2,000 and settling 40. */
async function settleEach(l: Ledger, o: { accountId: number; tokenId: number }, prefix: string, n: number) {
	for (let i = 0; i < n; i++) {
		const h = await l.reserve(o, `${prefix}-${i}`, 2000, 100)
		await h.settle(40, usage(o, h.requestId))
	}
}

describe('ledger', () => {
	it('should never let concurrent reservations take a balance below zero', async () => {
		const o = await account(10_000)
		const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => ledger.reserve(o, `c1-${i}`, 1000, 1000)))
		const held = settled(results)
		expect(held).toHaveLength(10)
		for (const r of results) if (r.status === 'rejected') expect((r.reason as GatewayError).status).toBe(402)
		await Promise.all(held.map((h, i) => h.settle(900, usage(o, `c1-${i}`))))
		const s = await invariant(o)
		expect(s.available).toBe(1000)
		expect(s.costs).toBe(9000)
		expect(s.inuse).toBe(0)
	})

	it('should never let concurrent reservations take a key past its spend limit', async () => {
		const o = await account(1_000_000, 5_000)
		const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => ledger.reserve(o, `c2-${i}`, 1000, 1000)))
		expect(settled(results)).toHaveLength(5)
		const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
		expect((rejected.reason as GatewayError).message).toMatch(/spend limit/)
		for (const h of settled(results)) await h.release()
		await invariant(o)
	})

	it('should reserve less than wanted when only that much headroom is left', async () => {
		const o = await account(700)
		const h = await ledger.reserve(o, 'c3', 1000, 100)
		expect(h.amount).toBe(700)
		await h.release()
		expect((await invariant(o)).available).toBe(700)
	})

	it('should settle and release idempotently', async () => {
		const o = await account(5000)
		const h = await ledger.reserve(o, 'c4', 1000, 1000)
		const [a, b] = await Promise.all([h.settle(300, usage(o, h.requestId)), h.settle(300, usage(o, h.requestId))])
		expect(a).toBe(300)
		expect(b).toBe(300)
		await h.release()
		const s = await invariant(o)
		expect(s.available).toBe(4700)
		expect(s.costs).toBe(300)
		const [rows] = await t.db.sql.query<{ n: number }>('SELECT count(*)::int8 AS n FROM usage_logs WHERE account_id = $1', [o.accountId])
		expect(rows!.n).toBe(1)
	})

	it('should cap a settlement that exceeds the hold at what the balance allows', async () => {
		const o = await account(1500)
		const h = await ledger.reserve(o, 'c5', 1000, 1000)
		expect(await h.settle(99_999, usage(o, h.requestId))).toBe(1500)
		expect((await invariant(o)).available).toBe(0)
	})

	it('should charge a settlement past its hold in full while other reservations take the lease meanwhile', async () => {
		const l = open()
		const o = await account(5000)
		const h = await l.reserve(o, 'over-1', 1000, 1000)
		// The lease holds a little more than this hold; the settlement needs more than both, so it takes from the
		// database, and a reservation made during that take must not eat the hold's own money.
		const settling = h.settle(2500, usage(o, 'over-1'))
		const other = await l.reserve(o, 'over-2', 1000, 1000)
		expect(await settling).toBe(2500)
		expect(other.amount).toBe(1000)
		await other.settle(1000, usage(o, 'over-2'))
		const v = await invariant(o, l)
		expect(v.costs).toBe(3500)
		expect(v.available).toBe(1500)
	})

	it('should serve reservations from memory and write settlements in batches', async () => {
		const { s, db } = flaky(t.db.sql)
		const l = open({ flushRows: 10_000 }, db)
		const o = await account(10_000_000)
		await settleEach(l, o, 'b', 200)
		// A few takes while the lease grows (each slice at least twice the last), then one flush for 200 requests.
		expect(s.queries).toBeLessThanOrEqual(4)
		await l.flush()
		expect(s.queries).toBeLessThanOrEqual(5)
		const v = await invariant(o, l)
		expect(v.costs).toBe(200 * 40)
		expect(v.available).toBe(10_000_000 - 200 * 40)
	})

	it('should hold at once only what a confirmed lease has free, and leave the rest to reserve', async () => {
		const { s, db } = flaky(t.db.sql)
		const l = open({}, db)
		const o = await account(1_000_000)
		// No lease yet: nothing to hold from without the database.
		expect(l.reserveNow(o, 'now-0', 1000)).toBeUndefined()
		const first = await l.reserve(o, 'now-1', 1000, 100)
		const queries = s.queries
		const lease = l.leases()[0]!
		const free = lease.amount - lease.inUse
		const h = l.reserveNow(o, 'now-2', 1000)!
		expect(h.amount).toBe(1000)
		expect(s.queries).toBe(queries)
		// More than the lease has free now: undefined, not a smaller hold and not a take.
		expect(l.reserveNow(o, 'now-3', free)).toBeUndefined()
		expect(s.queries).toBe(queries)
		expect(await h.settle(40, usage(o, 'now-2'))).toBe(40)
		await first.settle(60, usage(o, 'now-1'))
		// Once a flush failed, the lease is not confirmed: reserve waits for the database, and so must this.
		s.down = true
		await expect(l.flush()).rejects.toThrow(/ECONNREFUSED/)
		expect(l.reserveNow(o, 'now-4', 1000)).toBeUndefined()
		s.down = false
		const v = await invariant(o, l)
		expect(v.costs).toBe(100)
		await l.close()
		expect(l.reserveNow(o, 'now-5', 1000)).toBeUndefined()
	})

	it('should write a batch as soon as enough usage rows wait, without waiting for the timer', async () => {
		const { s, db } = flaky(t.db.sql)
		const l = open({ flushRows: 50 }, db)
		const o = await account(10_000_000)
		await settleEach(l, o, 'rows', 200)
		// The timer would not fire for a minute: the rows reach the database in batches of about 50.
		const written = async () => Number((await t.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_logs WHERE request_id LIKE $1', ['rows-%']))[0]!.n)
		for (let i = 0; i < 100 && (await written()) < 150; i++) await Bun.sleep(20)
		expect(await written()).toBeGreaterThanOrEqual(150)
		expect(s.queries).toBeLessThanOrEqual(4 + 200 / 50 + 2)
		await l.flush()
		expect(await written()).toBe(200)
		const v = await invariant(o, l)
		expect(v.costs).toBe(200 * 40)
	})

	it('should space batches that fill up quickly by the flush gap', async () => {
		const l = open({ flushRows: 10, flushGapMs: 400 })
		const o = await account(10_000_000)
		const written = async () => Number((await t.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_logs WHERE request_id LIKE $1', ['gap-%']))[0]!.n)
		// The first flush cannot begin before this, so the second cannot begin before this and the gap (seeing the first
		// batch written, later than its flush began, is no such bound: CI saw the second 266 ms after that).
		const before = Date.now()
		await settleEach(l, o, 'gap-a', 10)
		// The first full batch goes at once (no flush before it).
		for (let i = 0; i < 50 && (await written()) < 10; i++) await Bun.sleep(10)
		const first = Date.now()
		expect(await written()).toBe(10)
		await settleEach(l, o, 'gap-b', 10)
		await Bun.sleep(100)
		// Full again, but the gap since the last flush has not passed: it waits (the timer is a minute away).
		if (Date.now() - first < 300) expect(await written()).toBe(10)
		for (let i = 0; i < 100 && (await written()) < 20; i++) await Bun.sleep(20)
		expect(await written()).toBe(20)
		expect(Date.now() - before).toBeGreaterThanOrEqual(400)
	})

	it('should record the requests that end as client_abort once connections are cut for shutdown as shutdown', async () => {
		const l = open()
		const o = await account(50_000)
		const row = (id: string, endReason: string) => ({ ...usage(o, id), endReason })
		await (await l.reserve(o, 'cut-before', 100, 100)).settle(5, row('cut-before', 'client_abort'))
		l.cutForShutdown()
		await (await l.reserve(o, 'cut-settled', 100, 100)).settle(5, row('cut-settled', 'client_abort'))
		await (await l.reserve(o, 'cut-released', 100, 100)).release(row('cut-released', 'client_abort'))
		await (await l.reserve(o, 'cut-done', 100, 100)).settle(5, row('cut-done', 'ok'))
		await l.close()
		const rows = await t.db.sql.query<{ request_id: string; end_reason: string }>(`SELECT request_id, end_reason FROM usage_logs WHERE request_id LIKE 'cut-%' ORDER BY request_id`)
		expect(rows.map((r) => [r.request_id, r.end_reason])).toEqual([
			['cut-before', 'client_abort'],
			['cut-done', 'ok'],
			['cut-released', 'shutdown'],
			['cut-settled', 'shutdown'],
		])
	})

	it('should give every lease back on close', async () => {
		const l = open()
		const o = await account(50_000)
		const h = await l.reserve(o, 'close-1', 1000, 1000)
		await h.settle(10, usage(o, h.requestId))
		await l.close()
		const v = await invariant(o, l)
		expect(v.leased).toBe(0)
		expect(v.balance).toBe(50_000 - 10)
		await expect(l.reserve(o, 'close-2', 1, 1)).rejects.toThrow(/shutting down/)
	})

	it('should give an idle lease back by itself', async () => {
		const l = open({ flushMs: 20, idleMs: 50 })
		const o = await account(50_000)
		const h = await l.reserve(o, 'idle-1', 1000, 1000)
		await h.settle(10, usage(o, h.requestId))
		for (let i = 0; i < 100 && l.leases().length; i++) await Bun.sleep(20)
		expect(l.leases()).toEqual([])
		const v = await invariant(o, l)
		expect(v.leased).toBe(0)
		expect(v.balance).toBe(50_000 - 10)
	})

	it('should let a second instance reclaim headroom the first one leased and does not use', async () => {
		const bus = memoryBus()
		const a = open({ bus })
		const b = open({ bus })
		const o = await account(100_000)
		// a leases more than it needs (its first slice covers many reservations) …
		const h = await a.reserve(o, 'r-a', 30_000, 30_000)
		expect(a.leases()[0]!.amount).toBeGreaterThan(30_000)
		// … b needs what only a's unused lease holds; b asks for it back and gets it.
		const hb = await b.reserve(o, 'r-b', 70_000, 70_000)
		expect(hb.amount).toBe(70_000)
		await expect(b.reserve(o, 'r-b2', 1, 1)).rejects.toThrow(/balance exhausted/)
		await h.settle(30_000, usage(o, 'r-a'))
		await hb.settle(70_000, usage(o, 'r-b'))
		const v = await invariant(o, a, b)
		expect(v.costs).toBe(100_000)
		expect(v.balance).toBe(0)
	})

	it.skipIf(!process.env.REDIS_URL)('should reclaim across instances through Redis (REDIS_URL)', async () => {
		const bus = () => redisBus(process.env.REDIS_URL!, () => {}, { prefix: redisPrefix(import.meta.path) })
		const buses: Bus[] = [await bus(), await bus()]
		try {
			const [a, b] = buses.map((bus) => open({ bus }))
			for (const bus of buses) await bus.ready()
			const o = await account(100_000)
			const h = await a!.reserve(o, 'rr-a', 30_000, 30_000)
			const hb = await b!.reserve(o, 'rr-b', 70_000, 70_000)
			expect(hb.amount).toBe(70_000)
			await h.release()
			await hb.release()
			expect((await invariant(o, a!, b!)).available).toBe(100_000)
		} finally {
			for (const bus of buses) await bus.close()
		}
	})

	it('should write what a request settled during a reclaim before giving its lease back', async () => {
		// The request settles while the reclaim's flush is on its way to the database (the flush has already taken
		// its snapshot): the lease then has a charge the database has not seen, and nothing in use.
		const g = gated('sb_lease_flush')
		const l = open({}, g.db)
		const o = await account(100_000)
		const h = await l.reserve(o, 'rc-1', 1000, 1000)
		g.during(() => h.settle(300, usage(o, 'rc-1')))
		await l.reclaim({ accountId: o.accountId })
		const v = await invariant(o, l)
		expect(v.costs).toBe(300)
		expect(v.spent).toBe(300)
		expect(v.balance).toBe(100_000 - 300)
		expect(v.leased).toBe(0)
	})

	it('should not charge from money a lease is giving back, when a settlement past its hold lands meanwhile', async () => {
		// The key's limit leaves nothing beyond what the lease holds: once the unused part goes back, the request
		// can be charged at most what it reserved.
		const g = gated('sb_lease_return')
		const l = open({}, g.db)
		const o = await account(100_000, 2_000)
		const h = await l.reserve(o, 'gb-1', 600, 600)
		expect(l.leases()[0]!.amount).toBeGreaterThan(600)
		let charged = 0
		g.during(async () => {
			charged = await h.settle(1_500, usage(o, 'gb-1'))
		})
		await l.reclaim({ accountId: o.accountId, tokenId: o.tokenId })
		const v = await invariant(o, l)
		expect(charged).toBe(600)
		expect(v.spent).toBe(600)
		expect(v.costs).toBe(600)
		expect(v.leased).toBe(0)
		expect(v.balance).toBe(100_000 - 600)
	})

	it('should write what is in use after a hold was released while the lease was growing', async () => {
		const g = gated('sb_lease_take')
		const l = open({}, g.db)
		const o = await account(1_000_000)
		const a = await l.reserve(o, 'gr-1', 1000, 1000)
		await l.flush()
		// A reservation larger than the lease's slice makes it grow; the first request gives its hold back during that
		// take (no usage row, no charge: only what is in use changes).
		g.during(() => a.release())
		const b = await l.reserve(o, 'gr-2', 200_000, 200_000)
		await b.release()
		const v = await invariant(o, l)
		expect(v.inuse).toBe(0)
	})

	it('should give a key lease back when the key is reclaimed (its limit changed)', async () => {
		const o = await account(100_000, 50_000)
		const h = await ledger.reserve(o, 'k-1', 1000, 1000)
		expect(ledger.leases().find((x) => x.tokenId === o.tokenId)!.amount).toBeGreaterThan(1000)
		await ledger.reclaim({ accountId: o.accountId, tokenId: o.tokenId })
		let v = await invariant(o)
		expect(v.keyleased).toBe(1000) // only what the request in flight holds
		await h.settle(5, usage(o, 'k-1'))
		await ledger.reclaim({ accountId: o.accountId, tokenId: o.tokenId })
		await Bun.sleep(10)
		v = await invariant(o)
		expect(v.available).toBe(100_000 - 5)
	})

	it('should release the lease of an instance that died once it expires, and still bill its late settlement', async () => {
		const dead = open()
		const o = await account(2000)
		const h = await dead.reserve(o, 'late', 1000, 1000)
		await t.db.sql.query(`UPDATE ledger_leases SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [o.accountId])
		expect(await ledger.sweep()).toBeGreaterThanOrEqual(1)
		expect((await invariant(o)).balance).toBe(2000)
		// The process was only slow: its settlement still charges, from the balance now.
		expect(await h.settle(500, usage(o, h.requestId))).toBe(500)
		const s = await invariant(o, dead)
		expect(s.balance).toBe(1500)
		expect(s.reserved).toBe(0)
		expect(s.costs).toBe(500)
	})

	it('should stop serving from leases once a flush fails, keep the usage, and write it when the database is back', async () => {
		const { s, db } = flaky(t.db.sql)
		const l = open({}, db)
		const o = await account(1_000_000)
		const h = await l.reserve(o, 'down-1', 1000, 100)
		s.down = true
		await h.settle(77, usage(o, 'down-1'))
		await expect(l.flush()).rejects.toThrow(/ECONNREFUSED/)
		// The lease has money, but the database no longer confirms it: no more answers until it is back.
		await expect(l.reserve(o, 'down-2', 1000, 100)).rejects.toThrow(/ECONNREFUSED/)
		s.down = false
		const h2 = await l.reserve(o, 'down-3', 1000, 100)
		await h2.settle(23, usage(o, 'down-3'))
		const v = await invariant(o, l)
		expect(v.costs).toBe(100)
		const rows = await t.db.sql.query<{ request_id: string; cost: number }>('SELECT request_id, cost FROM usage_logs WHERE account_id = $1 ORDER BY id', [o.accountId])
		expect(rows).toEqual([
			{ request_id: 'down-1', cost: 77 },
			{ request_id: 'down-3', cost: 23 },
		])
	})

	it('should size a lease for the reservations queued behind its first take (a burst takes twice, not once per doubling)', async () => {
		let takes = 0
		const sql: Sql = { ...t.db.sql, query: (text, params) => (text.includes('sb_lease_take') && takes++, t.db.sql.query(text, params)) }
		const l = open({}, { ...t.db, sql } as Db)
		const o = await account(100_000_000)
		const holds = await Promise.all(Array.from({ length: 500 }, (_, i) => l.reserve(o, `burst-${i}`, 1000, 1000)))
		// Before: 16, 32, 64… reservations per take, so 500 waited on ~5 takes in a row.
		expect(takes).toBeLessThanOrEqual(2)
		for (const h of holds) await h.release()
		expect((await invariant(o, l)).inuse).toBe(0)
	})

	it('should write usage rows exactly as recorded, whatever characters their text holds', async () => {
		const o = await account(1_000_000)
		const odd = ['quote " and backslash \\ end', 'comma, {brace} NULL', 'naïve 模型 🚀', '', 'NULL', ' spaced ']
		for (const [i, text] of odd.entries()) {
			const h = await ledger.reserve(o, `odd-${i}`, 1000, 100)
			const u = { ...usage(o, `odd-${i}`), model: text, upstreamModel: i % 2 ? undefined : `${text}-up`, channel: text, channelId: i, endReason: text, estimated: i % 2 === 0, stream: i % 3 === 0, latencyMs: 1000 + i }
			await h.settle(10 + i, u)
		}
		await ledger.flush()
		const rows = await t.db.sql.query<Record<string, unknown>>(
			'SELECT request_id, model, upstream_model, channel, channel_id, end_reason, estimated, stream, latency_ms, cost FROM usage_logs WHERE account_id = $1 ORDER BY request_id',
			[o.accountId],
		)
		expect(rows).toEqual(
			odd.map((text, i) => ({
				request_id: `odd-${i}`,
				model: text,
				upstream_model: i % 2 ? null : `${text}-up`,
				channel: text,
				channel_id: i,
				end_reason: text,
				estimated: i % 2 === 0,
				stream: i % 3 === 0,
				latency_ms: 1000 + i,
				cost: 10 + i,
			})),
		)
	})

	it('should apply a flush once when its reply was lost after the commit, with what settled meanwhile', async () => {
		const g = replyLost('sb_lease_flush')
		const l = open({}, g.db)
		const o = await account(1_000_000)
		const h = await l.reserve(o, 'lr-1', 1000, 100)
		await h.settle(300, usage(o, 'lr-1'))
		g.arm()
		await expect(l.flush()).rejects.toThrow(/ECONNRESET/)
		// Another request settles before the next attempt: the batch sent again must not carry it, nor be applied twice.
		const h2 = await l.reserve(o, 'lr-2', 1000, 100)
		await h2.settle(200, usage(o, 'lr-2'))
		const v = await invariant(o, l)
		expect(v.costs).toBe(500)
		expect(v.spent).toBe(500)
		const rows = await t.db.sql.query<{ request_id: string }>('SELECT request_id FROM usage_logs WHERE account_id = $1 ORDER BY id', [o.accountId])
		expect(rows.map((r) => r.request_id)).toEqual(['lr-1', 'lr-2'])
		await l.close()
		expect((await invariant(o, l)).available).toBe(1_000_000 - 500)
	})

	it('should find a swept lease again when the flush that found it was applied and its reply lost', async () => {
		const g = replyLost('sb_lease_flush')
		const l = open({}, g.db)
		const o = await account(2000)
		const h = await l.reserve(o, 'ls-1', 1000, 1000)
		await t.db.sql.query(`UPDATE ledger_leases SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [o.accountId])
		expect(await ledger.sweep()).toBeGreaterThanOrEqual(1)
		await h.settle(400, usage(o, 'ls-1'))
		g.arm()
		await expect(l.flush()).rejects.toThrow(/ECONNRESET/)
		await l.flush()
		// The answer sent again says the lease is gone, so its money (back in the balance) is not served a second time
		// from memory: 1,600 is left, and 800 + 1,600 do not fit.
		const h2 = await l.reserve(o, 'ls-2', 800, 800)
		const err = await l.reserve(o, 'ls-3', 1600, 1600).catch((e) => e)
		expect((err as GatewayError).status).toBe(402)
		await h2.release()
		const v = await invariant(o, l)
		expect(v.costs).toBe(400)
		expect(v.available).toBe(1600)
	})

	it('should not count money a lease gave back when the reply of that return was lost', async () => {
		const g = replyLost('sb_lease_return')
		const l = open({}, g.db)
		const o = await account(100_000, 2_000)
		const h = await l.reserve(o, 'lg-1', 600, 600)
		expect(l.leases()[0]!.amount).toBeGreaterThan(600)
		g.arm()
		await expect(l.reclaim({ accountId: o.accountId, tokenId: o.tokenId })).rejects.toThrow(/ECONNRESET/)
		// The rest went back: a settlement past the hold may take only what the hold reserved.
		expect(await h.settle(1_500, usage(o, 'lg-1'))).toBe(600)
		await l.reclaim({ accountId: o.accountId, tokenId: o.tokenId })
		const v = await invariant(o, l)
		expect(v.costs).toBe(600)
		expect(v.spent).toBe(600)
		expect(v.leased).toBe(0)
		expect(v.balance).toBe(100_000 - 600)
	})

	it('should go on serving after the first take of a lease was applied and its reply lost, and give it all back', async () => {
		const g = replyLost('sb_lease_take')
		const l = open({}, g.db)
		const o = await account(100_000)
		g.arm()
		await expect(l.reserve(o, 'lt-1', 1000, 1000)).rejects.toThrow(/ECONNRESET/)
		const h = await l.reserve(o, 'lt-2', 1000, 1000)
		await h.settle(250, usage(o, 'lt-2'))
		await l.reclaim({ accountId: o.accountId })
		const v = await invariant(o, l)
		expect(v.costs).toBe(250)
		expect(v.leased).toBe(0)
		expect(v.balance).toBe(100_000 - 250)
	})
})
