/**
 * Opens the database: embedded PGlite (no DATABASE_URL) or PostgreSQL through postgres.js. Both get the same schema
 * and migrations. Exposes Drizzle for ordinary queries and a small raw-SQL interface for the few hot paths
 * (ledger, key lookup) and for migrations. int8 is parsed to JS numbers on both drivers (money fits, see schema.ts).
 * @module
 */
import type { PGlite } from '@electric-sql/pglite'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type postgres from 'postgres'
import * as schema from './schema'

// Each driver (and its Drizzle adapter) is loaded only when used: a gateway on PostgreSQL never holds PGlite in
// memory, nor one on PGlite postgres.js (~10 MB each).

export type SqlTx = {
	query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>
	/** Runs one or more statements without parameters. */
	exec(text: string): Promise<void>
}

export type Sql = SqlTx & {
	transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>
	close(): Promise<void>
}

export type Orm = PgDatabase<PgQueryResultHKT, typeof schema>

export type Db = { kind: 'pglite' | 'postgres'; sql: Sql; orm: Orm; /** The PGlite instance (tests clone it). */ client?: PGlite }

const INT8 = 20

/**
 * @param url postgres:// URL, or undefined for PGlite
 * @param dataDir PGlite data directory; 'memory://' (or undefined) keeps it in memory (tests)
 * @param opts.worker PGlite in a thread of its own (src/db/pglite-worker.ts says why): what the server does. Tests
 * keep it in process, where they can clone it.
 * @param opts.warn where to report what the start changed or could not (DATA_DIR's permissions)
 * @throws DataDirInUse when another process has the data directory open (src/db/data-dir-lock.ts)
 */
export async function openDb(url: string | undefined, dataDir?: string, opts: { worker?: boolean; /** PostgreSQL connections (DATABASE_POOL_SIZE). */ poolSize?: number; warn?: (message: string) => void } = {}): Promise<Db> {
	if (url) return openPostgres(url, opts.poolSize ?? 10)
	const dir = dataDir && dataDir !== 'memory://' ? dataDir : undefined
	if (dir === undefined) return opts.worker ? openPgliteThread(undefined) : openPglite(undefined)
	const { prepareDataDir, restrictTree } = await import('./data-dir')
	const { lockDataDir } = await import('./data-dir-lock')
	const warning = prepareDataDir(dir)
	if (warning) opts.warn?.(warning)
	// Locked before the database is read or written, for as long as it is open: see data-dir-lock.ts.
	const lock = lockDataDir(dir)
	if (lock.warning) opts.warn?.(lock.warning)
	let db: Db
	try {
		db = opts.worker ? await openPgliteThread(dir) : await openPglite(dir)
		// PGlite writes its files readable and writable by everyone (data-dir.ts); the image's among them.
		restrictTree(dir)
	} catch (e) {
		lock.release()
		throw e
	}
	const close = db.sql.close
	db.sql.close = async () => {
		try {
			await close()
		} finally {
			lock.release()
		}
	}
	return db
}

async function openPgliteThread(dir: string | undefined): Promise<Db> {
	const { openPgliteWorker } = await import('./pglite-remote')
	// A fresh directory is initialised first (from the image, src/db/pglite-open.ts) in a thread that then ends: what
	// that touched is then not kept as the serving thread's memory for good (PGlite's memory never shrinks).
	if (dir !== undefined && !(await Bun.file(`${dir}/PG_VERSION`).exists())) await (await openPgliteWorker(dir)).close()
	const db = await wrapPglite(await openPgliteWorker(dir))
	// Not a PGlite instance: nothing may clone it.
	delete db.client
	return db
}

async function openPostgres(url: string, poolSize: number): Promise<Db> {
	const [{ default: postgres }, { drizzle: drizzlePostgres }] = await Promise.all([import('postgres'), import('drizzle-orm/postgres-js')])
	const client = postgres(url, {
		max: poolSize,
		onnotice: () => {},
		types: { int8: { to: INT8, from: [INT8], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } },
	})
	// Our texts with parameters are a fixed few (the ledger's calls above all), so each is prepared once per
	// connection: postgres.js's `unsafe` would otherwise describe it first on every call, a second round trip (and a
	// parse) per query. The client's own setting still wins: `?prepare=false` in DATABASE_URL turns it off, for
	// poolers that drop named statements.
	const wrap = (c: postgres.Sql | postgres.TransactionSql): SqlTx => ({
		query: async <T>(text: string, params: unknown[] = []) => (await c.unsafe(text, params as never[], { prepare: true })) as unknown as T[],
		exec: async (text: string) => {
			await c.unsafe(text)
		},
	})
	const sql: Sql = {
		...wrap(client),
		transaction: (fn) => client.begin((tx) => fn(wrap(tx))) as never,
		close: () => client.end({ timeout: 5 }),
	}
	await client`select 1`
	return { kind: 'postgres', sql, orm: drizzlePostgres({ client, schema }) as unknown as Orm }
}

async function openPglite(dataDir?: string): Promise<Db> {
	const { createPglite } = await import('./pglite-open')
	const client = await createPglite(dataDir)
	return wrapPglite(client)
}

export async function wrapPglite(client: PGlite): Promise<Db> {
	const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite')
	const wrap = (c: Pick<PGlite, 'query' | 'exec'>): SqlTx => ({
		query: async <T>(text: string, params: unknown[] = []) => (await c.query<T>(text, params)).rows,
		exec: async (text: string) => {
			await c.exec(text)
		},
	})
	const sql: Sql = {
		...wrap(client),
		transaction: (fn) => client.transaction((tx) => fn(wrap(tx))),
		close: () => client.close(),
	}
	return { kind: 'pglite', sql, orm: drizzlePglite({ client, schema }) as unknown as Orm, client }
}
