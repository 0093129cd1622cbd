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
import type { Logger } from '../../lib/log'

/** The longest chain of continuations read back (a turn beyond it cannot be continued: send the whole input). */
export const CHAIN_LIMIT = 5_000

type Obj = Record<string, unknown>

/** A kept interaction: the resource shown (its output steps), its own input steps, and what it continued. */
export type KeptInteraction = { id: string; interaction: Obj; input: Obj[]; previous: string | null }

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
		/** Keeps an answered interaction; resolves once written (a failed write is logged: its id then reads as unknown). */
		async keep(accountId: number, interaction: Obj, input: Obj[], previous?: string): Promise<void> {
			const id = interaction.id
			if (typeof id !== 'string' || !id) return
			try {
				await store.db.orm.insert(interactions).values({ id, accountId, interaction, input, previousId: previous ?? null }).onConflictDoNothing()
			} catch (e) {
				store.log.warn('interaction not stored', { error: String(e), id })
			}
		},
		/** The account's kept interaction `id`. */
		async get(accountId: number, id: string): Promise<KeptInteraction | undefined> {
			const [r] = await store.db.orm.select().from(interactions).where(and(eq(interactions.accountId, accountId), eq(interactions.id, id)))
			return r && { id: r.id, interaction: json(r.interaction) as Obj, input: json(r.input) as Obj[], previous: r.previousId }
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
export async function purgeInteractions(db: Db, days = INTERACTION_DAYS, now = Date.now()): Promise<number> {
	const gone = await db.sql.query(
		`WITH RECURSIVE held(id) AS (
			SELECT i.previous_id FROM interactions i
			JOIN interactions p ON p.id = i.previous_id AND p.created_at < $1
			WHERE i.previous_id IS NOT NULL AND i.created_at >= $1
			UNION
			SELECT i.previous_id FROM held JOIN interactions i ON i.id = held.id WHERE i.previous_id IS NOT NULL
		)
		DELETE FROM interactions WHERE created_at < $1 AND id NOT IN (SELECT id FROM held) RETURNING id`,
		[new Date(now - days * 86_400_000).toISOString()],
	)
	return gone.length
}
