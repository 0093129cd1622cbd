/**
 * The ledger invariant (issue 4), checked straight in the database, to the micro-dollar:
 * - per account: Σ credits = balance + Σ usage_logs.cost + Σ its leases' amounts
 * - per API key: spent = Σ its usage costs, reserved = Σ its leases' amounts
 * plus the limits it must respect: no balance below zero, no key past its spend limit.
 * Reusable by any test that has the database (a live `Db`, or one opened on a stopped server's data). Running
 * instances write their settlements every LEDGER_FLUSH_MS: pass their ledgers (in-process) to flush them first.
 * @module
 */
import { expect } from 'bun:test'
import type { Ledger } from '../../../src/billing/ledger'
import type { SqlTx } from '../../../src/db/client'

export type LedgerTotals = {
	accounts: Array<{ id: number; balance: number; credited: number; used: number; held: number }>
	keys: Array<{ id: number; account_id: number; spent: number; reserved: number; spend_limit: number | null; used: number; held: number }>
	/** Leases in the database (an instance's slice of an account's or key's headroom). */
	leases: number
	/** Micro-USD that requests in flight hold, as of each instance's last flush. */
	inUse: number
}

/** Reads every account's and key's totals in one consistent snapshot (one statement each, REPEATABLE READ not needed: the test is quiet). */
export async function ledgerTotals(sql: SqlTx, ...flush: Ledger[]): Promise<LedgerTotals> {
	for (const l of flush) await l.flush()
	const accounts = await sql.query<LedgerTotals['accounts'][number]>(
		`SELECT a.id, a.balance,
			COALESCE((SELECT SUM(amount) FROM credits c WHERE c.account_id = a.id), 0)::bigint AS credited,
			COALESCE((SELECT SUM(cost) FROM usage_logs u WHERE u.account_id = a.id), 0)::bigint AS used,
			COALESCE((SELECT SUM(amount) FROM ledger_leases h WHERE h.account_id = a.id), 0)::bigint AS held
		 FROM accounts a ORDER BY a.id`,
	)
	const keys = await sql.query<LedgerTotals['keys'][number]>(
		`SELECT t.id, t.account_id, t.spent, t.reserved, t.spend_limit,
			COALESCE((SELECT SUM(cost) FROM usage_logs u WHERE u.token_id = t.id), 0)::bigint AS used,
			COALESCE((SELECT SUM(amount) FROM ledger_leases h WHERE h.token_id = t.id), 0)::bigint AS held
		 FROM api_tokens t ORDER BY t.id`,
	)
	const [h] = await sql.query<{ n: number; in_use: number }>(`SELECT count(*)::bigint AS n, COALESCE(SUM(in_use), 0)::bigint AS in_use FROM ledger_leases`)
	return { accounts, keys, leases: h?.n ?? 0, inUse: h?.in_use ?? 0 }
}

/** Every broken rule, as readable lines (empty when the ledger is sound). */
export function violations(t: LedgerTotals): string[] {
	const out: string[] = []
	for (const a of t.accounts) {
		if (a.credited !== a.balance + a.used + a.held)
			out.push(`account ${a.id}: credits ${a.credited} ≠ balance ${a.balance} + usage ${a.used} + leases ${a.held} (off by ${a.credited - a.balance - a.used - a.held})`)
		if (a.balance < 0) out.push(`account ${a.id}: balance ${a.balance} below zero`)
	}
	for (const k of t.keys) {
		if (k.spent !== k.used) out.push(`key ${k.id}: spent ${k.spent} ≠ Σ usage ${k.used}`)
		if (k.reserved !== k.held) out.push(`key ${k.id}: reserved ${k.reserved} ≠ Σ leases ${k.held}`)
		if (k.spend_limit !== null && k.spent + k.reserved > k.spend_limit) out.push(`key ${k.id}: spent ${k.spent} + reserved ${k.reserved} past its limit ${k.spend_limit}`)
	}
	return out
}

/** Asserts the invariant (after flushing the given ledgers); returns the totals for further checks (e.g. what is in use). */
export async function expectLedgerInvariant(sql: SqlTx, ...flush: Ledger[]): Promise<LedgerTotals> {
	const t = await ledgerTotals(sql, ...flush)
	expect(violations(t)).toEqual([])
	return t
}
