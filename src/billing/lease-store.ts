/**
 * The ledger's database side: one round trip per call to the SQL functions of drizzle/0002_leases.sql (the flush as
 * redefined in 0003_flush_once.sql), which hold
 * the locking and the arithmetic. src/billing/ledger.ts decides when to call them.
 * @module
 */
import type { Sql } from '../db/client'
import type { KeyState } from '../auth/key-refusal'
import { USAGE_COLUMNS } from './usage-columns'

export type TakeResult =
	| { kind: 'taken'; amount: number }
	| { kind: 'short'; balance: number; tokenRoom: number | null; others: number }
	| { kind: 'lost' }
	| { kind: 'no_account' }

export type LeaseFlush = { id: string; accountId: number; tokenId: number | null; charge: number; inUse: number; used: boolean }

/** A batch's usage rows, one PostgreSQL array literal per column (UsageColumns.literals). */
export type UsageLiterals = string[]

/**
 * sb_lease_flush with the usage columns as arrays ($5 onwards). The leases go as text cast in SQL: postgres.js alone
 * would encode a string bound to a jsonb parameter as a JSON string (only Drizzle's set-up of the client prevents it).
 */
const FLUSH = `SELECT sb_lease_flush($1, $2, $3::text::jsonb, $4, ${Array.from({ length: USAGE_COLUMNS }, (_, i) => `$${i + 5}`).join(', ')}) AS id`

export type LeaseStore = {
	take(a: { id: string; existing: boolean; accountId: number; tokenId: number | null; need: number; min: number; extra: number; inUse: number }): Promise<TakeResult>
	/**
	 * Writes charges and usage rows as batch `seq` of `instance`; returns the ids of leases that were swept meanwhile.
	 * The same batch sent again (its reply was lost) is applied once and answered the same.
	 */
	flush(instance: string, seq: number, leases: LeaseFlush[], usage: UsageLiterals): Promise<string[]>
	/** Gives back all but `keep`; -1 when the lease was swept. */
	give(id: string, accountId: number, tokenId: number | null, keep: number): Promise<number>
	sweep(): Promise<number>
	/**
	 * The owner's key and account as stored (a key of another account, or none, is null), for the error that says why
	 * `take` found no owner: a key without an id stands for its account alone.
	 */
	ownerState(accountId: number, tokenId: number | null): Promise<KeyState>
}

export function createLeaseStore(sql: Sql, ttlSeconds: number): LeaseStore {
	const ttl = Math.max(1, Math.ceil(ttlSeconds))
	return {
		async take(a) {
			type Row = { o_taken: number | null; o_balance: number | null; o_token_room: number | null; o_found: boolean; o_lost: boolean; o_others: number }
			const [r] = await sql.query<Row>('SELECT * FROM sb_lease_take($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
				a.id,
				a.existing,
				a.accountId,
				a.tokenId,
				Math.max(0, Math.round(a.need)),
				Math.max(0, Math.round(a.min)),
				Math.max(0, Math.round(a.extra)),
				a.inUse,
				ttl,
			])
			if (!r?.o_found) return { kind: 'no_account' }
			if (r.o_lost) return { kind: 'lost' }
			if (r.o_taken === null) return { kind: 'short', balance: Number(r.o_balance), tokenRoom: r.o_token_room === null ? null : Number(r.o_token_room), others: Number(r.o_others) }
			return { kind: 'taken', amount: Number(r.o_taken) }
		},

		async flush(instance, seq, leases, usage) {
			const params = [instance, seq, JSON.stringify(leases.map((l) => ({ id: l.id, account_id: l.accountId, token_id: l.tokenId, charge: l.charge, in_use: l.inUse, used: l.used }))), ttl, ...usage]
			const rows = await sql.query<{ id: string }>(FLUSH, params)
			return rows.map((r) => r.id).filter(Boolean)
		},

		async give(id, accountId, tokenId, keep) {
			const [r] = await sql.query<{ given: number }>('SELECT sb_lease_return($1, $2, $3, $4) AS given', [id, accountId, tokenId, keep])
			return Number(r!.given)
		},

		async sweep() {
			const [r] = await sql.query<{ n: number }>('SELECT sb_lease_sweep() AS n')
			return Number(r?.n ?? 0)
		},

		async ownerState(accountId, tokenId) {
			type Row = { status: string; account_status: string; expires_ms: number | null }
			const [r] =
				tokenId === null
					? await sql.query<Row>(`SELECT 'active' AS status, status AS account_status, NULL::float8 AS expires_ms FROM accounts WHERE id = $1`, [accountId])
					: await sql.query<Row>(
							`SELECT t.status, a.status AS account_status, (EXTRACT(EPOCH FROM t.expires_at) * 1000)::float8 AS expires_ms
							 FROM api_tokens t JOIN accounts a ON a.id = t.account_id WHERE t.id = $1 AND t.account_id = $2`,
							[tokenId, accountId],
						)
			return r ? { status: r.status, accountStatus: r.account_status, expiresAt: r.expires_ms === null ? null : Number(r.expires_ms) } : null
		},
	}
}
