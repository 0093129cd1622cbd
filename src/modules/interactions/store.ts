/**
 * The interactions this gateway keeps (db table `interactions`), per account: Gemini keeps an interaction unless
 * `store: false` ("store=true" is the default, https://ai.google.dev/gemini-api/docs/interactions), and clients lean
 * on it: `previous_interaction_id` continues a conversation without resending it, and `GET /interactions/{id}` reads
 * one back. Each row holds its own input (steps) and the id it continued, never its previous turns: a chain's whole
 * conversation is read back by one recursive query (`chain`). An id of another account is unknown (404), as any
 * id that was never kept.
 * @module
 */
import { and, eq } from 'drizzle-orm'
import { interactions } from '../../db/schema'
import type { Db } from '../../db/client'
import { purgeKeepingChains } from '../../db/purge-chains'
import type { Logger } from '../../lib/log'

/** The longest chain of continuations read back (a turn beyond it cannot be continued: send the whole input). */
export const CHAIN_LIMIT = 5_000

type Obj = Record<string, unknown>

/**
 * A kept interaction: the resource shown (its output steps), its own input steps, and what it continued; a background
 * one's stream events once it ended, and when its row was last written (a running one's heartbeat).
 */
export type KeptInteraction = { id: string; interaction: Obj; input: Obj[]; previous: string | null; events?: string[]; updatedAt?: Date }

/** A running background interaction whose row was not touched for this long died with its instance. */
export const STALE_MS = 30_000

const CHAIN_SQL = `WITH RECURSIVE chain AS (
	SELECT id, interaction, input, previous_id, 0 AS depth FROM interactions WHERE id = $1 AND account_id = $2
	UNION ALL
	SELECT i.id, i.interaction, i.input, i.previous_id, chain.depth + 1 FROM chain
	JOIN interactions i ON i.id = chain.previous_id AND i.account_id = $2
	WHERE chain.depth < $3
) SELECT id, interaction, input, previous_id FROM chain ORDER BY depth DESC`

const json = (x: unknown) => (typeof x === 'string' ? JSON.parse(x) : x)

export type InteractionStore = ReturnType<typeof interactionStore>

export function interactionStore(store: { db: Db; log: Logger }) {
	return {
		/**
		 * Keeps an answered interaction (or a background one as it starts); resolves once written. A failed write is
		 * logged (its id then reads as unknown), or with `strict` thrown.
		 */
		async keep(accountId: number, interaction: Obj, input: Obj[], previous?: string, strict = false): Promise<void> {
			const id = interaction.id
			if (typeof id !== 'string' || !id) return
			try {
				await store.db.orm.insert(interactions).values({ id, accountId, interaction, input, previousId: previous ?? null }).onConflictDoNothing()
			} catch (e) {
				store.log.warn('interaction not stored', { error: String(e), id })
				if (strict) throw e
			}
		},
		/** The account's kept interaction `id`. */
		async get(accountId: number, id: string): Promise<KeptInteraction | undefined> {
			const [r] = await store.db.orm.select().from(interactions).where(and(eq(interactions.accountId, accountId), eq(interactions.id, id)))
			if (!r) return undefined
			const events = r.events === null ? undefined : (json(r.events) as string[])
			return { id: r.id, interaction: json(r.interaction) as Obj, input: json(r.input) as Obj[], previous: r.previousId, ...(events && { events }), updatedAt: r.updatedAt }
		},
		/**
		 * Writes the end of a running background interaction (`interaction` with its final status), unless it is no
		 * longer running (cancelled meanwhile); `from: 'cancelled'` writes the steps of a cancelled one. Whether it was written.
		 */
		async finish(id: string, interaction: Obj, from: 'in_progress' | 'cancelled' = 'in_progress'): Promise<boolean> {
			const rows = await store.db.sql.query(
				`UPDATE interactions SET interaction = $2, updated_at = now() WHERE id = $1 AND interaction->>'status' = $3 RETURNING id`,
				[id, JSON.stringify(interaction), from],
			)
			return rows.length > 0
		},
		/** Keeps a background interaction's stream events (what `GET ?stream=true` replays once it ended). */
		async saveEvents(id: string, events: string[]): Promise<void> {
			await store.db.sql.query('UPDATE interactions SET events = $2 WHERE id = $1', [id, JSON.stringify(events)])
		},
		/** A running background interaction's heartbeat: touches its row, and gives its status (undefined once deleted). */
		async touch(id: string): Promise<string | undefined> {
			const [r] = await store.db.sql.query<{ status: string }>(`UPDATE interactions SET updated_at = now() WHERE id = $1 RETURNING interaction->>'status' AS status`, [id])
			return r?.status
		},
		/**
		 * Moves the account's running background interaction `id` to `status` (cancelled, or failed when its instance
		 * died), by compare-and-set: the interaction as written, or undefined when it was not running.
		 */
		async stop(accountId: number, id: string, status: 'cancelled' | 'failed', staleOnly = false): Promise<Obj | undefined> {
			const [r] = await store.db.sql.query<{ interaction: unknown }>(
				`UPDATE interactions SET interaction = jsonb_set(jsonb_set(interaction, '{status}', to_jsonb($3::text)), '{updated}', to_jsonb($4::text)), updated_at = now()
				 WHERE id = $1 AND account_id = $2 AND interaction->>'status' = 'in_progress'${staleOnly ? ` AND updated_at < now() - make_interval(secs => ${STALE_MS / 1000})` : ''}
				 RETURNING interaction`,
				[id, accountId, status, new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')],
			)
			return r && (json(r.interaction) as Obj)
		},
		/**
		 * The account's interaction `id` and the ones it continued, the first turn first; undefined when `id` is not kept.
		 * A chain whose start is gone (deleted, or longer than CHAIN_LIMIT) starts with a turn whose `previous` is set.
		 */
		async chain(accountId: number, id: string): Promise<KeptInteraction[] | undefined> {
			const rows = await store.db.sql.query<{ id: string; interaction: unknown; input: unknown; previous_id: string | null }>(CHAIN_SQL, [id, accountId, CHAIN_LIMIT])
			if (!rows.length) return undefined
			return rows.map((r) => ({ id: r.id, interaction: json(r.interaction) as Obj, input: json(r.input) as Obj[], previous: r.previous_id }))
		},
		/** Forgets the account's interaction `id`; whether there was one. */
		async delete(accountId: number, id: string): Promise<boolean> {
			const gone = await store.db.orm
				.delete(interactions)
				.where(and(eq(interactions.accountId, accountId), eq(interactions.id, id)))
				.returning({ id: interactions.id })
			return gone.length > 0
		},
	}
}

/** How long a kept interaction stays readable and continuable: as long as a stored response (responses/ownership.ts). */
export const INTERACTION_DAYS = 30

/**
 * Deletes the interactions kept before `days` ago, but for those a younger kept one continues (directly or through
 * older ones): a chain stays whole while its last turn is kept. Returns how many went. Any instance may run it.
 */
export const purgeInteractions = (db: Db, days = INTERACTION_DAYS, now = Date.now()): Promise<number> =>
	purgeKeepingChains(db, { table: 'interactions', key: 'id', keyOf: (id) => id }, new Date(now - days * 86_400_000))
