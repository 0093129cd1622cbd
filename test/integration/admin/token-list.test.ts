/**
 * `GET /api/tokens` for an account with more keys than one page: the list says there are more (`next_cursor`) and
 * pages to the last key, and finds a key by name, by its masked key or by the whole key on the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let accountId: number
let oldest: { id: number; key: string; key_hint: string }
/** Keys inserted directly: 5,000 HTTP calls would take minutes. */
const BULK = 5_010

beforeAll(async () => {
	app = await startTestApp()
	accountId = (await app.admin('/api/accounts', { body: { name: 'many-keys', balance: 1 } })).body.id
	oldest = (await app.admin('/api/tokens', { body: { account_id: accountId, name: 'first-laptop' } })).body
	await app.svc.db.sql.query(
		`INSERT INTO api_tokens (account_id, name, key_hash, key_enc, key_hint)
		 SELECT $1, 'bulk-' || lpad(i::text, 5, '0'), md5(i::text), 'x', 'sk-bulk…' || lpad(i::text, 5, '0') FROM generate_series(1, ${BULK}) i`,
		[accountId],
	)
}, 120_000)
afterAll(() => app?.close())

type Listed = { data: Array<{ id: number; name: string; key_hint: string }>; next_cursor: string | null; total: number }
const list = async (q: string) => {
	const r = await app.admin(`/api/tokens?account_id=${accountId}${q}`)
	expect(r.status).toBe(200)
	return r.body as Listed
}

describe('GET /api/tokens past one page', () => {
	it('should say there are more and page to the last key', async () => {
		const first = await list('')
		expect(first.data.length).toBe(5_000)
		expect(first.total).toBe(BULK + 1)
		expect(first.next_cursor).not.toBeNull()
		const rest = await list(`&cursor=${first.next_cursor}`)
		expect(rest.data.length).toBe(BULK + 1 - 5_000)
		expect(rest.next_cursor).toBeNull()
		expect(rest.data.at(-1)!.id).toBe(oldest.id)
		expect(new Set([...first.data, ...rest.data].map((t) => t.id)).size).toBe(BULK + 1)

		const small = await list('&limit=2')
		expect(small.data.map((t) => t.name)).toEqual([`bulk-0${BULK}`, `bulk-0${BULK - 1}`])
		expect((await list(`&limit=2&cursor=${small.next_cursor}`)).data.map((t) => t.name)).toEqual([`bulk-0${BULK - 2}`, `bulk-0${BULK - 3}`])
		expect((await app.admin(`/api/tokens?account_id=${accountId}&cursor=abc`)).status).toBe(400)
	})

	it('should find a key beyond the first page by name, masked key or whole key', async () => {
		const byName = await list('&search=FIRST-lap')
		expect(byName.data.map((t) => t.id)).toEqual([oldest.id])
		expect(byName.total).toBe(1)
		expect((await list(`&search=${encodeURIComponent(oldest.key)}`)).data.map((t) => t.id)).toEqual([oldest.id])
		expect((await list(`&search=${oldest.key_hint.slice(-4)}`)).data.map((t) => t.id)).toContain(oldest.id)
		// LIKE's wildcards are plain characters here.
		expect((await list('&search=bulk_%25')).data).toEqual([])
		const paged = await list('&search=bulk-04&limit=600')
		expect(paged.total).toBe(1_000)
		expect(paged.data.length).toBe(600)
		expect((await list(`&search=bulk-04&limit=600&cursor=${paged.next_cursor}`)).data.length).toBe(400)
	})

	it('should list the keys named by id', async () => {
		const r = await list(`&ids=${oldest.id},${oldest.id + 7}`)
		expect(r.data.map((t) => t.name).sort()).toEqual(['bulk-00007', 'first-laptop'])
	})

	it('should name a deleted key only when asked to include deleted keys', async () => {
		const gone = (await app.admin('/api/tokens', { body: { account_id: accountId, name: 'old-phone' } })).body as { id: number }
		expect((await app.admin(`/api/tokens/${gone.id}`, { method: 'DELETE' })).status).toBe(200)
		expect((await list(`&ids=${gone.id}`)).data).toEqual([])
		const named = await list(`&ids=${gone.id},${oldest.id}&include_deleted=true`)
		expect(named.data.map((t) => [t.name, (t as { status?: string }).status])).toEqual([
			['old-phone', 'deleted'],
			['first-laptop', 'active'],
		])
		expect((await list('&search=old-phone')).data).toEqual([])
		expect((await app.admin(`/api/tokens?account_id=${accountId}&include_deleted=maybe`)).status).toBe(400)
	})
})
