/**
 * `GET /api/accounts` with more accounts than one page (1,000): the list says there are more (`next_cursor`), pages to
 * the oldest (the administrator's own, #1), and finds an account by name or id on the server. A user still sees only
 * their own account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from '../../unit/console/console-app'

let app: ConsoleApp
/** Accounts inserted directly: 1,000 HTTP calls would take long. */
const BULK = 1_050
let first: { id: number; name: string }
let bob: number

beforeAll(async () => {
	app = await startConsoleApp()
	first = (await app.admin('/api/accounts/1')).body
	bob = (await app.admin('/api/users', { body: { username: 'bob', password: 'bob-password', account_name: 'Bobs Shop' } })).body.account_id
	await app.svc.db.sql.query(`INSERT INTO accounts (name) SELECT 'bulk-' || lpad(i::text, 5, '0') FROM generate_series(1, ${BULK}) i`)
}, 120_000)
afterAll(() => app?.close())

type Listed = { data: Array<{ id: number; name: string; balance: number }>; next_cursor: string | null; total: number }
const list = async (q = '') => {
	const r = await app.admin(`/api/accounts${q}`)
	expect(r.status).toBe(200)
	return r.body as Listed
}

describe('GET /api/accounts past one page', () => {
	it('should say there are more and page to the oldest account', async () => {
		const all = BULK + 2
		const page1 = await list()
		expect(page1.data.length).toBe(1_000)
		expect(page1.total).toBe(all)
		expect(page1.next_cursor).not.toBeNull()
		const rest = await list(`?cursor=${page1.next_cursor}`)
		expect(rest.data.length).toBe(all - 1_000)
		expect(rest.next_cursor).toBeNull()
		expect(rest.data.at(-1)).toMatchObject({ id: 1, name: first.name })
		expect(new Set([...page1.data, ...rest.data].map((a) => a.id)).size).toBe(all)

		const small = await list('?limit=2')
		expect(small.data.map((a) => a.name)).toEqual([`bulk-0${BULK}`, `bulk-0${BULK - 1}`])
		expect((await list(`?limit=2&cursor=${small.next_cursor}`)).data.map((a) => a.name)).toEqual([`bulk-0${BULK - 2}`, `bulk-0${BULK - 3}`])
		for (const bad of ['?cursor=abc', '?limit=0', '?limit=1001', '?limit=1.5']) expect((await app.admin(`/api/accounts${bad}`)).status).toBe(400)
	})

	it('should find an account beyond the first page by name or by id', async () => {
		const byName = await list('?search=bOBS%20shop')
		expect(byName.data.map((a) => a.id)).toEqual([bob])
		expect(byName.total).toBe(1)
		expect((await list('?search=1')).data.map((a) => a.id)).toContain(1)
		expect((await list('?search=%231')).data.map((a) => a.id)).toEqual([1])
		expect((await list(`?search=${bob}`)).data.map((a) => a.id)).toContain(bob)
		// LIKE's wildcards are plain characters here.
		expect((await list('?search=bulk_%25')).data).toEqual([])
		const paged = await list('?search=bulk-00&limit=600')
		expect(paged.total).toBe(999)
		expect(paged.data.length).toBe(600)
		const next = await list(`?search=bulk-00&limit=600&cursor=${paged.next_cursor}`)
		expect(next.data.length).toBe(399)
		expect(next.next_cursor).toBeNull()
	})

	it("should show a user only their own account, searched or not", async () => {
		const b = await app.signIn('bob', 'bob-password')
		const own = await b.call('/api/accounts')
		expect(own.status).toBe(200)
		expect(own.body).toMatchObject({ data: [{ id: bob, name: 'Bobs Shop' }], next_cursor: null, total: 1 })
		expect((await b.call('/api/accounts?search=bulk')).body).toMatchObject({ data: [], next_cursor: null, total: 0 })
		expect((await b.call('/api/accounts?search=%231')).body.data).toEqual([])
		const admin = await app.signIn('admin', ADMIN_PASSWORD)
		expect((await admin.call('/api/accounts?search=%231')).body.data.map((a: { id: number }) => a.id)).toEqual([1])
	})
})
