import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createLedger, type Ledger } from '../../../src/billing/ledger'
import type { UsageRecord } from '../../../src/billing/usage-record'
import { GatewayError } from '../../../src/core/errors'
import { createTestDb, type TestDb } from '../../helpers/db'

let t: TestDb
let ledger: Ledger
let n = 0

beforeAll(async () => {
	t = await createTestDb()
	ledger = createLedger(t.db, { holdTtlSeconds: 900 })
}, 120_000)
afterAll(() => t.drop())

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

/** credits = balance + Σ usage cost + Σ open holds; spent = Σ usage cost of the key. */
async function invariant(o: { accountId: number; tokenId: number }) {
	const [r] = await t.db.sql.query<{ credits: number; balance: number; costs: number; holds: number; spent: number; keycosts: number; reserved: number }>(
		`SELECT (SELECT coalesce(sum(amount),0)::int8 FROM credits WHERE account_id = $1) AS credits,
		        (SELECT balance FROM accounts WHERE id = $1) AS balance,
		        (SELECT coalesce(sum(cost),0)::int8 FROM usage_logs WHERE account_id = $1) AS costs,
		        (SELECT coalesce(sum(amount),0)::int8 FROM ledger_holds WHERE account_id = $1 AND state = 'open') AS holds,
		        (SELECT spent FROM api_tokens WHERE id = $2) AS spent,
		        (SELECT reserved FROM api_tokens WHERE id = $2) AS reserved,
		        (SELECT coalesce(sum(cost),0)::int8 FROM usage_logs WHERE token_id = $2) AS keycosts`,
		[o.accountId, o.tokenId],
	)
	expect(r!.credits).toBe(r!.balance + r!.costs + r!.holds)
	expect(r!.spent).toBe(r!.keycosts)
	return r!
}

describe('ledger', () => {
	it('should never let concurrent reservations take a balance below zero', async () => {
		const o = await account(10_000)
		const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => ledger.reserve(o, `c1-${o.accountId}-${i}`, 1000, 1000)))
		const held = results.filter((r) => r.status === 'fulfilled')
		expect(held).toHaveLength(10)
		for (const r of results) if (r.status === 'rejected') expect((r.reason as GatewayError).status).toBe(402)
		await Promise.all(held.map((r, i) => (r as PromiseFulfilledResult<Awaited<ReturnType<Ledger['reserve']>>>).value.settle(900, usage(o, `c1-${o.accountId}-${i}`))))
		const s = await invariant(o)
		expect(s.balance).toBe(1000)
		expect(s.costs).toBe(9000)
	})

	it('should never let concurrent reservations take a key past its spend limit', async () => {
		const o = await account(1_000_000, 5_000)
		const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => ledger.reserve(o, `c2-${o.accountId}-${i}`, 1000, 1000)))
		expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5)
		const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
		expect((rejected.reason as GatewayError).message).toMatch(/spend limit/)
	})

	it('should reserve less than wanted when only that much headroom is left', async () => {
		const o = await account(700)
		const h = await ledger.reserve(o, `c3-${o.accountId}`, 1000, 100)
		expect(h.amount).toBe(700)
		await h.release()
		await invariant(o)
	})

	it('should settle and release idempotently', async () => {
		const o = await account(5000)
		const h = await ledger.reserve(o, `c4-${o.accountId}`, 1000, 1000)
		const [a, b] = await Promise.all([h.settle(300, usage(o, h.requestId)), h.settle(300, usage(o, h.requestId))])
		expect(a).toBe(300)
		expect(b).toBe(300)
		await h.release()
		const s = await invariant(o)
		expect(s.balance).toBe(4700)
		expect(s.costs).toBe(300)
	})

	it('should cap a settlement that exceeds the hold at what the balance allows', async () => {
		const o = await account(1500)
		const h = await ledger.reserve(o, `c5-${o.accountId}`, 1000, 1000)
		expect(await h.settle(99_999, usage(o, h.requestId))).toBe(1500)
		const s = await invariant(o)
		expect(s.balance).toBe(0)
	})

	it('should release expired holds and still charge a late settlement without going negative', async () => {
		const o = await account(2000)
		const h = await ledger.reserve(o, `c6-${o.accountId}`, 1000, 1000)
		await t.db.sql.query(`UPDATE ledger_holds SET expires_at = now() - interval '1 second' WHERE request_id = $1`, [h.requestId])
		expect(await ledger.sweep()).toBeGreaterThanOrEqual(1)
		expect((await invariant(o)).balance).toBe(2000)
		expect(await h.settle(500, usage(o, h.requestId))).toBe(500)
		const s = await invariant(o)
		expect(s.balance).toBe(1500)
		expect(s.reserved).toBe(0)
	})
})
