/**
 * The ledger: every charge passes through here. `reserve` takes an upper bound out of the account's balance and
 * into the key's `reserved` before the upstream call, atomically (row locks, account before key), so concurrent
 * requests can never overspend; `settle` turns the hold into the real cost and writes the usage row in the same
 * transaction; `release` gives the hold back. Each is one database round trip: the SQL functions sb_reserve and
 * sb_finish (drizzle/0001_ledger_functions.sql) hold the logic. Both are idempotent: the hold row, keyed by request id, is deleted
 * exactly once. Invariant: credits = balance + Σ usage cost + Σ open holds, per account.
 * @module
 */
import type { Db, SqlTx } from '../db/client'
import { GatewayError } from '../core/errors'
import { randomString } from '../lib/ids'
import type { UsageRecord } from './usage-record'

export type HoldOwner = { accountId: number; tokenId: number | null }

export type Hold = {
	/**
	 * The hold's key in ledger_holds: the request id, or the request id with a random suffix when another hold already
	 * has that key (the id comes from the client's `x-request-id` when given, and clients do reuse ids, even at once).
	 */
	readonly requestId: string
	/** Micro-USD reserved. */
	readonly amount: number
	/** Charges min(cost, what the hold and remaining headroom cover) and records usage; returns the charged amount. */
	settle(cost: number, usage: UsageRecord): Promise<number>
	/** Returns the hold; records usage (cost 0) when given. */
	release(usage?: UsageRecord): Promise<void>
	readonly done: boolean
}

export type Ledger = {
	/**
	 * Reserves up to `want` micro-USD, at least `min`. When the headroom (balance, key limit) is below `want` but at
	 * least `min`, reserves the headroom: the caller lowers the output cap to fit. Throws 402 below `min`.
	 */
	reserve(owner: HoldOwner, requestId: string, want: number, min: number): Promise<Hold>
	/**
	 * Releases holds past their expiry (their process died); returns how many. Released, not settled: the usage died
	 * with the process and so did the client's connection, so there is nothing true to charge, and charging the worst
	 * case would bill an answer nobody received. The cost of what the upstream did produce falls on the operator,
	 * bounded by the holds open at the crash. The row stays as 'expired' so a late settle (a stream that outlived the
	 * TTL) still charges, within the balance and the key's limit, without giving the hold back twice.
	 */
	sweep(): Promise<number>
}

export type LedgerOptions = { holdTtlSeconds: number; onUsage?: (u: UsageRecord) => void }

export function createLedger(db: Db, opts: LedgerOptions = { holdTtlSeconds: 900 }): Ledger {
	const { sql } = db

	async function lockHeadroom(tx: SqlTx, owner: HoldOwner) {
		const [acct] = await tx.query<{ balance: number; status: string }>('SELECT balance, status FROM accounts WHERE id = $1 FOR UPDATE', [owner.accountId])
		if (!acct) throw new GatewayError('authentication', 'account not found', { code: 'invalid_api_key' })
		let tokenRoom = Number.MAX_SAFE_INTEGER
		if (owner.tokenId !== null) {
			const [tok] = await tx.query<{ spend_limit: number | null; spent: number; reserved: number }>(
				'SELECT spend_limit, spent, reserved FROM api_tokens WHERE id = $1 FOR UPDATE',
				[owner.tokenId],
			)
			if (tok?.spend_limit != null) tokenRoom = tok.spend_limit - tok.spent - tok.reserved
		}
		return { balance: acct.balance, tokenRoom }
	}

	/** The usage row as sb_finish reads it (jsonb_to_record column names). */
	const usageJson = (u: UsageRecord) =>
		JSON.stringify({
			request_id: u.requestId,
			model: u.model,
			upstream_model: u.upstreamModel ?? null,
			endpoint: u.endpoint,
			channel_id: u.channelId ?? null,
			channel: u.channel ?? null,
			input_tokens: u.inputTokens,
			output_tokens: u.outputTokens,
			cached_tokens: u.cachedTokens,
			cache_write_tokens: u.cacheWriteTokens,
			reasoning_tokens: u.reasoningTokens,
			status: u.status,
			latency_ms: u.latencyMs,
			estimated: u.estimated,
			end_reason: u.endReason,
			stream: u.stream,
		})

	/** One round trip: settle (charge) or release a hold, with its usage row. -1 when already done. */
	const finish = async (owner: HoldOwner, requestId: string, cost: number, charge: boolean, usage?: UsageRecord) => {
		const [r] = await sql.query<{ charged: number }>('SELECT sb_finish($1, $2, $3, $4, $5, $6::jsonb) AS charged', [
			requestId,
			owner.accountId,
			owner.tokenId,
			cost,
			charge,
			usage ? usageJson(usage) : null,
		])
		return Number(r!.charged)
	}

	function makeHold(owner: HoldOwner, requestId: string, amount: number): Hold {
		let done = false
		let pending: Promise<unknown> | undefined
		const once = <T>(fn: () => Promise<T>): Promise<T> => {
			if (pending) return pending as Promise<T>
			done = true
			const p = fn()
			pending = p
			return p
		}
		return {
			requestId,
			amount,
			get done() {
				return done
			},
			settle: (cost, usage) =>
				once(async () => {
					const charged = await finish(owner, requestId, Math.max(0, Math.round(cost)), true, usage)
					if (charged >= 0) opts.onUsage?.({ ...usage, cost: charged })
					return Math.max(0, charged)
				}),
			release: (usage) =>
				once(async () => {
					const r = await finish(owner, requestId, 0, false, usage)
					if (usage && r >= 0) opts.onUsage?.({ ...usage, cost: 0 })
				}),
		}
	}

	return {
		async reserve(owner, requestId, want, min) {
			type Reserved = { o_taken: number | null; o_balance: number | null; o_token_room: number | null; o_found: boolean }
			const call = (key: string) =>
				sql.query<Reserved>('SELECT * FROM sb_reserve($1, $2, $3, $4, $5, $6)', [
					key,
					owner.accountId,
					owner.tokenId,
					Math.max(0, Math.round(want)),
					Math.max(0, Math.round(min)),
					opts.holdTtlSeconds,
				])
			// A key already held (a concurrent request with the same client id, or an expired hold kept for a late
			// settle) fails the insert and rolls the whole call back: try again under a key of our own.
			let key = requestId
			let rows: Reserved[]
			for (let attempt = 0; ; attempt++) {
				try {
					rows = await call(key)
					break
				} catch (e) {
					if ((e as { code?: unknown }).code !== '23505' || attempt >= 2) throw e
					key = `${requestId}~${randomString(8)}`
				}
			}
			const r = rows[0]
			if (!r?.o_found) throw new GatewayError('authentication', 'account not found', { code: 'invalid_api_key' })
			if (r.o_taken === null) {
				const room = r.o_token_room === null ? Number.MAX_SAFE_INTEGER : Number(r.o_token_room)
				const why = room < min && room <= Number(r.o_balance) ? 'API key spend limit reached' : 'account balance exhausted'
				throw new GatewayError('insufficient_quota', `${why}: this request needs at least $${(min / 1e6).toFixed(6)}`, { code: 'insufficient_quota' })
			}
			return makeHold(owner, key, Number(r.o_taken))
		},

		async sweep() {
			// Candidates first without locks, then each in its own transaction in the usual lock order
			// (account, key, hold) so the sweeper can never deadlock with a settle.
			const due = await sql.query<{ request_id: string; account_id: number; token_id: number | null }>(
				`SELECT request_id, account_id, token_id FROM ledger_holds WHERE state = 'open' AND expires_at < now() LIMIT 1000`,
			)
			let n = 0
			for (const d of due) {
				n += await sql.transaction(async (tx) => {
					await lockHeadroom(tx, { accountId: d.account_id, tokenId: d.token_id })
					const [h] = await tx.query<{ amount: number }>(
						`UPDATE ledger_holds SET state = 'expired' WHERE request_id = $1 AND state = 'open' AND expires_at < now() RETURNING amount`,
						[d.request_id],
					)
					if (!h) return 0
					await tx.query('UPDATE accounts SET balance = balance + $2 WHERE id = $1', [d.account_id, h.amount])
					if (d.token_id !== null) await tx.query('UPDATE api_tokens SET reserved = reserved - $2 WHERE id = $1', [d.token_id, h.amount])
					return 1
				})
			}
			return n
		},
	}
}
