/**
 * Output items of converted responses (Anthropic, Gemini, chat-only upstreams), kept so that a later request can name
 * them by `item_reference`. OpenAI stores every response unless `store: false`, and stateful clients lean on it: the
 * Vercel AI SDK's Responses model (the default `openai(...)` model) stores by default and replays earlier assistant
 * text and reasoning as `{type: 'item_reference', id}` rather than the items themselves, so without this a second
 * turn to a converted model failed with 400 (`item_reference is only available on OpenAI models`).
 *
 * Kept only for requests that did not say `store: false`, per account (a client never reads another account's items;
 * the ids are random besides): in the database (`converted_items`, written after the answer, off its path), so any
 * instance resolves them, also after a restart, for as long as stored response ids are kept (ownership.ts); and the
 * recent ones in this process's memory too, bounded by count, size and age, so the usual next turn on the same
 * instance reads no database. A reference nobody holds (expired, or never answered through the gateway) still gets the
 * 400 of `unconvertible`, which says to send the items themselves (`store: false`).
 * @module
 */
import { and, eq, inArray, lt } from 'drizzle-orm'
import { convertedItems as itemsTable } from '../../db/schema'
import type { Db } from '../../db/client'
import type { Logger } from '../../lib/log'
import type { ProtocolCodec } from '../../protocols/codec'
import { tappedCodec } from './codec-tap'

/** How many items are kept (oldest dropped first), their total JSON size, and for how long. */
export const ITEM_LIMIT = 20_000
export const ITEM_BYTES = 32 * 1024 * 1024
export const ITEM_TTL_MS = 6 * 3_600_000

type Item = Record<string, unknown>
type Entry = { accountId: number; item: Item; expires: number; size: number }

export type ConvertedItems = {
	/** Remembers the output items of a converted response answered to `accountId`. */
	remember(accountId: number, items: unknown[]): void
	/**
	 * `input` with every `item_reference` this store holds for the account replaced by the item it names, or
	 * `undefined` when nothing was replaced (at once, without a promise, when `input` names no reference).
	 */
	resolve(accountId: number, input: unknown): unknown[] | undefined | Promise<unknown[] | undefined>
	/** Resolves once every item remembered so far is written (tests, shutdown). */
	written(): Promise<void>
	/**
	 * Keeps a copy of a whole converted Response object with its whole input (previous turns expanded, previous.ts), for
	 * `GET /v1/responses/{id}`, its `input_items` and `previous_response_id` (the database only).
	 */
	keepResponse(accountId: number, response: Record<string, unknown>, input?: unknown[]): void
	/** The copy of the account's converted response `id`, if kept. */
	response(accountId: number, id: string): Promise<Record<string, unknown> | undefined>
	/** The copy of the account's converted response `id` with its input (null for a copy kept before inputs were), if kept. */
	kept(accountId: number, id: string): Promise<{ response: Record<string, unknown>; input: unknown[] | null } | undefined>
	/** Forgets the copy; whether there was one. */
	forgetResponse(accountId: number, id: string): Promise<boolean>
}

/** Where a converted Response object's copy is kept among the items: its own namespace, no item id starts so. */
const responseKey = (id: string) => `response:${id}`

/** Where items outlive this process: the database, shared by every instance. */
export type ItemStore = { db: Db; log: Logger }

const isRef = (x: unknown): x is { type: 'item_reference'; id: string } =>
	!!x && typeof x === 'object' && (x as Item).type === 'item_reference' && typeof (x as Item).id === 'string'

export function convertedItems(opts: { limit?: number; bytes?: number; ttlMs?: number; now?: () => number; store?: ItemStore } = {}): ConvertedItems {
	const limit = opts.limit ?? ITEM_LIMIT
	const maxBytes = opts.bytes ?? ITEM_BYTES
	let bytes = 0
	const ttl = opts.ttlMs ?? ITEM_TTL_MS
	const now = opts.now ?? Date.now
	// A Map iterates in insertion order: the first key is the oldest.
	const entries = new Map<string, Entry>()
	const drop = (id: string) => {
		const e = entries.get(id)
		if (!e) return
		bytes -= e.size
		entries.delete(id)
	}
	const lookup = (accountId: number, id: string): Item | undefined => {
		const e = entries.get(id)
		if (!e || e.accountId !== accountId) return undefined
		if (e.expires <= now()) {
			drop(id)
			return undefined
		}
		return e.item
	}
	/** Inserts under way (each answer's items in one, side by side). */
	const writing = new Set<Promise<void>>()
	const persist = (rows: Array<{ itemId: string; accountId: number; item: Item; input?: unknown[] }>) => {
		const store = opts.store
		if (!store || !rows.length) return
		const w: Promise<void> = store.db.orm
			.insert(itemsTable)
			.values(rows)
			.onConflictDoNothing()
			.then(
				() => undefined,
				(e) => store.log.warn('converted items not stored', { error: String(e) }),
			)
			.finally(() => writing.delete(w))
		writing.add(w)
	}
	const writes = async () => {
		await Promise.all(writing)
	}
	/** The stored items of `ids` answered to the account (as the database has them). */
	const load = async (accountId: number, ids: string[]): Promise<Map<string, Item>> => {
		const store = opts.store
		if (!store || !ids.length) return new Map()
		await writes()
		const rows = await store.db.orm
			.select({ id: itemsTable.itemId, item: itemsTable.item })
			.from(itemsTable)
			.where(and(eq(itemsTable.accountId, accountId), inArray(itemsTable.itemId, ids)))
		return new Map(rows.map((r) => [r.id, r.item as Item]))
	}
	return {
		remember(accountId, items) {
			const rows: Array<{ itemId: string; accountId: number; item: Item }> = []
			for (const item of items) {
				if (!item || typeof item !== 'object') continue
				const { id, status: _status, ...rest } = item as Item
				if (typeof id !== 'string' || !id) continue
				rows.push({ itemId: id, accountId, item: rest })
				const size = JSON.stringify(rest).length
				if (size > maxBytes) continue
				drop(id)
				entries.set(id, { accountId, item: rest, expires: now() + ttl, size })
				bytes += size
			}
			while (entries.size > limit || bytes > maxBytes) drop(entries.keys().next().value!)
			persist(rows)
		},
		resolve(accountId, input) {
			if (!Array.isArray(input) || !input.some(isRef)) return undefined
			const missing = input.filter((x) => isRef(x) && !lookup(accountId, x.id)).map((x) => (x as { id: string }).id)
			const swap = (stored: Map<string, Item>) => input.map((x) => (isRef(x) ? (lookup(accountId, x.id) ?? stored.get(x.id) ?? x) : x))
			const replaced = (out: unknown[]) => (out.some((x, i) => x !== input[i]) ? out : undefined)
			if (!missing.length) return replaced(swap(new Map()))
			return load(accountId, missing).then((stored) => replaced(swap(stored)))
		},
		written: writes,
		keepResponse(accountId, response, input) {
			if (typeof response.id === 'string' && response.id) persist([{ itemId: responseKey(response.id), accountId, item: response, input }])
		},
		async response(accountId, id) {
			return (await load(accountId, [responseKey(id)])).get(responseKey(id))
		},
		async kept(accountId, id) {
			const store = opts.store
			if (!store) return undefined
			await writes()
			const [row] = await store.db.orm
				.select({ item: itemsTable.item, input: itemsTable.input })
				.from(itemsTable)
				.where(and(eq(itemsTable.accountId, accountId), eq(itemsTable.itemId, responseKey(id))))
				.limit(1)
			return row ? { response: row.item as Item, input: Array.isArray(row.input) ? row.input : null } : undefined
		},
		async forgetResponse(accountId, id) {
			const store = opts.store
			if (!store) return false
			await writes()
			const gone = await store.db.orm
				.delete(itemsTable)
				.where(and(eq(itemsTable.accountId, accountId), eq(itemsTable.itemId, responseKey(id))))
				.returning({ id: itemsTable.itemId })
			return gone.length > 0
		},
	}
}

/** Forgets the items stored before `days` ago (with the stored response ids: ownership.ts); returns how many. */
export async function purgeConvertedItems(db: Db, days: number, now = Date.now()): Promise<number> {
	const gone = await db.orm
		.delete(itemsTable)
		.where(lt(itemsTable.createdAt, new Date(now - days * 86_400_000)))
		.returning({ id: itemsTable.itemId })
	return gone.length
}

/**
 * The Responses codec with its client-side encoders tapped: every output item of a converted answer (the body's
 * `output`, a stream's `response.output_item.done` items) is handed to `remember`, and the whole Response object (the
 * body, a stream's terminal event's `response`) to `keep`.
 */
export function rememberingCodec<C extends ProtocolCodec>(codec: C, remember: (items: unknown[]) => void, keep?: (response: Record<string, unknown>) => void): C {
	return tappedCodec(codec, {
		body(body) {
			if (Array.isArray(body.output)) remember(body.output)
			keep?.(body)
			return body
		},
		frame(f) {
			const terminal = f.event === 'response.completed' || f.event === 'response.incomplete' || f.event === 'response.failed'
			if (!terminal && f.event !== 'response.output_item.done') return f
			try {
				const e = JSON.parse(f.data) as { item?: unknown; response?: unknown }
				if (!terminal) remember([e.item])
				else if (keep && e.response && typeof e.response === 'object') keep(e.response as Record<string, unknown>)
			} catch {
				// not ours to judge: the frame goes to the client as encoded
			}
			return f
		},
	})
}
