/**
 * Applies the embedded drizzle migrations in order, once each. Serialised across instances by a Postgres
 * advisory lock held for the duration, so two servers starting against one database do not race; already-applied
 * tags are skipped, so restarts are no-ops.
 * @module
 */
import type { Sql } from './client'
import { migrations } from './migrations.gen'

/** Arbitrary constant: the advisory-lock key all Switchboard instances agree on. */
const LOCK_KEY = 727_001

/** `list`: the migrations to apply, all by default (a test stops part-way to upgrade a database holding older rows). */
export async function migrate(sql: Sql, list = migrations): Promise<string[]> {
	const applied: string[] = []
	await sql.transaction(async (tx) => {
		await tx.exec(`SELECT pg_advisory_xact_lock(${LOCK_KEY})`)
		await tx.exec(
			'CREATE TABLE IF NOT EXISTS switchboard_migrations (tag text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
		)
		const done = new Set((await tx.query<{ tag: string }>('SELECT tag FROM switchboard_migrations')).map((r) => r.tag))
		for (const m of list) {
			if (done.has(m.tag)) continue
			for (const stmt of m.sql.split('--> statement-breakpoint')) if (stmt.trim()) await tx.exec(stmt)
			await tx.query('INSERT INTO switchboard_migrations (tag) VALUES ($1)', [m.tag])
			applied.push(m.tag)
		}
	})
	return applied
}
