/**
 * The task table's access paths. Status moves forward only, by compare-and-set (`UPDATE … WHERE status IN (…)`):
 * queued → in_progress → completed | failed, never back and never out of a terminal state, so overlapping polls and
 * several instances agree on one outcome (WIRE-NOTES #20). Failing (which refunds) lives in refund.ts.
 * @module
 */
import { and, asc, desc, eq, inArray, lt, sql } from 'drizzle-orm'
import type { Db } from '../db/client'
import { tasks } from '../db/schema'
import { randomString } from '../lib/ids'

/**
 * `veo`: Gemini's long-running video operations (src/modules/gemini/veo.ts). `batch`: OpenAI batches (batch.ts);
 * `file`: an uploaded or batch output file recorded to its account, never open (modules/batches/files.ts).
 * `message_batch`: Anthropic's message batches (message-batch.ts). `gemini_batch`: Gemini's batches (gemini-batch.ts).
 * `anthropic_file`: a file uploaded with Anthropic's Files API, recorded to its account (modules/anthropic-files).
 * `gemini_file`: a Gemini Files API upload recorded to its account, never open (modules/gemini-files).
 * `anthropic_container`: a container Claude's code execution ran in, recorded to the account it answered
 * (modules/anthropic-files/outputs.ts); files the code wrote are `anthropic_file`s.
 */
export type TaskKind = 'video' | 'mj' | 'suno' | 'veo' | 'batch' | 'file' | 'message_batch' | 'gemini_batch' | 'anthropic_file' | 'anthropic_container' | 'gemini_file'
export type TaskStatus = 'queued' | 'in_progress' | 'completed' | 'failed'
export type TaskRow = typeof tasks.$inferSelect

/** What an upstream says about a task. */
export type TaskUpdate = { status: TaskStatus; progress?: number; result?: Record<string, unknown>; error?: string }

export const OPEN_STATUSES: TaskStatus[] = ['queued', 'in_progress']
export const isTerminal = (s: string): boolean => s === 'completed' || s === 'failed'

/** Switchboard's own task id. @example newTaskId('video') // 'video_…' */
export const newTaskId = (kind: TaskKind): string => `${kind}_${randomString(24)}`

export type NewTask = {
	id?: string
	kind: TaskKind
	accountId: number
	tokenId: number | null
	model: string
	channelId: number
	upstreamId: string
	requestId: string
	cost: number
	result?: Record<string, unknown>
}

export async function insertTask(db: Db, t: NewTask): Promise<TaskRow> {
	const [row] = await db.orm
		.insert(tasks)
		.values({ ...t, id: t.id ?? newTaskId(t.kind), status: 'queued', progress: 0 })
		.returning()
	return row!
}

/** A task of this account by Switchboard id; undefined for another account's (callers answer 404 either way). */
export async function findOwned(db: Db, kind: TaskKind, id: string, accountId: number): Promise<TaskRow | undefined> {
	const [row] = await db.orm
		.select()
		.from(tasks)
		.where(and(eq(tasks.id, id), eq(tasks.kind, kind), eq(tasks.accountId, accountId)))
		.limit(1)
	return row
}

/** This account's tasks among upstream ids (Midjourney and Suno clients name tasks by the upstream's id). */
export async function ownedByUpstream(db: Db, kind: TaskKind, accountId: number, upstreamIds: string[]): Promise<TaskRow[]> {
	if (!upstreamIds.length) return []
	return db.orm
		.select()
		.from(tasks)
		.where(and(eq(tasks.kind, kind), eq(tasks.accountId, accountId), inArray(tasks.upstreamId, upstreamIds)))
}

/**
 * A page of this account's tasks of a kind, newest first (or oldest with `order: 'asc'`), after the task `after`
 * (whose own position is read by the database, at its full timestamp precision). Fetches one more than `limit`, so
 * the caller can tell whether more follow. `purpose` keeps only files whose recorded File object has that purpose.
 */
export async function listOwned(db: Db, kind: TaskKind, accountId: number, page: { after?: string; limit: number; order: 'asc' | 'desc'; purpose?: string }): Promise<TaskRow[]> {
	const dir = page.order === 'asc' ? sql`>` : sql`<`
	const cursor = page.after
		? sql`(${tasks.createdAt}, ${tasks.id}) ${dir} (SELECT c.created_at, c.id FROM tasks c WHERE c.id = ${page.after} AND c.kind = ${kind} AND c.account_id = ${accountId})`
		: undefined
	const by = page.order === 'asc' ? [asc(tasks.createdAt), asc(tasks.id)] : [desc(tasks.createdAt), desc(tasks.id)]
	return db.orm
		.select()
		.from(tasks)
		.where(and(eq(tasks.kind, kind), eq(tasks.accountId, accountId), cursor, page.purpose === undefined ? undefined : sql`${tasks.result}->'file'->>'purpose' = ${page.purpose}`))
		.orderBy(...by)
		.limit(page.limit + 1)
}

/** Removes this account's task once it is terminal (an open one still has a charge a failure may refund); false when none was. */
export async function deleteFinished(db: Db, kind: TaskKind, id: string, accountId: number): Promise<boolean> {
	const gone = await db.orm
		.delete(tasks)
		.where(and(eq(tasks.id, id), eq(tasks.kind, kind), eq(tasks.accountId, accountId), inArray(tasks.status, ['completed', 'failed'])))
		.returning({ id: tasks.id })
	return gone.length > 0
}

/** Any account's task with this upstream id on this channel. */
export async function findByUpstream(db: Db, kind: TaskKind, channelId: number, upstreamId: string): Promise<TaskRow | undefined> {
	const [row] = await db.orm
		.select()
		.from(tasks)
		.where(and(eq(tasks.kind, kind), eq(tasks.channelId, channelId), eq(tasks.upstreamId, upstreamId)))
		.limit(1)
	return row
}

/**
 * Moves an open task to queued / in_progress / completed (never failed: see refund.ts). Returns the row after the
 * change, or undefined when the task was already terminal (someone else finished it first) or the move would go back.
 */
export async function advance(db: Db, id: string, u: TaskUpdate & { status: Exclude<TaskStatus, 'failed'> }): Promise<TaskRow | undefined> {
	const from: TaskStatus[] = u.status === 'queued' ? ['queued'] : OPEN_STATUSES
	const progress = u.status === 'completed' ? 100 : Math.max(0, Math.min(99, Math.round(u.progress ?? 0)))
	const [row] = await db.orm
		.update(tasks)
		.set({ status: u.status, progress, updatedAt: sql`now()`, ...(u.result ? { result: u.result } : {}) })
		.where(and(eq(tasks.id, id), inArray(tasks.status, from)))
		.returning()
	return row
}

export async function getTask(db: Db, id: string): Promise<TaskRow | undefined> {
	const [row] = await db.orm.select().from(tasks).where(eq(tasks.id, id)).limit(1)
	return row
}

/**
 * Claims up to `limit` open tasks not touched for `idleMs` (their `updated_at` is bumped), oldest first. Rows locked
 * by another instance's claim are skipped, so instances share the work instead of polling the same tasks.
 */
export async function claimDue(db: Db, idleMs: number, limit: number): Promise<TaskRow[]> {
	const due = db.orm
		.select({ id: tasks.id })
		.from(tasks)
		// The database's clock, not this process's: instances may disagree on the time.
		.where(and(inArray(tasks.status, OPEN_STATUSES), lt(tasks.updatedAt, sql`now() - make_interval(secs => ${idleMs / 1000})`)))
		.orderBy(asc(tasks.updatedAt))
		.limit(limit)
		.for('update', { skipLocked: true })
	return db.orm
		.update(tasks)
		.set({ updatedAt: sql`clock_timestamp()` })
		.where(and(inArray(tasks.id, due), inArray(tasks.status, OPEN_STATUSES)))
		.returning()
}
