import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_PASSWORD, type Browser, type ConsoleApp, startConsoleApp } from './console-app'

let app: ConsoleApp
let admin: Browser

beforeAll(async () => {
	app = await startConsoleApp()
	admin = await app.signIn('admin', ADMIN_PASSWORD)
}, 120_000)
afterAll(() => app.close())

describe('console users', () => {
	it('should create a user in a new account with a starting balance, username lower-cased', async () => {
		const r = await admin.call('/api/users', { body: { username: 'Carol', password: 'carol-password', account_name: 'Carol Inc', balance: 2.5 } })
		expect(r.status).toBe(201)
		expect(r.body).toMatchObject({ username: 'carol', account_name: 'Carol Inc', is_admin: false, status: 'active' })
		expect(await app.balance(r.body.account_id)).toBe(2.5)
		const carol = await app.signIn('CAROL', 'carol-password')
		expect((await carol.call('/api/session')).body.account.balance).toBe(2.5)
	})

	it('should create a user in an existing account', async () => {
		const acc = await app.admin('/api/accounts', { body: { name: 'shared' } })
		const r = await admin.call('/api/users', { body: { username: 'dave', password: 'dave-password', account_id: acc.body.id } })
		expect(r.status).toBe(201)
		expect(r.body.account_id).toBe(acc.body.id)
	})

	it('should refuse a taken username with 409', async () => {
		const r = await admin.call('/api/users', { body: { username: 'CAROL', password: 'another-pass' } })
		expect(r.status).toBe(409)
		expect(r.body.error.message).toContain('taken')
	})

	it('should refuse a short password and a bad username with readable 400s', async () => {
		const short = await admin.call('/api/users', { body: { username: 'erin', password: 'short' } })
		expect(short.status).toBe(400)
		expect(short.body.error.message).toContain('password')
		expect((await admin.call('/api/users', { body: { username: 'has space', password: 'long-enough' } })).status).toBe(400)
	})

	it('should never return password hashes', async () => {
		const list = await admin.call('/api/users')
		expect(JSON.stringify(list.body)).not.toContain('argon2')
		expect(list.body.data.map((u: { username: string }) => u.username)).toEqual(['admin', 'carol', 'dave'])
	})

	it('should store passwords hashed with argon2id', async () => {
		const [row] = await app.svc.db.sql.query<{ password_hash: string }>(`SELECT password_hash FROM users WHERE username = 'carol'`)
		// OWASP's minimum (19 MiB, 2 passes): Bun's default 64 MiB put +64 MB on the server's RSS at every sign-in.
		expect(row!.password_hash).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$')
	})

	it('should still sign in a user whose hash was made with other argon2 parameters', async () => {
		await admin.call('/api/users', { body: { username: 'olga', password: 'first-password' } })
		const old = await Bun.password.hash('olga-old-password') // Bun's default: m=65536
		await app.svc.db.sql.query(`UPDATE users SET password_hash = $1 WHERE username = 'olga'`, [old])
		const olga = await app.signIn('olga', 'olga-old-password')
		expect((await olga.call('/api/tokens')).status).toBe(200)
	})

	it('should sign a user out everywhere when an administrator disables them', async () => {
		const u = await admin.call('/api/users', { body: { username: 'frank', password: 'frank-password' } })
		const frank = await app.signIn('frank', 'frank-password')
		expect((await frank.call('/api/tokens')).status).toBe(200)
		const r = await admin.call(`/api/users/${u.body.id}`, { method: 'PATCH', body: { status: 'disabled' } })
		expect(r.body.status).toBe('disabled')
		expect((await frank.call('/api/tokens')).status).toBe(401)
		expect((await app.post('/api/session', { username: 'frank', password: 'frank-password' })).status).toBe(401)
	})

	it('should not let an administrator demote, disable or delete themselves', async () => {
		const me = (await admin.call('/api/session')).body.user
		expect((await admin.call(`/api/users/${me.id}`, { method: 'PATCH', body: { is_admin: false } })).status).toBe(400)
		expect((await admin.call(`/api/users/${me.id}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(400)
		expect((await admin.call(`/api/users/${me.id}`, { method: 'DELETE' })).status).toBe(400)
	})

	it('should protect the last active administrator from the ADMIN_KEY path too', async () => {
		const me = (await admin.call('/api/session')).body.user
		const r = await app.admin(`/api/users/${me.id}`, { method: 'PATCH', body: { is_admin: false } })
		expect(r.status).toBe(400)
		expect(r.body.error.message).toContain('last active administrator')
	})

	it('should reset a password: the old one stops working and sessions end', async () => {
		const u = await admin.call('/api/users', { body: { username: 'gina', password: 'gina-password' } })
		const gina = await app.signIn('gina', 'gina-password')
		await admin.call(`/api/users/${u.body.id}`, { method: 'PATCH', body: { password: 'gina-new-password' } })
		expect((await gina.call('/api/tokens')).status).toBe(401)
		expect((await app.post('/api/session', { username: 'gina', password: 'gina-password' })).status).toBe(401)
		await app.signIn('gina', 'gina-new-password')
	})

	it('should delete a user but keep the account', async () => {
		const u = await admin.call('/api/users', { body: { username: 'hank', password: 'hank-password' } })
		const r = await admin.call(`/api/users/${u.body.id}`, { method: 'DELETE' })
		expect(r.body).toEqual({ id: u.body.id, deleted: true })
		expect((await admin.call(`/api/users/${u.body.id}`)).status).toBe(404)
		expect((await app.admin(`/api/accounts/${u.body.account_id}`)).status).toBe(200)
	})

	it('should let a user change their own password, keeping this session and ending the others', async () => {
		await admin.call('/api/users', { body: { username: 'ivy', password: 'ivy-password' } })
		const here = await app.signIn('ivy', 'ivy-password')
		const elsewhere = await app.signIn('ivy', 'ivy-password')
		const wrong = await here.call('/api/users/me/password', { body: { current_password: 'nope', new_password: 'ivy-new-password' } })
		expect(wrong.status).toBe(400)
		expect(wrong.body.error.message).toBe('The current password is wrong')
		const ok = await here.call('/api/users/me/password', { body: { current_password: 'ivy-password', new_password: 'ivy-new-password' } })
		expect(ok.body).toEqual({ changed: true })
		expect((await here.call('/api/tokens')).status).toBe(200)
		expect((await elsewhere.call('/api/tokens')).status).toBe(401)
		await app.signIn('ivy', 'ivy-new-password')
	})

	it('should refuse a password change through ADMIN_KEY (it has no password)', async () => {
		const r = await app.admin('/api/users/me/password', { body: { current_password: 'x', new_password: 'long-enough' } })
		expect(r.status).toBe(400)
	})
})
