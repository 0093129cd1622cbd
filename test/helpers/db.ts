/**
 * A database per test file: with DATABASE_URL (CI), a fresh PostgreSQL database copied from a migrated template and
 * dropped afterwards; without, an in-memory PGlite cloned from one migrated template (cloning is much faster than
 * booting). Copying the template costs ~0.2 s where creating and migrating cost ~0.8 s, for each of ~240 files; the
 * copy the next file takes is made while this one runs (a spare), and a file's database is dropped while the next one
 * runs, so a file waits for neither.
 */
import { PGlite } from '@electric-sql/pglite'
import { hostname } from 'node:os'
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
		const admin = postgres(base, { max: 1, onnotice: () => {} })
		let name = ownName()
		if (opts.migrations) await admin.unsafe(`CREATE DATABASE ${name}`)
		else name = await takeSpare(base)
		const url = dbUrl(base, name)
		const db = await openDb(url)
		if (opts.migrations) await migrate(db.sql, opts.migrations)
		return {
			db,
			url,
			async drop() {
				await db.sql.close()
				// Dropped while the next file runs (a drop waits for a checkpoint); one the process ends before, the next run sweeps.
				void admin
					.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
					.catch(() => {})
					.finally(() => admin.end())
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

/**
 * The test files of a process run one after another in one process (bun test; under `--parallel` only with
 * `--no-isolate`, as `bun run test` runs them), sharing this module: each takes the copy made while the one before
 * ran, and starts the next. Databases are named by host and process, so a later run
 * drops those a finished or killed process left (the last spare, a drop not done yet) and never another live process's.
 */
let spare: Promise<string> | undefined
const OWN_PREFIX = `sbt_${new Bun.CryptoHasher('sha256').update(hostname()).digest('hex').slice(0, 6)}_`
const ownName = () => `${OWN_PREFIX}${process.pid}_${randomString(8).toLowerCase()}`

async function takeSpare(base: string): Promise<string> {
	const taken = spare ?? (sweepLeftovers(base), makeSpare(base))
	spare = makeSpare(base)
	spare.catch(() => {}) // a spare that could not be made: the next file makes its own, and says why
	return taken.catch(() => makeSpare(base))
}

async function makeSpare(base: string): Promise<string> {
	const name = ownName()
	const admin = postgres(base, { max: 1, onnotice: () => {} })
	try {
		await copyTemplate(admin, base, name)
	} finally {
		await admin.end()
	}
	return name
}

/** Drops this host's databases whose process is gone (another live process's are its own). */
async function sweepLeftovers(base: string): Promise<void> {
	const admin = postgres(base, { max: 1, onnotice: () => {} })
	try {
		for (const { datname } of await admin.unsafe<{ datname: string }[]>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [OWN_PREFIX])) {
			const pid = Number(datname.slice(OWN_PREFIX.length).split('_')[0])
			if (pid !== process.pid && !alive(pid)) await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
		}
	} catch {
		// Tidying only: a database left over costs disk, not correctness.
	} finally {
		await admin.end()
	}
}

const alive = (pid: number): boolean => {
	try {
		process.kill(pid, 0)
		return true
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === 'EPERM'
	}
}

const dbUrl = (base: string, name: string): string => {
	const u = new URL(base)
	u.pathname = `/${name}`
	return u.toString()
}

/**
 * Creates `name` as a copy of the database every migration has run on, made once per migration set (named by a hash
 * of their text, so a changed migration gets a new one) and kept on the server for later runs. Test processes running
 * at once take turns under an advisory lock; the template is built under a temporary name and renamed when whole, so a
 * process killed while building leaves no half-migrated template behind. Nothing may be connected to a template while
 * it is copied: only its builder ever connects, and closes before the rename.
 */
async function copyTemplate(admin: postgres.Sql, base: string, name: string): Promise<void> {
	const template = `sbt_tpl_${new Bun.CryptoHasher('sha256').update(JSON.stringify(migrations)).digest('hex').slice(0, 16)}`
	// A session lock (CREATE DATABASE cannot run in a transaction); `admin` has one connection, so it holds the lock.
	await admin.unsafe(`SELECT pg_advisory_lock(hashtext('switchboard test template'))`)
	try {
		const [found] = await admin.unsafe('SELECT 1 FROM pg_database WHERE datname = $1', [template])
		if (!found) {
			const building = `${template}_${randomString(6).toLowerCase()}`
			await admin.unsafe(`CREATE DATABASE ${building}`)
			const db = await openDb(dbUrl(base, building))
			try {
				await migrate(db.sql)
			} finally {
				await db.sql.close()
			}
			await admin.unsafe(`ALTER DATABASE ${building} RENAME TO ${template}`)
		}
	} finally {
		await admin.unsafe(`SELECT pg_advisory_unlock(hashtext('switchboard test template'))`)
	}
	// Copied as files, not through shared buffers (WAL_LOG): the checkpoint every DROP DATABASE waits for then has no
	// dirty pages of the spare, made meanwhile, to write.
	await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY FILE_COPY`)
}
