/**
 * Output items of converted responses (Anthropic, Gemini, chat-only upstreams), kept so that a later request can name
 * them by `item_reference`. OpenAI stores every response unless `store: false`, and stateful clients lean on it: the
 * Vercel AI SDK's Responses model (the default `openai(...)` model) stores by default and replays earlier assistant
 * text and reasoning as `{type: 'item_reference', id}` rather than the items themselves, so without this a second
 * turn to a converted model failed with 400 (`item_reference is only available on OpenAI models`).
 *
 * Kept only for requests that did not say `store: false`, per account (a client never reads another account's items;
 * the ids are random besides): in the database (`converted_items`), so any instance resolves them, also after a
 * restart, for as long as stored response ids are kept (ownership.ts); and the recent ones in this process's memory
 * too (recent.ts), so the usual next turn on the same instance reads no database. A reference nobody holds (expired,
 * or never answered through the gateway) still gets the 400 of `unconvertible`, which says to send the items
 * themselves (`store: false`).
 *
 * Read your writes: what an answer keeps is written before the client reads the end of it (index.ts waits for the
 * promises `remember` and `keepResponse` give), so a client continuing at once on another instance finds it. Rows
 * handed over in one tick go in one INSERT (an answer's items and its Response copy: one round trip). A failed write
 * is logged and the answer still completes; a continuation of it then gets the 404 / 400 of an unknown id.
 *
 * A Response copy holds its own input and the id of the response it continued, never its previous turns: a chain of
 * N turns keeps O(N) items, and its whole input is read back by one recursive query (`chain`). A copy deleted on one
 * instance is dropped from the others' memory through the bus; where they would not hear it (PostgreSQL without
 * Redis), a copy held in memory is continued from memory only for a minute after it was kept.
 * @module
 */
import { and, eq, inArray } from 'drizzle-orm'
import { convertedItems as itemsTable } from '../../db/schema'
import type { Db } from '../../db/client'
import { purgeKeepingChains } from '../../db/purge-chains'
import { type Bus, hearsOthers } from '../../lib/bus'
import type { Logger } from '../../lib/log'
import type { ProtocolCodec } from '../../protocols/codec'
import { tappedCodec } from './codec-tap'
import { recent } from './recent'

/** How many items are kept in memory (oldest dropped first), their total JSON size, and for how long. */
export const ITEM_LIMIT = 20_000
export const ITEM_BYTES = 32 * 1024 * 1024
export const ITEM_TTL_MS = 6 * 3_600_000
/** The longest chain of continuations read back (a turn beyond it cannot be continued: send the whole input). */
export const CHAIN_LIMIT = 5_000

type Item = Record<string, unknown>

/** A kept converted response: the Response object, the input its own request sent, and the response it continued. */
export type KeptResponse = {
	id: string
	response: Item
	/** Null for a copy kept before inputs were. Without `previous`, possibly a whole input (a copy kept before chains were). */
	input: unknown[] | null
	previous: string | null
}

export type ConvertedItems = {
	/** Remembers the output items of a converted response answered to `accountId`; resolves once written (or failed). */
	remember(accountId: number, items: unknown[]): Promise<void>
	/**
	 * `input` with every `item_reference` this store holds for the account replaced by the item it names, and, with
	 * `reasoning`, every reasoning item replayed by its id alone (`isBareReasoning`) by the kept one, or `undefined`
	 * when nothing was replaced (at once, without a promise, when `input` names no such item). A request for OpenAI's
	 * models leaves `reasoning` off: OpenAI holds its own reasoning by id (the Agents SDK replays every turn's so), and
	 * looking each up here would be a database round trip per turn for nothing.
	 */
	resolve(accountId: number, input: unknown, reasoning?: boolean): unknown[] | undefined | Promise<unknown[] | undefined>
	/** Resolves once every item remembered so far is written (tests, shutdown). */
	written(): Promise<void>
	/**
	 * Keeps a copy of a whole converted Response object with the input its request sent (`input`, items with their ids)
	 * and the id of the response it continued (`previous`), for `GET /v1/responses/{id}`, its `input_items` and
	 * `previous_response_id`; resolves once written (or failed).
	 */
	keepResponse(accountId: number, response: Item, input?: unknown[], previous?: string): Promise<void>
	/** The copy of the account's converted response `id`, if kept. */
	response(accountId: number, id: string): Promise<Item | undefined>
	/**
	 * The account's kept response `id` and the ones it continued, the first turn first and `id` last; undefined when
	 * `id` is not kept (or deleted). A chain whose start is gone (purged, or longer than CHAIN_LIMIT) starts with a
	 * response whose `previous` is set. From memory when this instance holds the whole chain, else one query.
	 */
	chain(accountId: number, id: string): Promise<KeptResponse[] | undefined>
	/** Forgets the copy; whether there was one. */
	forgetResponse(accountId: number, id: string): Promise<boolean>
}

/** Where a converted Response object's copy is kept among the items: its own namespace, no item id starts so. */
const responseKey = (id: string) => `response:${id}`

/** Where items outlive this process: the database, shared by every instance; the bus says which copies were deleted. */
export type ItemStore = { db: Db; log: Logger; bus?: Bus }

/** How long a copy held in memory is continued from memory by an instance that would not hear of its deletion. */
export const DETACHED_MS = 60_000
const FORGET_TOPIC = 'converted-response-forget'

const isRef = (x: unknown): x is { type: 'item_reference'; id: string } =>
	!!x && typeof x === 'object' && (x as Item).type === 'item_reference' && typeof (x as Item).id === 'string'

/**
 * A reasoning item replayed by its `id` without its `encrypted_content`, as OpenAI takes one of a stored response (it
 * fetches the rest by the id): for a converted answer's, the thinking and its signature are in the kept item.
 */
export const isBareReasoning = (x: unknown): x is { type: 'reasoning'; id: string } =>
	!!x && typeof x === 'object' && (x as Item).type === 'reasoning' && typeof (x as Item).id === 'string' && !!(x as Item).id && typeof (x as Item).encrypted_content !== 'string'

type Row = { itemId: string; accountId: number; item: Item; input?: unknown[]; previousId?: string }

/** Reads a chain back from `key`: each row joined to the one it continued, by primary key, within CHAIN_LIMIT. */
const CHAIN_SQL = `WITH RECURSIVE chain AS (
	SELECT item_id, item, input, previous_id, deleted, 0 AS depth FROM converted_items WHERE item_id = $1 AND account_id = $2
	UNION ALL
	SELECT c.item_id, c.item, c.input, c.previous_id, c.deleted, chain.depth + 1 FROM chain
	JOIN converted_items c ON c.item_id = 'response:' || chain.previous_id AND c.account_id = $2
	WHERE chain.depth < $3
) SELECT item_id, item, input, previous_id, deleted FROM chain ORDER BY depth DESC`

const json = (x: unknown) => (typeof x === 'string' ? JSON.parse(x) : x)

export function convertedItems(opts: { limit?: number; bytes?: number; ttlMs?: number; now?: () => number; store?: ItemStore } = {}): ConvertedItems {
	const bounds = { limit: opts.limit ?? ITEM_LIMIT, bytes: opts.bytes ?? ITEM_BYTES, ttlMs: opts.ttlMs ?? ITEM_TTL_MS, now: opts.now ?? Date.now }
	const items = recent<Item>(bounds)
	const responses = recent<KeptResponse & { at: number }>(bounds)
	const bus = opts.store?.bus
	bus?.subscribe(FORGET_TOPIC, (id) => responses.delete(id), () => responses.clear())
	const hears = bus ? hearsOthers(bus, opts.store!.db.kind) : () => opts.store?.db.kind !== 'postgres'
	/** Inserts under way. */
	const writing = new Set<Promise<void>>()
	/** Rows handed over in this tick, and the write that will take them. */
	let batch: { rows: Row[]; done: Promise<void> } | undefined
	const persist = (rows: Row[]): Promise<void> => {
		const store = opts.store
		if (!store || !rows.length) return Promise.resolve()
		if (batch) {
			batch.rows.push(...rows)
			return batch.done
		}
		const b = { rows: [...rows] } as { rows: Row[]; done: Promise<void> }
		batch = b
		const w: Promise<void> = Promise.resolve()
			.then(() => {
				batch = undefined
				return store.db.orm.insert(itemsTable).values(b.rows).onConflictDoNothing()
			})
			.then(
				() => undefined,
				(e) => store.log.warn('converted items not stored', { error: String(e), rows: b.rows.length }),
			)
			.finally(() => writing.delete(w))
		b.done = w
		writing.add(w)
		return w
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
			.where(and(eq(itemsTable.accountId, accountId), inArray(itemsTable.itemId, ids), eq(itemsTable.deleted, false)))
		return new Map(rows.map((r) => [r.id, r.item as Item]))
	}
	/** The chain from the database, `id` last (deleted or not). */
	const loadChain = async (accountId: number, id: string): Promise<Array<KeptResponse & { deleted: boolean }>> => {
		const store = opts.store
		if (!store) return []
		await writes()
		const rows = await store.db.sql.query<{ item_id: string; item: unknown; input: unknown; previous_id: string | null; deleted: boolean }>(CHAIN_SQL, [
			responseKey(id),
			accountId,
			CHAIN_LIMIT,
		])
		return rows.map((r) => {
			const input = json(r.input)
			return {
				id: r.item_id.slice('response:'.length),
				response: json(r.item) as Item,
				input: Array.isArray(input) ? input : null,
				previous: r.previous_id,
				deleted: r.deleted,
			}
		})
	}
	return {
		remember(accountId, list) {
			const rows: Row[] = []
			for (const item of list) {
				if (!item || typeof item !== 'object') continue
				const { id, status: _status, ...rest } = item as Item
				if (typeof id !== 'string' || !id) continue
				rows.push({ itemId: id, accountId, item: rest })
				items.set(accountId, id, rest, JSON.stringify(rest).length)
			}
			return persist(rows)
		},
		resolve(accountId, input, reasoning = true) {
			// An input item this store may hold the whole of: a reference, or reasoning replayed by its id alone.
			const named = (x: unknown): x is { type: string; id: string } => isRef(x) || (reasoning && isBareReasoning(x))
			if (!Array.isArray(input) || !input.some(named)) return undefined
			const missing = input.filter((x) => named(x) && !items.get(accountId, x.id)).map((x) => (x as { id: string }).id)
			const swap = (stored: Map<string, Item>) =>
				input.map((x) => {
					if (!named(x)) return x
					const held = items.get(accountId, x.id) ?? stored.get(x.id)
					if (isRef(x)) return held ?? x
					// Reasoning by id: the kept item whole (its signature in `encrypted_content`), under the id the client named.
					return held?.type === 'reasoning' ? { ...held, id: x.id } : x
				})
			const replaced = (out: unknown[]) => (out.some((x, i) => x !== input[i]) ? out : undefined)
			if (!missing.length) return replaced(swap(new Map()))
			return load(accountId, missing).then((stored) => replaced(swap(stored)))
		},
		written: writes,
		keepResponse(accountId, response, input, previous) {
			const id = response.id
			if (typeof id !== 'string' || !id) return Promise.resolve()
			const kept = { id, response, input: input ?? null, previous: previous ?? null, at: bounds.now() }
			responses.set(accountId, id, kept, JSON.stringify(response).length + JSON.stringify(input ?? null).length)
			return persist([{ itemId: responseKey(id), accountId, item: response, input, previousId: previous }])
		},
		async response(accountId, id) {
			return (await load(accountId, [responseKey(id)])).get(responseKey(id))
		},
		async chain(accountId, id) {
			// The turns this instance holds, newest first, down to the first it does not.
			const held: KeptResponse[] = []
			let next: string | null = id
			// The response continued may have been deleted on another instance: trusted from memory while that would be heard.
			const head = responses.get(accountId, id)
			if (head && !hears() && head.at + DETACHED_MS < bounds.now()) responses.delete(id)
			for (let k: KeptResponse | undefined; next !== null && held.length < CHAIN_LIMIT && (k = responses.get(accountId, next)); next = k.previous) {
				const { at: _at, ...turn } = k as KeptResponse & { at: number }
				held.push(turn)
			}
			if (next === null || held.length >= CHAIN_LIMIT) return held.reverse()
			const rest = await loadChain(accountId, next)
			// The named response itself is gone (never kept, or deleted): unknown. A deleted earlier turn still counts.
			if (!held.length && (!rest.length || rest.at(-1)!.deleted)) return undefined
			return [...rest.map(({ deleted: _deleted, ...k }) => k), ...held.reverse()]
		},
		async forgetResponse(accountId, id) {
			const store = opts.store
			responses.delete(id)
			bus?.publish(FORGET_TOPIC, id)
			if (!store) return false
			await writes()
			const key = responseKey(id)
			// Still continued by another kept response: hidden, its turn kept for the chains through it.
			const hidden = await store.db.sql.query(
				`UPDATE converted_items SET deleted = true WHERE item_id = $1 AND account_id = $2 AND NOT deleted
				AND EXISTS (SELECT 1 FROM converted_items d WHERE d.previous_id = $3) RETURNING item_id`,
				[key, accountId, id],
			)
			if (hidden.length) return true
			const gone = await store.db.orm
				.delete(itemsTable)
				.where(and(eq(itemsTable.accountId, accountId), eq(itemsTable.itemId, key), eq(itemsTable.deleted, false)))
				.returning({ id: itemsTable.itemId })
			return gone.length > 0
		},
	}
}

/**
 * Forgets the items stored before `days` ago (with the stored response ids: ownership.ts); returns how many. An old
 * response a younger kept one continues (through old ones or not) stays: the younger one's input is read through it.
 */
export const purgeConvertedItems = (db: Db, days: number, now = Date.now()): Promise<number> =>
	purgeKeepingChains(db, { table: 'converted_items', key: 'item_id', keyOf: (id) => `'response:' || ${id}` }, new Date(now - days * 86_400_000))

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
