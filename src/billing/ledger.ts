/**
 * The ledger: every charge passes through here. `reserve` takes an upper bound out of the account's balance and
 * into the key's `reserved` before the upstream call, atomically (row locks, account before key), so concurrent
 * requests can never overspend; `settle` turns the hold into the real cost and writes the usage row in the same
 * transaction; `release` gives the hold back. Both are idempotent: the hold row, keyed by request id, is deleted
 * exactly once. Invariant: credits = balance + Σ usage cost + Σ open holds, per account.
 * @module
 */
import type { Db, SqlTx } from '../db/client'
import { GatewayError } from '../core/errors'
import type { UsageRecord } from './usage-record'

export type HoldOwner = { accountId: number; tokenId: number | null }

export type Hold = {
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
	/** Releases holds past their expiry (their process died); returns how many. */
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

	async function writeUsage(tx: SqlTx, u: UsageRecord, cost: number) {
		await tx.query(
			`INSERT INTO usage_logs (request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel,
				input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost, status, latency_ms, estimated, end_reason, stream)
			 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19)`,
			[u.requestId, u.accountId, u.tokenId, u.model, u.upstreamModel ?? null, u.endpoint, u.channelId ?? null, u.channel ?? null,
				u.inputTokens, u.outputTokens, u.cachedTokens, u.cacheWriteTokens, u.reasoningTokens, cost, u.status, u.latencyMs, u.estimated, u.endReason, u.stream],
		)
		if (u.tokenId !== null) await tx.query('UPDATE api_tokens SET last_used_at = now() WHERE id = $1', [u.tokenId])
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
					const charged = await sql.transaction(async (tx) => {
						const room = await lockHeadroom(tx, owner)
						const [h] = await tx.query<{ amount: number; state: string }>('DELETE FROM ledger_holds WHERE request_id = $1 RETURNING amount, state', [requestId])
						if (!h) return -1 // settled or released already: idempotent no-op
						const held = h.state === 'open' ? h.amount : 0
						// Never take the balance below zero or the key past its limit, even when the estimate was short.
						const charge = Math.max(0, Math.min(cost, held + Math.max(0, room.balance), held + Math.max(0, room.tokenRoom)))
						await tx.query('UPDATE accounts SET balance = balance + $2 - $3 WHERE id = $1', [owner.accountId, held, charge])
						if (owner.tokenId !== null)
							await tx.query('UPDATE api_tokens SET reserved = reserved - $2, spent = spent + $3 WHERE id = $1', [owner.tokenId, held, charge])
						await writeUsage(tx, usage, charge)
						return charge
					})
					if (charged >= 0) opts.onUsage?.({ ...usage, cost: charged })
					return Math.max(0, charged)
				}),
			release: (usage) =>
				once(async () => {
					await sql.transaction(async (tx) => {
						await lockHeadroom(tx, owner)
						const [h] = await tx.query<{ amount: number; state: string }>('DELETE FROM ledger_holds WHERE request_id = $1 RETURNING amount, state', [requestId])
						if (!h) return
						const held = h.state === 'open' ? h.amount : 0
						await tx.query('UPDATE accounts SET balance = balance + $2 WHERE id = $1', [owner.accountId, held])
						if (owner.tokenId !== null) await tx.query('UPDATE api_tokens SET reserved = reserved - $2 WHERE id = $1', [owner.tokenId, held])
						if (usage) await writeUsage(tx, usage, 0)
					})
					if (usage) opts.onUsage?.({ ...usage, cost: 0 })
				}),
		}
	}

	return {
		async reserve(owner, requestId, want, min) {
			const amount = await sql.transaction(async (tx) => {
				const room = await lockHeadroom(tx, owner)
				const headroom = Math.min(room.balance, room.tokenRoom)
				if (headroom < min) {
					const why = room.tokenRoom < min && room.tokenRoom <= room.balance ? 'API key spend limit reached' : 'account balance exhausted'
					throw new GatewayError('insufficient_quota', `${why}: this request needs at least $${(min / 1e6).toFixed(6)}`, { code: 'insufficient_quota' })
				}
				const take = Math.min(want, headroom)
				await tx.query('UPDATE accounts SET balance = balance - $2 WHERE id = $1', [owner.accountId, take])
				if (owner.tokenId !== null) await tx.query('UPDATE api_tokens SET reserved = reserved + $2 WHERE id = $1', [owner.tokenId, take])
				await tx.query(
					`INSERT INTO ledger_holds (request_id, account_id, token_id, amount, expires_at) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
					[requestId, owner.accountId, owner.tokenId, take, opts.holdTtlSeconds],
				)
				return take
			})
			return makeHold(owner, requestId, amount)
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
