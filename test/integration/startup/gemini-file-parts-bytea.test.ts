/**
 * Migration 0019 turns the kept bytes of Gemini batch input files (`gemini_file_parts.data`) from base64 text into
 * `bytea`: a database upgraded with parts already kept reads them back as the same bytes, and new parts are kept as bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrate } from '../../../src/db/migrate'
import { migrations } from '../../../src/db/migrations.gen'
import { keepPart, keptText } from '../../../src/modules/gemini-files/parts'
import type { Services } from '../../../src/services'
import { createTestDb, type TestDb } from '../../helpers/db'

let tdb: TestDb
const before = migrations.slice(0, migrations.findIndex((m) => m.tag.startsWith('0019_')))
const line = (n: number) => `${JSON.stringify({ key: `k${n}`, request: { contents: [{ parts: [{ text: `héllo ${n} ✓` }] }] } })}\n`

beforeAll(async () => {
	tdb = await createTestDb({ migrations: before })
}, 60_000)
afterAll(() => tdb?.drop())

const task = (id: string) =>
	tdb.db.sql.query("INSERT INTO tasks (id, kind, account_id, model, request_id, status) VALUES ($1, 'gemini_file', 1, '', $1, 'completed')", [id])

describe('migration 0019 (gemini_file_parts as bytea)', () => {
	it('should keep the bytes of parts stored as base64 before it', async () => {
		expect(before.at(-1)!.tag).toBe('0018_gemini_file_parts')
		await task('gemini_file_old')
		const first = Buffer.from(line(1))
		const second = Buffer.from(line(2))
		for (const [offset, b] of [[0, first], [first.byteLength, second]] as const)
			await tdb.db.sql.query('INSERT INTO gemini_file_parts (file_id, "offset", data) VALUES ($1, $2, $3)', ['gemini_file_old', offset, b.toString('base64')])

		// 0019 and the migrations after it (each later one its own change).
		expect(await migrate(tdb.db.sql)).toEqual(migrations.slice(before.length).map((m) => m.tag))
		expect(migrations[before.length]!.tag).toBe('0019_gemini_file_parts_bytea')
		const [col] = await tdb.db.sql.query<{ data_type: string }>("SELECT data_type FROM information_schema.columns WHERE table_name = 'gemini_file_parts' AND column_name = 'data'")
		expect(col!.data_type).toBe('bytea')
		const [len] = await tdb.db.sql.query<{ n: number }>("SELECT octet_length(data)::int AS n FROM gemini_file_parts WHERE file_id = 'gemini_file_old' AND \"offset\" = 0")
		expect(len!.n).toBe(first.byteLength)
		const svc = { db: tdb.db } as Services
		expect(await keptText(svc, 'gemini_file_old', first.byteLength + second.byteLength)).toBe(line(1) + line(2))
	})

	it('should keep new parts as their bytes, a part sent again replacing the first', async () => {
		const svc = { db: tdb.db } as Services
		await task('gemini_file_new')
		const a = new TextEncoder().encode(line(3))
		// A chunk cut inside a multi-byte character: each part keeps bytes, not text.
		const cut = a.byteLength - 4
		await keepPart(svc, 'gemini_file_new', 0, a.subarray(0, cut))
		await keepPart(svc, 'gemini_file_new', cut, new Uint8Array([0, 0, 0, 0]))
		await keepPart(svc, 'gemini_file_new', cut, a.subarray(cut))
		expect(await keptText(svc, 'gemini_file_new', a.byteLength)).toBe(line(3))
		const [len] = await tdb.db.sql.query<{ n: number }>("SELECT sum(octet_length(data))::int AS n FROM gemini_file_parts WHERE file_id = 'gemini_file_new'")
		expect(len!.n).toBe(a.byteLength)
	})
})
