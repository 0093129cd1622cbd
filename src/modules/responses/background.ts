/**
 * Billing of background responses (`background: true`, OpenAI channels only). OpenAI answers such a POST at once
 * with the response `queued` and no usage, and runs it afterwards; the client polls `GET /v1/responses/{id}`
 * (https://platform.openai.com/docs/guides/background). Settled like any answer, the POST would bill the input
 * estimate and no output, and what the model produced later would never be charged.
 *
 * So the POST charges its whole reservation (input estimate plus the output cap: what the hold was sized for) with a
 * usage row ending `background`, and the response becomes a task row (`tasks`, kind `response`, the response id as
 * its upstream id). When the gateway learns the response's end — the client retrieves (a streamed retrieve at its
 * terminal event too) or cancels it, or this module's poller asks OpenAI for responses nobody polls — the real cost
 * is settled once: one transaction moves the task from an open status to `completed` or `failed` by compare-and-set,
 * gives back what the reservation held beyond the cost (or takes what the usage exceeded, as far as the balance goes)
 * and writes a usage row with the response's tokens and the difference as its cost. So the rows of a background
 * response add up to its real cost and tokens, and overlapping retrieves, polls and instances settle it once. A
 * response cancelled or failed without usage gives the whole charge back (end reason `refund`).
 *
 * A background stream (`stream: true` too) that runs to its end is billed as any stream; one that ends before its
 * terminal event (the client left, the connection was cut) leaves the response running upstream, and is treated as
 * a POST answered `queued`.
 * @module
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import { GatewayError } from '../../core/errors'
import { type Usage, emptyUsage } from '../../core/ir'
import { tasks } from '../../db/schema'
import { tokenCost } from '../../billing/pricing'
import { usageRecord } from '../../billing/usage-record'
import { randomString } from '../../lib/ids'
import { openaiResponses } from '../../protocols/openai-responses'
import { chatAdapterFor } from '../../providers/registry'
import type { Budget, CallInfo } from '../../relay/budget'
import { countOutputText } from '../../relay/output-count'
import type { StreamBilling } from '../../relay/stream-relay'
import { credentialHooks } from '../../passthrough/upstream'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel, ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { lockOwnerRoom, refundCharge, settledCost } from '../../tasks/refund'
import { appendPath } from '../../providers/append-path'
import { type CompletionWindow, windowPrice } from './window-price'

const KIND = 'response'
const OPEN = ['queued', 'in_progress']
/** Response statuses after which nothing changes (https://platform.openai.com/docs/api-reference/responses/object). */
const TERMINAL = new Set(['completed', 'incomplete', 'failed', 'cancelled'])

type Obj = Record<string, unknown>
/** What settlement needs from the POST, kept on the task row (`result`). */
type Terms = { price: ModelInfo; inputEstimate: number; upstreamModel: string; channel: string; endpoint: string }

/** Whether a non-streamed answer is a background response still running upstream. */
export const isRunningBackground = (body: Obj, answer: Obj): boolean => body.background === true && OPEN.includes(String(answer.status))

/**
 * Charges the reservation of a background POST and opens its task, to be settled at the model's price (at a
 * `window`'s discount: window-price.ts). Returns what was charged. When the task cannot be recorded, the charge goes
 * back at once (the response would never be settled).
 */
export async function chargeBackground(info: CallInfo, budget: Budget, ch: Channel, upstreamModel: string, answer: Obj, window?: CompletionWindow): Promise<number> {
	const { svc, token } = info
	const record = usageRecord(info, { channel: ch, upstreamModel, status: 200, endReason: 'background' })
	const charged = await budget.hold.settle(budget.hold.amount, record)
	// The reservation was sized at Standard prices, so it covers a discounted window's cost; the settlement takes that.
	const price = window ? windowPrice(budget.price, window) : budget.price
	const terms: Terms = { price, inputEstimate: budget.countInput(), upstreamModel, channel: ch.name, endpoint: info.endpoint }
	try {
		// The charge is written before the task exists, as a task submit's is (tasks/submit.ts): another instance may
		// settle the response as soon as it can see it, and must find the charge there to give back.
		await svc.ledger.flush()
		await svc.db.orm
			.insert(tasks)
			.values({
				id: `response_${randomString(24)}`,
				kind: KIND,
				accountId: token.accountId,
				tokenId: token.id,
				model: info.model,
				channelId: ch.id,
				upstreamId: String(answer.id),
				requestId: info.requestId,
				cost: charged,
				status: String(answer.status),
				result: terms as unknown as Obj,
			})
	} catch (e) {
		svc.log.error('background response not recorded; its charge is refunded', { request_id: info.requestId, error: String(e) })
		await refundCharge(svc, { accountId: token.accountId, tokenId: token.id }, charged, info.requestId, {
			model: info.model,
			endpoint: info.endpoint,
			channelId: ch.id,
		})
	}
	return charged
}

/**
 * The end of a background response's stream before its terminal event: the response runs on upstream, so its
 * reservation is charged and settled when it ends, as for a POST answered `queued`. Never rejects (a stream's
 * settlement), and takes the stream off the open-streams gauge as `settleStream` does.
 */
export async function chargeBackgroundStream(b: StreamBilling, id: string): Promise<void> {
	b.info.svc.metrics.openStreams.dec()
	try {
		await chargeBackground(b.info, b.budget, b.channel, b.upstreamModel, { id, status: 'in_progress' })
	} catch (e) {
		b.info.svc.log.error('background charge failed', { request_id: b.info.requestId, error: String(e) })
	}
}

type TaskRow = typeof tasks.$inferSelect

/** The usage a finished response is billed for: as reported, else counted (input from the POST's estimate). */
function billedUsage(answer: Obj, terms: Terms): { usage: Usage; estimated: boolean } | undefined {
	const reported = openaiResponses.usageOf(answer)
	if (reported) return { usage: reported, estimated: false }
	// Cancelled or failed with nothing reported: nothing to bill.
	if (answer.status === 'cancelled' || answer.status === 'failed') return undefined
	let output = 0
	try {
		output = countOutputText(openaiResponses.decodeResponse(answer))
	} catch {
		// unreadable output: the input alone
	}
	return { usage: { ...emptyUsage(), input: terms.inputEstimate, output }, estimated: true }
}

const END_REASON: Record<string, string> = { completed: 'ok', incomplete: 'ok', failed: 'error', cancelled: 'cancelled' }

/**
 * Settles the background response `answer` (a Response object OpenAI returned for it) if it is over and still open
 * here; returns whether this call settled it. Any caller may call it with any answer: one that is not a background
 * response of this channel, or not finished, changes nothing.
 */
export async function settleBackground(svc: Services, channelId: number, answer: unknown): Promise<boolean> {
	if (!answer || typeof answer !== 'object') return false
	const a = answer as Obj
	if (typeof a.id !== 'string' || !TERMINAL.has(String(a.status))) return false
	const [task] = await svc.db.orm
		.select()
		.from(tasks)
		.where(and(eq(tasks.kind, KIND), eq(tasks.channelId, channelId), eq(tasks.upstreamId, a.id), inArray(tasks.status, OPEN)))
		.limit(1)
	return task ? settleTask(svc, task, a) : false
}

/** Whether the response is a background response of this channel still open here (not yet settled). */
export async function hasOpenBackground(svc: Services, channelId: number, id: string): Promise<boolean> {
	const [row] = await svc.db.orm
		.select({ id: tasks.id })
		.from(tasks)
		.where(and(eq(tasks.kind, KIND), eq(tasks.channelId, channelId), eq(tasks.upstreamId, id), inArray(tasks.status, OPEN)))
		.limit(1)
	return row !== undefined
}

async function settleTask(svc: Services, task: TaskRow, answer: Obj): Promise<boolean> {
	const terms = task.result as unknown as Terms
	const billed = billedUsage(answer, terms)
	const cost = billed ? tokenCost(billed.usage, terms.price) : 0
	const status = answer.status === 'completed' || answer.status === 'incomplete' ? 'completed' : 'failed'
	// The POST's charge may still wait in this instance's batch: written first, its spend is there to give back.
	await svc.ledger.flush()
	const done = await svc.db.sql.transaction(async (tx) => {
		// The ledger's lock order: account, key, then the task row.
		const room = await lockOwnerRoom(tx, { accountId: task.accountId, tokenId: task.tokenId })
		const [row] = await tx.query<{ cost: number }>(
			`UPDATE tasks SET status = $2, updated_at = now(), error = $3 WHERE id = $1 AND status IN ('queued', 'in_progress') RETURNING cost`,
			[task.id, status, status === 'failed' ? `response ${String(answer.status)}` : null],
		)
		if (!row) return false
		const charged = Number(row.cost)
		// More than was reserved (an input larger than estimated) is taken as far as the balance and the key's limit go.
		const delta = settledCost(charged, cost, room) - charged
		if (delta !== 0) {
			await tx.query('UPDATE accounts SET balance = balance - $2 WHERE id = $1', [task.accountId, delta])
			if (task.tokenId !== null) await tx.query('UPDATE api_tokens SET spent = GREATEST(0, spent + $2) WHERE id = $1', [task.tokenId, delta])
		}
		await tx.query('UPDATE tasks SET cost = $2, refunded = $3 WHERE id = $1', [task.id, charged + delta, delta < 0])
		const u = billed?.usage ?? emptyUsage()
		await tx.query(
			`INSERT INTO usage_logs (request_id, account_id, token_id, model, upstream_model, endpoint, channel_id, channel, input_tokens, output_tokens,
			   cached_tokens, cache_write_tokens, reasoning_tokens, cost, status, latency_ms, estimated, end_reason, stream)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 200, $15, $16, $17, false)`,
			[
				`${task.requestId}:settle`,
				task.accountId,
				task.tokenId,
				task.model,
				terms.upstreamModel,
				terms.endpoint,
				task.channelId,
				terms.channel,
				u.input,
				u.output,
				u.cacheRead,
				u.cacheWrite,
				u.reasoning,
				delta,
				Date.now() - task.createdAt.getTime(),
				billed?.estimated ?? false,
				billed ? (END_REASON[String(answer.status)] ?? 'ok') : 'refund',
			],
		)
		return true
	})
	if (done) svc.log.info('background response settled', { response: answer.id, status: answer.status, cost })
	return done
}

/** Asks the channel for a response (GET /responses/{id}); the Response object, or undefined when it did not answer one. */
export async function fetchResponse(ch: Channel, id: string, signal: AbortSignal): Promise<Obj | undefined> {
	const adapter = chatAdapterFor(ch.type)
	const base = ch.settings.responses_api === false ? undefined : adapter?.responsesUrl?.(ch)
	if (!adapter || !base) return undefined
	const up = await fetchUpstream(appendPath(base, `/${encodeURIComponent(id)}`), { method: 'GET', headers: adapter.headers(ch), ...credentialHooks(ch) }, channelTimeouts(ch.settings), signal)
	const text = await up.text()
	up.release()
	if (!up.res.ok) throw new GatewayError('upstream', `response ${id} poll: HTTP ${up.res.status}`, { retryable: true })
	return JSON.parse(text) as Obj
}

export type BackgroundPoller = { tick(): Promise<number>; stop(): Promise<void> }

/**
 * Settles background responses nobody retrieves: every `intervalMs` it claims open ones idle that long (several
 * instances share them: rows another instance holds are skipped), asks their channel for each, and settles those
 * that ended. Uses `TASK_POLL_INTERVAL_MS` (15 s) as the task poller does; a response still open after
 * `TASK_MAX_AGE_MS` is failed and refunded by that poller (src/tasks), as a lost task is.
 */
export function startBackgroundPoller(svc: Services, opts: { intervalMs?: number; batch?: number } = {}): BackgroundPoller {
	const intervalMs = opts.intervalMs ?? svc.env.taskPollIntervalMs
	const batch = opts.batch ?? 50
	const ctl = new AbortController()
	let running: Promise<number> | undefined
	const round = async (): Promise<number> => {
		const due = await claimDue(svc, intervalMs, batch)
		for (const task of due) {
			if (ctl.signal.aborted) break
			const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
			if (!ch || !task.upstreamId) continue
			try {
				const answer = await fetchResponse(ch, task.upstreamId, ctl.signal)
				if (answer && answer.id === task.upstreamId && TERMINAL.has(String(answer.status))) await settleTask(svc, task, answer)
			} catch (e) {
				svc.log.debug('background response poll failed', { response: task.upstreamId, error: String(e) })
			}
		}
		return due.length
	}
	const tick = () =>
		(running ??= round().finally(() => {
			running = undefined
		}))
	const timer = setInterval(() => void tick().catch((e) => svc.log.warn('background response poll round failed', { error: String(e) })), intervalMs)
	timer.unref?.()
	return {
		tick,
		async stop() {
			clearInterval(timer)
			ctl.abort()
			await running?.catch(() => 0)
		},
	}
}

/**
 * When a background response was last asked about by a poller: its `result.polled_at`, else its creation. Not
 * `updated_at`, which the task poller of src/tasks bumps on every open task it claims (it has nothing to ask OpenAI
 * for these): on the same interval, it would keep every response looking freshly polled to this poller.
 */
const lastPolled = sql`coalesce((${tasks.result}->>'polled_at')::timestamptz, ${tasks.createdAt})`

/** Claims up to `limit` open background responses not polled for `idleMs` (their `polled_at` is set), oldest first. */
async function claimDue(svc: Services, idleMs: number, limit: number): Promise<TaskRow[]> {
	const due = svc.db.orm
		.select({ id: tasks.id })
		.from(tasks)
		// The database's clock, not this process's: instances may disagree on the time.
		.where(and(eq(tasks.kind, KIND), inArray(tasks.status, OPEN), sql`${lastPolled} < now() - make_interval(secs => ${idleMs / 1000})`))
		.orderBy(asc(lastPolled))
		.limit(limit)
		.for('update', { skipLocked: true })
	return svc.db.orm
		.update(tasks)
		.set({ result: sql`jsonb_set(coalesce(${tasks.result}, '{}'::jsonb), '{polled_at}', to_jsonb(clock_timestamp()))` })
		.where(and(inArray(tasks.id, due), inArray(tasks.status, OPEN)))
		.returning()
}
