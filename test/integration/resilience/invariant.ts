/**
 * The ledger invariant (issue 4), checked straight in the database, to the micro-dollar:
 * - per account: Σ credits = balance + Σ usage_logs.cost + Σ open holds
 * - per API key: spent = Σ its usage costs, reserved = Σ its open holds
 * plus the limits it must respect: no balance below zero, no key past its spend limit.
 * Reusable by any test that has the database (a live `Db`, or one opened on a stopped server's data).
 * @module
 */
import { expect } from 'bun:test'
import type { SqlTx } from '../../../src/db/client'

export type LedgerTotals = {
	accounts: Array<{ id: number; balance: number; credited: number; used: number; held: number }>
	keys: Array<{ id: number; account_id: number; spent: number; reserved: number; spend_limit: number | null; used: number; held: number }>
	openHolds: number
}

/** Reads every account's and key's totals in one consistent snapshot (one statement each, REPEATABLE READ not needed: the test is quiet). */
export async function ledgerTotals(sql: SqlTx): Promise<LedgerTotals> {
	const accounts = await sql.query<LedgerTotals['accounts'][number]>(
		`SELECT a.id, a.balance,
			COALESCE((SELECT SUM(amount) FROM credits c WHERE c.account_id = a.id), 0)::bigint AS credited,
			COALESCE((SELECT SUM(cost) FROM usage_logs u WHERE u.account_id = a.id), 0)::bigint AS used,
			COALESCE((SELECT SUM(amount) FROM ledger_holds h WHERE h.account_id = a.id AND h.state = 'open'), 0)::bigint AS held
		 FROM accounts a ORDER BY a.id`,
	)
	const keys = await sql.query<LedgerTotals['keys'][number]>(
		`SELECT t.id, t.account_id, t.spent, t.reserved, t.spend_limit,
			COALESCE((SELECT SUM(cost) FROM usage_logs u WHERE u.token_id = t.id), 0)::bigint AS used,
			COALESCE((SELECT SUM(amount) FROM ledger_holds h WHERE h.token_id = t.id AND h.state = 'open'), 0)::bigint AS held
		 FROM api_tokens t ORDER BY t.id`,
	)
	const [h] = await sql.query<{ n: number }>(`SELECT count(*)::bigint AS n FROM ledger_holds WHERE state = 'open'`)
	return { accounts, keys, openHolds: h?.n ?? 0 }
}

/** Every broken rule, as readable lines (empty when the ledger is sound). */
export function violations(t: LedgerTotals): string[] {
	const out: string[] = []
	for (const a of t.accounts) {
		if (a.credited !== a.balance + a.used + a.held)
			out.push(`account ${a.id}: credits ${a.credited} ≠ balance ${a.balance} + usage ${a.used} + open holds ${a.held} (off by ${a.credited - a.balance - a.used - a.held})`)
		if (a.balance < 0) out.push(`account ${a.id}: balance ${a.balance} below zero`)
	}
	for (const k of t.keys) {
		if (k.spent !== k.used) out.push(`key ${k.id}: spent ${k.spent} ≠ Σ usage ${k.used}`)
		if (k.reserved !== k.held) out.push(`key ${k.id}: reserved ${k.reserved} ≠ Σ open holds ${k.held}`)
		if (k.spend_limit !== null && k.spent + k.reserved > k.spend_limit) out.push(`key ${k.id}: spent ${k.spent} + reserved ${k.reserved} past its limit ${k.spend_limit}`)
	}
	return out
}

/** Asserts the invariant; returns the totals for further checks (e.g. how many holds are open). */
export async function expectLedgerInvariant(sql: SqlTx): Promise<LedgerTotals> {
	const t = await ledgerTotals(sql)
	expect(violations(t)).toEqual([])
	return t
}
