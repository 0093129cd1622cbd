/**
 * Purging kept turns that form chains (each row names the turn it continues in `previous_id`): rows older than the
 * cutoff go, but for those a younger kept row continues, directly or through other old ones, so a chain stays whole
 * and readable while its last turn is kept. Converted Responses and Gemini interactions are kept this way.
 * @module
 */
import type { Db } from './client'

/** A table of chained turns: its key column, and how a `previous_id` value reads as that key. */
export type ChainTable = { table: 'converted_items' | 'interactions'; key: string; keyOf: (previous: string) => string }

/** Deletes `t`'s rows created before `cutoff` that no younger row continues; returns how many went. Any instance may run it. */
export async function purgeKeepingChains(db: Db, t: ChainTable, cutoff: Date): Promise<number> {
	const gone = await db.sql.query(
		`WITH RECURSIVE held(id) AS (
			SELECT c.previous_id FROM ${t.table} c
			JOIN ${t.table} p ON p.${t.key} = ${t.keyOf('c.previous_id')} AND p.created_at < $1
			WHERE c.previous_id IS NOT NULL AND c.created_at >= $1
			UNION
			SELECT c.previous_id FROM held JOIN ${t.table} c ON c.${t.key} = ${t.keyOf('held.id')} WHERE c.previous_id IS NOT NULL
		)
		DELETE FROM ${t.table} WHERE created_at < $1 AND ${t.key} NOT IN (SELECT ${t.keyOf('id')} FROM held) RETURNING ${t.key}`,
		[cutoff.toISOString()],
	)
	return gone.length
}
