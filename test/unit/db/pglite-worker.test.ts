import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq, sql as q } from 'drizzle-orm'
import { type Db, openDb } from '../../../src/db/client'
import { migrate } from '../../../src/db/migrate'
import { accounts } from '../../../src/db/schema'

// The server's PGlite runs in a worker thread (src/db/pglite-worker.ts); everything the gateway does with its database
// goes through messages. One data directory for the whole file, reopened at the end.
const dir = mkdtempSync(join(tmpdir(), 'sb-pglite-worker-'))
let db: Db

afterAll(async () => {
	await db?.sql.close()
	rmSync(dir, { recursive: true, force: true })
})

describe('PGlite in a worker', () => {
	it('should open a fresh data directory and apply the migrations', async () => {
		db = await openDb(undefined, dir, { worker: true })
		expect(db.kind).toBe('pglite')
		expect(db.client).toBeUndefined()
		expect((await migrate(db.sql)).length).toBeGreaterThan(0)
		expect(await migrate(db.sql)).toEqual([])
	}, 60_000)

	it('should read and write through Drizzle with the types the in-process driver gives', async () => {
		const [a] = await db.orm.insert(accounts).values({ name: 'w1', balance: 1_500_000 }).returning()
		expect(a!.balance).toBe(1_500_000)
		expect(a!.createdAt).toBeInstanceOf(Date)
		const [row] = await db.orm.select().from(accounts).where(eq(accounts.id, a!.id))
		expect(row).toEqual(a!)
		// int8 as a number; a timestamp Drizzle reads raw stays text (its parsers cross as the list of types).
		const r = (await db.orm.execute(q`select 9007199254740991::int8 as n, '2026-01-02 03:04:05+00'::timestamptz as t`)) as unknown as { rows: unknown[] }
		expect(r.rows).toEqual([{ n: 9007199254740991, t: '2026-01-02 03:04:05+00' }])
	})

	it('should run raw queries with parameters, and exec statements', async () => {
		await db.sql.exec('create table if not exists worker_t (id int primary key, note text)')
		await db.sql.query('insert into worker_t values ($1, $2)', [1, 'one'])
		expect(await db.sql.query('select id, note from worker_t where id = $1', [1])).toEqual([{ id: 1, note: 'one' }])
	})

	it('should keep PostgreSQL error fields (a unique violation is 23505)', async () => {
		const e = (await db.sql.query('insert into worker_t values (1, $1)', ['again']).catch((x: unknown) => x)) as Error & { code?: string; constraint?: string }
		expect(e).toBeInstanceOf(Error)
		expect(e.code).toBe('23505')
		expect(e.constraint).toBe('worker_t_pkey')
		expect(e.message).toContain('duplicate key')
	})

	it('should commit a transaction, roll back one that throws, and make statements from outside wait for an open one', async () => {
		const order: string[] = []
		let outside: Promise<unknown> | undefined
		await db.sql.transaction(async (tx) => {
			await tx.query('insert into worker_t values (2, $1)', ['two'])
			// Issued while the transaction is open: it runs after the commit and sees the row.
			outside = db.sql.query<{ n: number }>('select count(*)::int as n from worker_t').then((r) => {
				order.push('outside')
				return r[0]!.n
			})
			await Bun.sleep(20)
			await tx.query('insert into worker_t values (3, $1)', ['three'])
			order.push('commit')
		})
		expect(await outside).toBe(3)
		expect(order).toEqual(['commit', 'outside'])

		const failed = await db.sql
			.transaction(async (tx) => {
				await tx.query('insert into worker_t values (4, $1)', ['four'])
				throw new Error('changed my mind')
			})
			.catch((e: Error) => e.message)
		expect(failed).toBe('changed my mind')
		expect(await db.sql.query('select id from worker_t order by id')).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }])
	})

	it('should find the data again after closing and reopening the directory', async () => {
		await db.sql.close()
		db = await openDb(undefined, dir, { worker: true })
		expect(await migrate(db.sql)).toEqual([])
		expect(await db.sql.query('select note from worker_t order by id')).toEqual([{ note: 'one' }, { note: 'two' }, { note: 'three' }])
		expect((await db.orm.select().from(accounts).where(eq(accounts.name, 'w1'))).map((a) => a.balance)).toEqual([1_500_000])
	}, 60_000)
})
