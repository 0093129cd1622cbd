/**
 * The chain of converted Response copies (src/modules/responses/converted-items.ts) on one instance: the turns it
 * answered are read back from memory, without a database read, and only a turn it does not hold is asked for (one
 * query from there on); writes handed over in one tick go in one INSERT.
 */
import { describe, expect, it } from 'bun:test'
import type { Db } from '../../../src/db/client'
import { memoryBus } from '../../../src/lib/bus'
import { silentLogger } from '../../../src/lib/log'
import { convertedItems } from '../../../src/modules/responses/converted-items'

/** A database that records what is asked of it: inserts (rows per statement) and queries, answering `rows` to a query. */
function fakeDb(rows: Record<string, unknown>[] = [], kind: Db['kind'] = 'pglite') {
	const inserts: number[] = []
	const queries: unknown[][] = []
	const db = {
		kind,
		orm: {
			insert: () => ({ values: (v: unknown[]) => ({ onConflictDoNothing: () => Promise.resolve(void inserts.push(v.length)) }) }),
			delete: () => ({ where: () => ({ returning: async () => [] }) }),
		},
		sql: {
			query: async (_text: string, params: unknown[]) => {
				queries.push(params)
				return rows
			},
		},
	} as unknown as Db
	return { db, inserts, queries }
}

const response = (id: string, text: string) => ({ id, object: 'response', output: [{ id: `msg_${id}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }] })
const own = (id: string, text: string) => [{ itemId: id, item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }]

describe('converted response chains on one instance', () => {
	it('should read back a chain this instance answered without a database read', async () => {
		const f = fakeDb()
		const items = convertedItems({ store: { db: f.db, log: silentLogger } })
		// An answer's items and its copy, handed over together: one INSERT of both.
		await Promise.all([items.remember(7, response('r1', 'a1').output), items.keepResponse(7, response('r1', 'a1'), own('u1', 'q1'))])
		expect(f.inserts).toEqual([2])
		await items.keepResponse(7, response('r2', 'a2'), own('u2', 'q2'), 'r1')
		await items.keepResponse(7, response('r3', 'a3'), own('u3', 'q3'), 'r2')
		const chain = await items.chain(7, 'r3')
		expect(chain!.map((k) => k.id)).toEqual(['r1', 'r2', 'r3'])
		expect(chain![0]!.previous).toBeNull()
		expect(f.queries).toHaveLength(0)
		// Another account never reads them, from memory or otherwise.
		expect(await items.chain(8, 'r3')).toBeUndefined()
	})

	it('should ask the database once, from the first turn it does not hold', async () => {
		const f = fakeDb([{ item_id: 'response:r1', item: response('r1', 'a1'), input: own('u1', 'q1'), previous_id: null, deleted: false }])
		const items = convertedItems({ store: { db: f.db, log: silentLogger } })
		await items.keepResponse(7, response('r2', 'a2'), own('u2', 'q2'), 'r1')
		const chain = await items.chain(7, 'r2')
		expect(chain!.map((k) => k.id)).toEqual(['r1', 'r2'])
		expect(f.queries).toEqual([['response:r1', 7, expect.any(Number)]])
	})

	it('should forget a copy deleted on another instance: through the bus, or after a minute without one', async () => {
		const bus = { ...memoryBus(), kind: 'redis' as const, subscribed: () => true }
		const a = fakeDb([], 'postgres')
		const here = convertedItems({ store: { db: a.db, log: silentLogger, bus } })
		const there = convertedItems({ store: { db: fakeDb([], 'postgres').db, log: silentLogger, bus } })
		await here.keepResponse(7, response('r1', 'a1'), own('u1', 'q1'))
		expect(await here.chain(7, 'r1')).toHaveLength(1)
		await there.forgetResponse(7, 'r1')
		expect(await here.chain(7, 'r1')).toBeUndefined()
		expect(a.queries).toHaveLength(1)

		// PostgreSQL without Redis: nothing would be heard, so memory serves the continued copy for a minute only.
		let t = 0
		const alone = fakeDb([], 'postgres')
		const detached = convertedItems({ store: { db: alone.db, log: silentLogger }, now: () => t })
		await detached.keepResponse(7, response('r2', 'a2'), own('u2', 'q2'))
		t = 59_000
		expect(await detached.chain(7, 'r2')).toHaveLength(1)
		expect(alone.queries).toHaveLength(0)
		t = 61_000
		expect(await detached.chain(7, 'r2')).toBeUndefined()
		expect(alone.queries).toHaveLength(1)
	})
})
