/**
 * OpenAI batches as tasks (kind `batch`). The whole file's upper bound was charged when the upstream accepted the
 * batch (modules/batches); when the batch ends (completed, failed, expired or cancelled: the Batch object's terminal
 * statuses, platform.openai.com/docs/api-reference/batch/object) its output file is read, each line's
 * `response.body.usage` priced at the batch prices recorded at creation (batch-usage.ts), and the rest of the charge
 * refunded (or what the usage exceeds it by taken, as far as the balance and key limit go) in settlement rows carrying
 * the lines' tokens: once,
 * by the same compare-and-set on the task row that failures use (refund.ts). A failed, expired or cancelled batch
 * thus pays only for the lines that completed. The output and error files are recorded to the batch's account.
 * Learned when the client retrieves the batch, or by the background poller.
 * @module
 */
import type { Price } from '../billing/pricing'
import { type Usage, emptyUsage } from '../core/ir'
import { tasks } from '../db/schema'
import { authHeaders, channelUrl } from '../passthrough/upstream'
import { fetchUpstream } from '../relay/upstream-fetch'
import type { Channel } from '../routing/catalog'
import type { Services } from '../services'
import { recordResponses } from '../modules/responses/ownership'
import { type ModelUsage, outputUsage, totalCost } from './batch-usage'
import { credit, failTask, lockOwnerRoom, settledCost } from './refund'
import { type TaskRow, advance, getTask, isTerminal } from './store'
import { pollJson } from './upstream'
import { jsonLines } from '../lib/json-lines'

type Obj = Record<string, unknown>

/** What a batch task keeps in `result`. */
export type BatchRecord = {
	/** The upstream's Batch object as last seen. */
	batch: Obj
	endpoint: string
	/** Batch prices per model, fixed at creation. */
	prices: Record<string, Price>
	/** custom_id → model, when the file names more than one model (else every line is `task.model`). */
	models?: Record<string, string>
}

const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled'])
const FETCH_TIMEOUTS = { firstByteMs: 30_000, idleMs: 30_000 }
/** A batch open this long is failed and refunded: OpenAI ends a batch within its 24h window (as `expired`). */
export const BATCH_MAX_AGE_MS = 72 * 3600_000

/** The text of a file on the channel; undefined when it cannot be read now. */
export async function fileText(ch: Channel, fileId: string, signal: AbortSignal): Promise<string | undefined> {
	const { res } = await fetchUpstream(channelUrl(ch, `/files/${encodeURIComponent(fileId)}/content`), { method: 'GET', headers: authHeaders(ch) }, FETCH_TIMEOUTS, signal)
	const text = await res.text().catch(() => undefined)
	return res.ok ? text : undefined
}

/** A settlement row's end reason: how the batch ended (its lines that completed are billed either way). */
const END_REASON: Record<string, string> = { completed: 'ok', cancelled: 'cancelled' }

/** How a batch ended: the task's status, the settlement rows' end reason and endpoint, and a failed task's error. */
export type BatchEnd = { status: 'completed' | 'failed'; reason: string; endpoint: string; error: string | null }

/** An OpenAI Batch object's end: only `completed` completes the task. */
const openaiEnd = (batch: Obj): BatchEnd => ({
	status: batch.status === 'completed' ? 'completed' : 'failed',
	reason: END_REASON[String(batch.status)] ?? 'error',
	endpoint: '/v1/batches',
	error: batch.status === 'completed' ? null : `batch ${String(batch.status)}`,
})

/**
 * Ends the task once: moves it from open to completed (or failed: the batch did not complete), keeps `batch`, and
 * refunds the charge above what the lines cost. Usage above the charge (a line's input beyond its bound: a continued
 * conversation, a tool's results) is taken as far as the balance and the key's limit go, as a background response's
 * is (modules/responses/background.ts). The difference is recorded in settlement rows (`…:settle`), one per model,
 * with that model's tokens, as a background response's settlement row carries its tokens: the charge's row (under the
 * batch's first model) was written before anything ran, with none. Each other model's row costs what its lines did,
 * and the first model's the rest of the difference, so the rows of a model add up to its lines' cost. A batch that
 * completed no line gets its charge back in one `…:refund` row, as a failed task. True when this call ended it.
 * `end` says how the batch ended (OpenAI's batches: `openaiEnd`; Anthropic's message batches: tasks/message-batch.ts).
 */
export async function settleBatch(svc: Services, task: TaskRow, batch: Obj, byModel: Map<string, ModelUsage>, end: BatchEnd = openaiEnd(batch)): Promise<boolean> {
	await svc.ledger.flush()
	const status = end.status
	const result = { ...(task.result as BatchRecord), batch }
	const actual = totalCost(byModel)
	return svc.db.sql.transaction(async (tx) => {
		const owner = { accountId: task.accountId, tokenId: task.tokenId }
		// The ledger's lock order: account, key, then the task row.
		const room = await lockOwnerRoom(tx, owner)
		// Locked open row: a concurrent settle waits here, then finds the task ended and does nothing.
		const [row] = await tx.query<{ cost: number; request_id: string }>(`SELECT cost, request_id FROM tasks WHERE id = $1 AND status IN ('queued', 'in_progress') FOR UPDATE`, [task.id])
		if (!row) return false
		const held = Number(row.cost)
		const charged = settledCost(held, actual, room)
		await tx.query(`UPDATE tasks SET status = $2, progress = 100, result = $3::jsonb, cost = $4, refunded = $5, error = $6, updated_at = now() WHERE id = $1`, [
			task.id,
			status,
			JSON.stringify(result),
			charged,
			charged < held,
			status === 'failed' ? end.error : null,
		])
		if (!byModel.size) {
			await credit(tx, owner, held - charged, row.request_id, { model: task.model, endpoint: `task:${task.kind}`, channelId: task.channelId })
			return true
		}
		const delta = charged - held
		if (delta !== 0) {
			await tx.query('UPDATE accounts SET balance = balance - $2 WHERE id = $1', [owner.accountId, delta])
			if (owner.tokenId !== null) await tx.query('UPDATE api_tokens SET spent = GREATEST(0, spent + $2) WHERE id = $1', [owner.tokenId, delta])
		}
		const channel = task.channelId === null ? null : (svc.catalog.channel(task.channelId)?.name ?? null)
		const latency = Date.now() - task.createdAt.getTime()
		for (const r of settlementRows(task.model, byModel, delta)) {
			const u = r.usage
			await tx.query(
				`INSERT INTO usage_logs (request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel, input_tokens, output_tokens,
				   cached_tokens, cache_write_tokens, reasoning_tokens, cost, status, latency_ms, estimated, end_reason, stream)
				 VALUES ($1, $2, $3, $4, $4, $15, $5, $6, $7, $8, $9, $10, $11, $12, 200, $13, false, $14, false)`,
				[`${row.request_id}:settle`, owner.accountId, owner.tokenId, r.model, task.channelId, channel, u.input, u.output, u.cacheRead, u.cacheWrite, u.reasoning, r.cost, latency, end.reason, end.endpoint],
			)
		}
		return true
	})
}

/**
 * The settlement rows of a batch whose charge (made under `firstModel`) changes by `delta`, one per model with its
 * tokens: each other model's row costs what its lines cost, the first model's the rest of `delta`.
 * @example settlementRows('a', new Map([['b', { usage, cost: 30 }]]), -50) // [{ model: 'a', cost: -80, … }, { model: 'b', cost: 30, … }]
 */
export function settlementRows(firstModel: string, byModel: Map<string, ModelUsage>, delta: number): Array<{ model: string; usage: Usage; cost: number }> {
	let others = 0
	const rest: Array<{ model: string; usage: Usage; cost: number }> = []
	for (const [model, m] of byModel) {
		if (model === firstModel) continue
		rest.push({ model, usage: m.usage, cost: m.cost })
		others += m.cost
	}
	return [{ model: firstModel, usage: byModel.get(firstModel)?.usage ?? emptyUsage(), cost: delta - others }, ...rest]
}

/**
 * Records the responses a `/v1/responses` batch made (its output lines' `response.body.id`) to the batch's account on
 * the channel, as the POST records its answers (modules/responses/ownership.ts): so the account, and only it, may
 * retrieve them, list their input items and continue them by `previous_response_id`.
 */
async function recordBatchResponses(svc: Services, task: TaskRow, ch: Channel, output: string) {
	const ids: string[] = []
	for (const { value } of jsonLines(output)) {
		const id = (value as { response?: { body?: { id?: unknown } } } | null)?.response?.body?.id
		if (typeof id === 'string' && id) ids.push(id)
	}
	await recordResponses(svc, task.accountId, ch.id, ids)
}

/** Records a batch's output and error files to its account, so it may read them (and only it). */
async function recordOutputFiles(svc: Services, task: TaskRow, ch: Channel, batch: Obj, signal: AbortSignal) {
	for (const id of [batch.output_file_id, batch.error_file_id]) {
		if (typeof id !== 'string' || !id) continue
		const file = ((await pollJson(ch, `/files/${encodeURIComponent(id)}`, signal).catch(() => undefined)) as Obj | undefined) ?? { id, object: 'file', purpose: 'batch_output' }
		await svc.db.orm
			.insert(tasks)
			.values({ id: `file_${task.id}_${id}`.slice(0, 200), kind: 'file', accountId: task.accountId, tokenId: task.tokenId, model: '', channelId: ch.id, upstreamId: id, status: 'completed', progress: 100, requestId: task.requestId, cost: 0, result: { file } })
			.onConflictDoNothing()
	}
}

/**
 * Where a refresh of either batch kind (this one, message-batch.ts) starts: a task already ended, or past its age (then
 * failed and refunded), or with no channel left to ask, is answered as it stands (`seen`: the last batch object kept);
 * otherwise the channel and upstream id to ask.
 */
export async function batchToAsk(svc: Services, task: TaskRow): Promise<{ ch: Channel; upstreamId: string; seen: Obj } | { task: TaskRow; batch: Obj }> {
	const seen = (task.result as BatchRecord | null)?.batch ?? {}
	if (isTerminal(task.status)) return { task, batch: seen }
	if (Date.now() - task.createdAt.getTime() > BATCH_MAX_AGE_MS) {
		await failTask(svc, task, 'batch timed out: the upstream did not finish it')
		return { task: (await getTask(svc.db, task.id)) ?? task, batch: seen }
	}
	const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
	if (!ch || !task.upstreamId) return { task, batch: seen }
	return { ch, upstreamId: task.upstreamId, seen }
}

/**
 * Asks the upstream for the batch and applies it: open → the last seen object is kept; ended → settled (once).
 * Returns the task and the Batch object to show (the upstream's, or the last one seen when it cannot be asked).
 */
export async function refreshBatch(svc: Services, task: TaskRow, signal: AbortSignal = new AbortController().signal): Promise<{ task: TaskRow; batch: Obj }> {
	const ask = await batchToAsk(svc, task)
	if (!('ch' in ask)) return ask
	const { ch, upstreamId, seen } = ask
	const batch = (await pollJson(ch, `/batches/${encodeURIComponent(upstreamId)}`, signal).catch(() => undefined)) as Obj | undefined
	if (!batch || typeof batch.status !== 'string') return { task, batch: seen }
	if (TERMINAL.has(batch.status)) {
		let byModel = new Map<string, ModelUsage>()
		if (typeof batch.output_file_id === 'string' && batch.output_file_id) {
			const text = await fileText(ch, batch.output_file_id, signal).catch(() => undefined)
			// Not readable now: settle on a later poll rather than refund work that was done.
			if (text === undefined) return { task, batch }
			byModel = outputUsage(text, task.result as BatchRecord, task.model)
			if ((task.result as BatchRecord).endpoint === '/v1/responses') await recordBatchResponses(svc, task, ch, text)
		}
		// Recorded before the batch shows as ended (a repeat records nothing), so whoever sees it ended can read them.
		await recordOutputFiles(svc, task, ch, batch, signal)
		await settleBatch(svc, task, batch, byModel)
		return { task: (await getTask(svc.db, task.id)) ?? task, batch }
	}
	const moved = await advance(svc.db, task.id, { status: batch.status === 'validating' ? 'queued' : 'in_progress', result: { ...(task.result as BatchRecord), batch } })
	return { task: moved ?? task, batch }
}
