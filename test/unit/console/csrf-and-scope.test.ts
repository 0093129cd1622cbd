import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_KEY } from '../../helpers/app'
import { ADMIN_PASSWORD, type Browser, type ConsoleApp, startConsoleApp } from './console-app'

let app: ConsoleApp
let admin: Browser
let alice: Browser
let bob: Browser
let aliceAccount: number
let bobAccount: number

beforeAll(async () => {
	app = await startConsoleApp()
	admin = await app.signIn('admin', ADMIN_PASSWORD)
	const a = await admin.call('/api/users', { body: { username: 'alice', password: 'alice-password', balance: 5 } })
	const b = await admin.call('/api/users', { body: { username: 'bob', password: 'bob-password-1' } })
	aliceAccount = a.body.account_id
	bobAccount = b.body.account_id
	alice = await app.signIn('alice', 'alice-password')
	bob = await app.signIn('bob', 'bob-password-1')
}, 120_000)
afterAll(() => app.close())

describe('console CSRF protection', () => {
	it('should refuse a cookie-authenticated state change without x-csrf-token', async () => {
		const r = await alice.call('/api/tokens', { body: { account_id: aliceAccount, name: 'x' }, csrf: false })
		expect(r.status).toBe(403)
		expect(r.body.error.code).toBe('csrf_failed')
	})

	it('should refuse a wrong CSRF token', async () => {
		const r = await alice.call('/api/tokens', { body: { account_id: aliceAccount, name: 'x' }, csrf: false, headers: { 'x-csrf-token': bob.csrf } })
		expect(r.status).toBe(403)
	})

	it('should accept the state change with the session’s token', async () => {
		const r = await alice.call('/api/tokens', { body: { account_id: aliceAccount, name: 'alice-key' } })
		expect(r.status).toBe(201)
		expect(r.body.key).toMatch(/^sk-/)
	})

	it('should need no CSRF token for reads', async () => {
		expect((await alice.call('/api/tokens')).status).toBe(200)
	})

	it('should leave the ADMIN_KEY bearer path unaffected (no cookie, no CSRF token)', async () => {
		const r = await app.admin('/api/accounts', { body: { name: 'via-bearer' } })
		expect(r.status).toBe(201)
		expect(ADMIN_KEY).toBeTruthy()
	})
})

describe('console account scope', () => {
	let bobToken: number

	beforeAll(async () => {
		bobToken = (await bob.call('/api/tokens', { body: { account_id: bobAccount, name: 'bob-secret' } })).body.id
	})

	it('should list only the user’s own tokens, whatever account_id is asked for', async () => {
		const own = await alice.call('/api/tokens')
		expect(own.body.data.map((t: { name: string }) => t.name)).toEqual(['alice-key'])
		const other = await alice.call(`/api/tokens?account_id=${bobAccount}`)
		expect(other.body.data.map((t: { name: string }) => t.name)).toEqual(['alice-key'])
	})

	it('should answer 404 for another account’s token, its key and its deletion', async () => {
		expect((await alice.call(`/api/tokens/${bobToken}`)).status).toBe(404)
		expect((await alice.call(`/api/tokens/${bobToken}/key`)).status).toBe(404)
		expect((await alice.call(`/api/tokens/${bobToken}`, { method: 'DELETE' })).status).toBe(404)
		expect((await bob.call(`/api/tokens/${bobToken}`)).status).toBe(200)
	})

	it('should refuse to create a token in another account', async () => {
		expect((await alice.call('/api/tokens', { body: { account_id: bobAccount, name: 'sneaky' } })).status).toBe(404)
	})

	it('should show a user only their own account and refuse crediting', async () => {
		const list = await alice.call('/api/accounts')
		expect(list.body.data.map((a: { id: number }) => a.id)).toEqual([aliceAccount])
		expect((await alice.call(`/api/accounts/${bobAccount}`)).status).toBe(404)
		expect((await alice.call(`/api/accounts/${aliceAccount}/credit`, { body: { amount: 100 } })).status).toBe(403)
	})

	it('should keep users, settings and channels for administrators', async () => {
		expect((await alice.call('/api/users')).status).toBe(403)
		expect((await alice.call('/api/users', { body: { username: 'mallory', password: 'mallory-pass' } })).status).toBe(403)
		expect((await alice.call('/api/settings')).status).toBe(403)
		expect((await alice.call('/api/settings', { method: 'PATCH', body: { signup_enabled: true } })).status).toBe(403)
		expect((await alice.call('/api/channels')).status).toBe(403)
	})

	it('should let an administrator see every account’s tokens', async () => {
		const all = await admin.call('/api/tokens')
		const names = all.body.data.map((t: { name: string }) => t.name)
		expect(names).toContain('alice-key')
		expect(names).toContain('bob-secret')
	})

	it('should pin the spend chart to the user’s account whatever account_id is asked for', async () => {
		const insert = `INSERT INTO usage_logs (request_id, account_id, model, endpoint, status, cost, input_tokens, output_tokens) VALUES ($1, $2, 'm', '/v1/chat/completions', 200, $3, 10, 5)`
		await app.svc.db.sql.query(insert, ['r-alice', aliceAccount, 1_000_000])
		await app.svc.db.sql.query(insert, ['r-bob', bobAccount, 7_000_000])
		const r = await alice.call(`/api/console/spend?account_id=${bobAccount}`)
		expect(r.status).toBe(200)
		expect(r.body.data.reduce((s: number, d: { cost: number }) => s + d.cost, 0)).toBe(1)
		const all = await admin.call('/api/console/spend')
		expect(all.body.data.reduce((s: number, d: { cost: number }) => s + d.cost, 0)).toBe(8)
	})
})
