/**
 * `debitAccount` (src/modules/admin/accounts/service.ts) against ledgers on one database, as instances are: a debit
 * may take the unused money of leases once their instances give it back, never what their requests hold, and never
 * takes the balance below zero, whatever the instances reserve meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createLedger, type Ledger } from '../../../src/billing/ledger'
import type { UsageRecord } from '../../../src/billing/usage-record'
import { GatewayError } from '../../../src/core/errors'
import { type Bus, memoryBus } from '../../../src/lib/bus'
import { debitAccount } from '../../../src/modules/admin/accounts/service'
import { createTestDb, type TestDb } from '../../helpers/db'
import { expectLedgerInvariant } from '../../integration/resilience/invariant'

let t: TestDb
const ledgers: Ledger[] = []
let n = 0

const open = (bus?: Bus) => {
	const l = createLedger(t.db, { ttlSeconds: 60, flushMs: 60_000, bus })
	ledgers.push(l)
	return l
}

beforeAll(async () => {
	t = await createTestDb()
}, 120_000)
afterAll(async () => {
	for (const l of ledgers) await l.close().catch(() => {})
	await t.drop()
})

async function account(balance: number) {
	const [a] = await t.db.sql.query<{ id: number }>('INSERT INTO accounts (name, balance) VALUES ($1, $2) RETURNING id', ['a', balance])
	await t.db.sql.query('INSERT INTO credits (account_id, amount) VALUES ($1, $2)', [a!.id, balance])
	const [k] = await t.db.sql.query<{ id: number }>(`INSERT INTO api_tokens (account_id, name, key_hash, key_enc, key_hint) VALUES ($1, 'k', $2, 'x', 'x') RETURNING id`, [
		a!.id,
		`d${++n}-${Math.random()}`,
	])
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

async function balances(id: number) {
	const [r] = await t.db.sql.query<{ balance: number; leased: number; credits: number }>(
		`SELECT balance, (SELECT coalesce(sum(amount), 0)::int8 FROM ledger_leases WHERE account_id = $1) AS leased,
			(SELECT coalesce(sum(amount), 0)::int8 FROM credits WHERE account_id = $1) AS credits FROM accounts WHERE id = $1`,
		[id],
	)
	return r!
}

describe('debitAccount', () => {
	it("should take this instance's own unused lease money at once", async () => {
		const l = open()
		const o = await account(100_000)
		const h = await l.reserve(o, 'own-1', 1000, 1000)
		await h.settle(400, usage(o, 'own-1'))
		expect((await balances(o.accountId)).balance).toBeLessThan(99_600)
		expect(await debitAccount(t.db, l, o.accountId, -99_600, undefined, 0)).toBe(0)
		expect(await balances(o.accountId)).toMatchObject({ balance: 0, leased: 0 })
		await expectLedgerInvariant(t.db.sql, l)
	})

	it('should answer 409 after the wait, taking nothing, when the instance holding the lease does not give it back', async () => {
		// `away` hears no reclaim (an instance without Redis, or one that stopped): its lease stays until it expires.
		const here = open(memoryBus())
		const away = open()
		const o = await account(100_000)
		const h = await away.reserve(o, 'away-1', 1000, 1000)
		await h.settle(400, usage(o, 'away-1'))
		await away.flush()
		const before = await balances(o.accountId)
		const started = Date.now()
		const e = await debitAccount(t.db, here, o.accountId, -99_600, undefined, 150).catch((x) => x)
		expect(Date.now() - started).toBeGreaterThanOrEqual(150)
		expect(e).toBeInstanceOf(GatewayError)
		expect(e).toMatchObject({ status: 409, code: 'balance_leased', param: 'amount' })
		expect(e.message).toContain(`$${(before.leased / 1e6).toString()} of the balance is leased by another instance`)
		expect(await balances(o.accountId)).toEqual(before)
		// What the column holds can still be taken.
		expect(await debitAccount(t.db, here, o.accountId, -before.balance, undefined, 0)).toBe(before.leased)
		await expectLedgerInvariant(t.db.sql, here, away)
	})

	it('should never take the balance below zero nor what requests hold, while both instances reserve and settle', async () => {
		const bus = memoryBus()
		const [a, b] = [open(bus), open(bus)]
		const o = await account(2_000_000)
		let stop = false
		let charged = 0
		const traffic = async (l: Ledger, tag: string) => {
			for (let i = 0; !stop; i++) {
				const h = await l.reserve(o, `${tag}-${i}`, 5_000, 1_000).catch(() => undefined)
				if (!h) {
					await Bun.sleep(2)
					continue
				}
				await Bun.sleep(1)
				// Every request is charged in full from what it holds: no debit took it.
				const cost = Math.min(h.amount, 300)
				expect(await h.settle(cost, usage(o, h.requestId))).toBe(cost)
				charged += cost
			}
		}
		const running = [traffic(a, 'a'), traffic(b, 'b')]
		// Both instances hold leases before the first debit.
		for (let i = 0; i < 500 && !(a.leases().length && b.leases().length && charged); i++) await Bun.sleep(2)
		let debited = 0
		for (let i = 0; i < 20; i++) {
			await Bun.sleep(3)
			const status = await debitAccount(t.db, a, o.accountId, -50_000, undefined, 300).then(
				() => 200,
				(e: GatewayError) => e.status,
			)
			if (status === 200) debited += 50_000
			// Refused: past what is free (400), or the instances re-leased what they gave back before the debit took it (409).
			else expect([400, 409]).toContain(status)
			const { balance } = await balances(o.accountId)
			expect(balance).toBeGreaterThanOrEqual(0)
		}
		stop = true
		await Promise.all(running)
		const totals = await expectLedgerInvariant(t.db.sql, a, b)
		const row = totals.accounts.find((x) => x.id === o.accountId)!
		expect(totals.inUse).toBe(0)
		expect(row.used).toBe(charged)
		expect(row.credited).toBe(2_000_000 - debited)
		expect(debited).toBeGreaterThan(0)
	})
})
