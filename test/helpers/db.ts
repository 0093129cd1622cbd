/**
 * A database per test file: with DATABASE_URL (CI), a fresh PostgreSQL database created from scratch and dropped
 * afterwards; without, an in-memory PGlite cloned from one migrated template (cloning is much faster than booting).
 */
import { PGlite } from '@electric-sql/pglite'
import postgres from 'postgres'
import { type Db, openDb } from '../../src/db/client'
import { migrate } from '../../src/db/migrate'
import { migrations } from '../../src/db/migrations.gen'
import { randomString } from '../../src/lib/ids'

export type TestDb = { db: Db; url?: string; drop(): Promise<void> }

let template: Promise<Db> | undefined

/** `migrations`: only these applied (a test upgrading a database that holds rows of an older schema). */
export async function createTestDb(opts: { migrations?: typeof migrations } = {}): Promise<TestDb> {
	const base = process.env.DATABASE_URL
	if (base) {
		const name = `sbt_${randomString(10).toLowerCase()}`
		const admin = postgres(base, { max: 1, onnotice: () => {} })
		await admin.unsafe(`CREATE DATABASE ${name}`)
		const u = new URL(base)
		u.pathname = `/${name}`
		const url = u.toString()
		const db = await openDb(url)
		await migrate(db.sql, opts.migrations)
		return {
			db,
			url,
			async drop() {
				await db.sql.close()
				await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
				await admin.end()
			},
		}
	}
	if (opts.migrations) {
		const db = await openDb(undefined)
		await migrate(db.sql, opts.migrations)
		return { db, drop: () => db.sql.close() }
	}
	template ??= (async () => {
		const t = await openDb(undefined)
		await migrate(t.sql)
		return t
	})()
	const db = await cloneDb(await template)
	return { db, drop: () => db.sql.close() }
}

/** A PGlite Db wrapper around a clone of the template's PGlite instance. */
async function cloneDb(t: Db): Promise<Db> {
	const pg = (t as Db & { client?: PGlite }).client
	if (!pg) return openDb(undefined)
	const { wrapPglite } = await import('../../src/db/client')
	return wrapPglite((await pg.clone()) as PGlite)
}
