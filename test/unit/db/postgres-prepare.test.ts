/**
 * On PostgreSQL, our parameterised queries are prepared once per connection (src/db/client.ts), so the ledger's calls
 * take one round trip, not a describe and then an execute. `?prepare=false` in the URL, the escape the README gives
 * operators behind poolers that drop named statements, must still turn it off: postgres.js's client setting wins
 * over the query's, and this checks that it still does. PostgreSQL only: PGlite has no connections to prepare on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { openDb } from '../../../src/db/client'
import { type TestDb, createTestDb } from '../../helpers/db'

const QUERY = 'SELECT $1::int + 1 AS x'

describe.skipIf(!process.env.DATABASE_URL)('postgres prepared statements', () => {
	let t: TestDb
	beforeAll(async () => {
		t = await createTestDb()
	})
	afterAll(() => t.drop())

	/** Runs the query twice on one connection (a transaction holds one), then lists that connection's statements. */
	const preparedOn = async (url: string) => {
		const db = await openDb(url)
		try {
			return await db.sql.transaction(async (tx) => {
				expect(await tx.query<{ x: number }>(QUERY, [1])).toEqual([{ x: 2 }])
				expect(await tx.query<{ x: number }>(QUERY, [2])).toEqual([{ x: 3 }])
				return (await tx.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).map((r) => r.statement)
			})
		} finally {
			await db.sql.close()
		}
	}

	it('should prepare a parameterised query once per connection', async () => {
		const statements = await preparedOn(t.url!)
		expect(statements.filter((s) => s === QUERY)).toHaveLength(1)
	})

	it('should prepare nothing when the URL says prepare=false', async () => {
		const u = new URL(t.url!)
		u.searchParams.set('prepare', 'false')
		expect(await preparedOn(u.toString())).not.toContain(QUERY)
	})
})
