/**
 * Failing a task and giving its charge back, exactly once. One transaction takes the locks in the ledger's order
 * (account, key, then the task row) and moves the task from an open status to `failed` by compare-and-set; only the
 * transaction whose update matched refunds. Overlapping pollers, client polls and several instances therefore refund
 * a failure once (QuantumNous/new-api#2050, PR #6074). The refund is a negative usage row next to the charge, so the
 * ledger invariant (credits = balance + Σ usage cost + Σ leases) holds and the history shows both.
 * @module
 */
import type { SqlTx } from '../db/client'
import type { Services } from '../services'
import type { TaskRow } from './store'

export type RefundOwner = { accountId: number; tokenId: number | null }

export async function lockOwner(tx: SqlTx, o: RefundOwner) {
	await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [o.accountId])
	if (o.tokenId !== null) await tx.query('SELECT id FROM api_tokens WHERE id = $1 FOR UPDATE', [o.tokenId])
}

/**
 * Locks the owner as `lockOwner` does and returns what more it may still be charged: the lesser of the balance and the
 * key's room under its spend limit (the room leased to instances is not free: it is held out of both).
 */
export async function lockOwnerRoom(tx: SqlTx, o: RefundOwner): Promise<number> {
	const [account] = await tx.query<{ balance: number }>('SELECT balance FROM accounts WHERE id = $1 FOR UPDATE', [o.accountId])
	const [key] = o.tokenId === null ? [] : await tx.query<{ room: number | null }>('SELECT spend_limit - spent - reserved AS room FROM api_tokens WHERE id = $1 FOR UPDATE', [o.tokenId])
	return Math.max(0, Math.min(Number(account?.balance ?? 0), key?.room == null ? Number.POSITIVE_INFINITY : Number(key.room)))
}

/**
 * What a task that held `held` is charged for usage worth `actual`: all of it when it is less (the rest given back), and
 * beyond the hold only as far as `room` goes, as the ledger's settle() does.
 * @example settledCost(100, 150, 20) === 120; settledCost(100, 60, 0) === 60
 */
export const settledCost = (held: number, actual: number, room: number): number => (actual > held ? held + Math.min(actual - held, room) : actual)

/** Credits `amount` back and writes the negative usage row, copied from the charge's row (`requestId`). */
export async function credit(tx: SqlTx, o: RefundOwner, amount: number, requestId: string, fallback: { model: string; endpoint: string; channelId: number | null }) {
	if (amount <= 0) return
	await tx.query('UPDATE accounts SET balance = balance + $2 WHERE id = $1', [o.accountId, amount])
	if (o.tokenId !== null) await tx.query('UPDATE api_tokens SET spent = GREATEST(0, spent - $2) WHERE id = $1', [o.tokenId, amount])
	const copied = await tx.query(
		`INSERT INTO usage_logs (request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel, cost, status, latency_ms, estimated, end_reason, stream)
		 SELECT request_id || ':refund', account_id, token_id, model, upstream_model, endpoint, channel_id, channel, -$2::bigint, status, 0, false, 'refund', false
		 FROM usage_logs WHERE request_id = $1 AND cost > 0 ORDER BY id LIMIT 1 RETURNING id`,
		[requestId, amount],
	)
	if (copied.length) return
	await tx.query(
		`INSERT INTO usage_logs (request_id, account_id, token_id, model, endpoint, channel_id, cost, status, end_reason)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, 200, 'refund')`,
		[`${requestId}:refund`, o.accountId, o.tokenId, fallback.model, fallback.endpoint, fallback.channelId, -amount],
	)
}

/**
 * Moves an open task to `failed` and refunds its charge, once. Returns true when this call made the transition
 * (false: the task was already completed or failed).
 */
export async function failTask(svc: Services, task: Pick<TaskRow, 'id' | 'accountId' | 'tokenId' | 'kind' | 'model' | 'channelId'>, error: string): Promise<boolean> {
	const owner = { accountId: task.accountId, tokenId: task.tokenId }
	// The charge may still wait in the ledger's batch: written first, the refund finds its row and its spend.
	await svc.ledger.flush()
	const done = await svc.db.sql.transaction(async (tx) => {
		await lockOwner(tx, owner)
		const [row] = await tx.query<{ cost: number; request_id: string }>(
			`UPDATE tasks SET status = 'failed', error = $2, refunded = (cost > 0), updated_at = now()
			 WHERE id = $1 AND status IN ('queued', 'in_progress') RETURNING cost, request_id`,
			[task.id, error.slice(0, 2000)],
		)
		if (!row) return false
		await credit(tx, owner, Number(row.cost), row.request_id, { model: task.model, endpoint: `task:${task.kind}`, channelId: task.channelId })
		return true
	})
	if (done) svc.log.info('task failed; charge refunded', { task: task.id, kind: task.kind, error })
	return done
}

/** Refunds a settled charge that never became a task (recording it failed). */
export async function refundCharge(svc: Services, owner: RefundOwner, amount: number, requestId: string, what: { model: string; endpoint: string; channelId: number | null }) {
	await svc.ledger.flush()
	await svc.db.sql.transaction(async (tx) => {
		await lockOwner(tx, owner)
		await credit(tx, owner, amount, requestId, what)
	})
}
