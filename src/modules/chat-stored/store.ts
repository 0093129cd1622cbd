/**
 * Stored chat completions (`store: true`, https://platform.openai.com/docs/api-reference/chat/create#chat-create-store):
 * this gateway keeps its own copy for every model, in `stored_completions`, under the owning account and the
 * completion's own id, so any instance serves them and only that account ever sees them. OpenAI keeps a stored
 * completion 30 days; so does the purge here.
 * @module
 */
import { and, asc, desc, eq, gt, lt, sql } from 'drizzle-orm'
import { GatewayError } from '../../core/errors'
import type { Db } from '../../db/client'
import { storedCompletions as table } from '../../db/schema'

type Obj = Record<string, unknown>

/** How long a stored completion is kept: OpenAI's 30 days. */
export const STORED_COMPLETION_DAYS = 30

/**
 * OpenAI's bounds on `metadata` (https://platform.openai.com/docs/api-reference/chat/create#chat-create-metadata): at
 * most 16 pairs, keys up to 64 characters, values strings up to 512.
 */
export const METADATA_LIMITS = { pairs: 16, key: 64, value: 512 }

const invalid = (message: string, code: string, param: string) => new GatewayError('invalid_request', message, { code, param })

/**
 * `metadata` as OpenAI takes it (an object of at most 16 string pairs; null for none); a 400 in OpenAI's words otherwise.
 * @example checkMetadata({ topic: 'cats' }, 'metadata') // { topic: 'cats' }
 */
export function checkMetadata(x: unknown, param = 'metadata'): Record<string, string> | null {
	if (x === undefined || x === null) return null
	if (typeof x !== 'object' || Array.isArray(x)) throw invalid(`Invalid type for '${param}': expected an object, but got ${Array.isArray(x) ? 'an array' : typeof x} instead.`, 'invalid_type', param)
	const pairs = Object.entries(x as Obj)
	if (pairs.length > METADATA_LIMITS.pairs)
		throw invalid(
			`Invalid '${param}': too many properties. Expected an object with at most ${METADATA_LIMITS.pairs} properties, but got an object with ${pairs.length} properties instead.`,
			'object_above_max_properties',
			param,
		)
	for (const [k, v] of pairs) {
		if (k.length > METADATA_LIMITS.key)
			throw invalid(`Invalid '${param}': key '${k.slice(0, 80)}' is too long. Expected a key with maximum length ${METADATA_LIMITS.key}, but got ${k.length} characters instead.`, 'string_above_max_length', param)
		if (typeof v !== 'string') throw invalid(`Invalid type for '${param}.${k}': expected a string, but got ${v === null ? 'null' : typeof v} instead.`, 'invalid_type', `${param}.${k}`)
		if (v.length > METADATA_LIMITS.value)
			throw invalid(
				`Invalid '${param}.${k}': string too long. Expected a string with maximum length ${METADATA_LIMITS.value}, but got a string with length ${v.length} instead.`,
				'string_above_max_length',
				`${param}.${k}`,
			)
	}
	return x as Record<string, string>
}

/**
 * Whose a completion is, the model its request asked for, the request's messages and metadata, and its place in the
 * list (`seq`, drawn when the request began: `nextSeq`), if drawn.
 */
export type KeepTerms = { accountId: number; model: string; messages: unknown[]; metadata: Record<string, string> | null; seq?: Promise<number | undefined> }

/** A kept completion as the routes read it. */
export type StoredCompletion = { id: string; completion: Obj; messages: unknown[]; metadata: Record<string, string> | null }

/** The list's query: `model`, `metadata` pairs all of which must match, and the page. */
export type ListQuery = { model?: string; metadata?: Record<string, string>; after?: string; limit: number; order: 'asc' | 'desc' }

const view = (r: typeof table.$inferSelect): StoredCompletion => ({
	id: r.completionId,
	completion: r.completion as Obj,
	messages: r.messages as unknown[],
	metadata: (r.metadata as Record<string, string> | null) ?? null,
})

/** The 404 OpenAI gives an id it does not hold: any id that is not the caller's own. */
export const completionNotFound = (id: string) =>
	new GatewayError('not_found', `Chat completion with id '${id}' not found.`, { code: 'not_found', param: 'completion_id' })

export type CompletionStore = ReturnType<typeof completionStore>

/**
 * The account-scoped reads and writes of `stored_completions`: every one names the account, so another account's id
 * is never found (404) rather than refused, as for stored responses (modules/responses/ownership.ts).
 */
export function completionStore(db: Db) {
	const one = (accountId: number, id: string) => and(eq(table.accountId, accountId), eq(table.completionId, id))
	return {
		/**
		 * Keeps a completion answered to the account, listed under the model asked for. A repeat of an id for the
		 * account (an upstream that reuses ids) replaces the copy, in its place in the list.
		 */
		async keep({ accountId, model, messages, metadata, seq }: KeepTerms, completion: Obj): Promise<void> {
			const values = { accountId, completionId: String(completion.id), model, completion, messages, metadata, ...(seq && { seq: await seq }) }
			await db.orm
				.insert(table)
				.values(values)
				.onConflictDoUpdate({ target: [table.accountId, table.completionId], set: { model: values.model, completion, messages, metadata } })
		},
		/**
		 * A place in the list, drawn when a request to be stored begins: the list is in the order completions were
		 * created (OpenAI sorts it by their timestamp), and a row is written only once its answer is whole, so a long
		 * stream would otherwise follow the answers that began after it and ended first. Undefined (the row gets the
		 * next place when written) if the database could not give one.
		 */
		nextSeq(): Promise<number | undefined> {
			return db.sql
				.query<{ seq: number | string }>(`SELECT nextval(pg_get_serial_sequence('stored_completions', 'seq')) AS seq`)
				.then(([r]) => (r ? Number(r.seq) : undefined))
				.catch(() => undefined)
		},
		/** The account's completion `id`; 404 for any other. */
		async get(accountId: number, id: string): Promise<StoredCompletion> {
			const [row] = await db.orm.select().from(table).where(one(accountId, id)).limit(1)
			if (!row) throw completionNotFound(id)
			return view(row)
		},
		/** Replaces its metadata (null: none); 404 for an id not the account's. */
		async setMetadata(accountId: number, id: string, metadata: Record<string, string> | null): Promise<StoredCompletion> {
			const [row] = await db.orm.update(table).set({ metadata }).where(one(accountId, id)).returning()
			if (!row) throw completionNotFound(id)
			return view(row)
		},
		/** Deletes it; 404 for an id not the account's. */
		async remove(accountId: number, id: string): Promise<void> {
			const gone = await db.orm.delete(table).where(one(accountId, id)).returning({ seq: table.seq })
			if (!gone.length) throw completionNotFound(id)
		},
		/**
		 * A page of the account's completions in creation order (`order`), after the one `after` names; one more row is
		 * read than shown, to tell `has_more`. An `after` that is not the account's is a 400, as an unknown cursor is
		 * on the other lists (modules/responses/stored-routes.ts).
		 */
		async list(accountId: number, q: ListQuery): Promise<{ rows: StoredCompletion[]; hasMore: boolean }> {
			const where = [eq(table.accountId, accountId)]
			if (q.model !== undefined) where.push(eq(table.model, q.model))
			if (q.metadata && Object.keys(q.metadata).length) where.push(sql`${table.metadata} @> ${JSON.stringify(q.metadata)}::jsonb`)
			if (q.after !== undefined) {
				const [at] = await db.orm.select({ seq: table.seq }).from(table).where(one(accountId, q.after)).limit(1)
				if (!at) throw invalid(`No chat completion with id '${q.after}' to list after.`, 'invalid_value', 'after')
				where.push(q.order === 'asc' ? gt(table.seq, at.seq) : lt(table.seq, at.seq))
			}
			const rows = await db.orm
				.select()
				.from(table)
				.where(and(...where))
				.orderBy(q.order === 'asc' ? asc(table.seq) : desc(table.seq))
				.limit(q.limit + 1)
			return { rows: rows.slice(0, q.limit).map(view), hasMore: rows.length > q.limit }
		},
	}
}

/** Forgets the completions stored before `days` ago; returns how many. Any instance may run it: a repeat deletes nothing. */
export async function purgeStoredCompletions(db: Db, days = STORED_COMPLETION_DAYS, now = Date.now()): Promise<number> {
	const gone = await db.orm
		.delete(table)
		.where(lt(table.createdAt, new Date(now - days * 86_400_000)))
		.returning({ seq: table.seq })
	return gone.length
}
