import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { bootstrapAdmin } from '../../../src/modules/console'
import { type TestApp, startTestApp } from '../../helpers/app'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from './console-app'

describe('bootstrapAdmin', () => {
	let app: TestApp
	beforeAll(async () => {
		app = await startTestApp()
	}, 120_000)
	afterAll(() => app.close())

	it('should create the administrator once with a generated password printed once', async () => {
		const printed: string[] = []
		const first = await bootstrapAdmin(app.svc, (l) => printed.push(l))
		expect(first.created).toBe(true)
		if (!first.created) return
		expect(first.username).toBe('admin')
		expect(first.password).toMatch(/^[A-Za-z0-9]{20}$/)
		expect(printed.join('\n')).toContain(first.password!)
		const second = await bootstrapAdmin(app.svc, (l) => printed.push(l))
		expect(second).toEqual({ created: false })
		expect(printed).toHaveLength(1)
		const res = await fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: first.password }) })
		expect(res.status).toBe(200)
		const [acc] = await app.svc.db.sql.query<{ name: string }>('SELECT a.name FROM accounts a JOIN users u ON u.account_id = a.id')
		expect(acc!.name).toBe('admin')
	})
})

describe('bootstrapAdmin with ADMIN_PASSWORD', () => {
	let app: TestApp
	beforeAll(async () => {
		app = await startTestApp({ env: { ADMIN_PASSWORD: 'from-the-env-1' } })
	}, 120_000)
	afterAll(() => app.close())

	it('should use ADMIN_PASSWORD and print nothing', async () => {
		const printed: string[] = []
		const r = await bootstrapAdmin(app.svc, (l) => printed.push(l))
		expect(r).toEqual({ created: true, username: 'admin' })
		expect(printed).toHaveLength(0)
		const [row] = await app.svc.db.sql.query<{ password_hash: string }>('SELECT password_hash FROM users')
		expect(row!.password_hash).not.toContain('from-the-env-1')
	})
})

describe('self sign-up', () => {
	let app: ConsoleApp
	beforeAll(async () => {
		app = await startConsoleApp()
	}, 120_000)
	afterAll(() => app.close())

	it('should be closed by default', async () => {
		const r = await app.post('/api/signup', { username: 'newbie', password: 'newbie-pass' })
		expect(r.status).toBe(403)
		expect(r.body.error.message).toContain('Sign-up is closed')
	})

	it('should open when an administrator enables it, crediting the configured balance and signing in', async () => {
		const admin = await app.signIn('admin', ADMIN_PASSWORD)
		const s = await admin.call('/api/settings', { method: 'PATCH', body: { signup_enabled: true, signup_balance: 1.25 } })
		expect(s.body).toEqual({ signup_enabled: true, signup_balance: 1.25 })
		expect((await fetch(`${app.url}/api/session`).then((r) => r.json())).signup_enabled).toBe(true)
		const r = await app.post('/api/signup', { username: 'newbie', password: 'newbie-pass' })
		expect(r.status).toBe(201)
		expect(r.headers.get('set-cookie')).toContain('HttpOnly')
		expect(r.body.user).toMatchObject({ username: 'newbie', is_admin: false })
		expect(r.body.account).toMatchObject({ name: 'newbie', balance: 1.25 })
	})

	it('should refuse a taken username', async () => {
		expect((await app.post('/api/signup', { username: 'Newbie', password: 'newbie-pass' })).status).toBe(409)
	})
})

describe('bootstrapAdmin with an administrator the sign-in form cannot take', () => {
	// A generated password longer than sign-in's 200 characters (openssl rand -base64 256 gives 344), or a username
	// longer than its 64, would create an administrator nobody can sign in as; one with a space is refused as the users
	// API refuses it. The start stops instead.
	for (const [what, env, named] of [
		['a 344-character ADMIN_PASSWORD', { ADMIN_PASSWORD: 'p'.repeat(344) }, 'ADMIN_PASSWORD must be at most 200 characters'],
		['an ADMIN_USERNAME with a space', { ADMIN_USERNAME: 'ops team' }, 'ADMIN_USERNAME must be 3 to 64 letters'],
		['a 65-character ADMIN_USERNAME', { ADMIN_USERNAME: 'a'.repeat(65) }, 'ADMIN_USERNAME must be 3 to 64 letters'],
	] as const) {
		it(`should refuse ${what}, creating no user`, async () => {
			const app = await startTestApp({ env })
			try {
				await expect(bootstrapAdmin(app.svc, () => {})).rejects.toThrow(named)
				const [row] = await app.svc.db.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM users')
				expect(row!.n).toBe(0)
			} finally {
				await app.close()
			}
		}, 120_000)
	}

	it('should take a username in capitals, and sign in with it as typed', async () => {
		const app = await startTestApp({ env: { ADMIN_USERNAME: 'Ops.Team', ADMIN_PASSWORD: 'ops-password-1' } })
		try {
			expect(await bootstrapAdmin(app.svc, () => {})).toEqual({ created: true, username: 'ops.team' })
			const res = await fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'Ops.Team', password: 'ops-password-1' }) })
			expect(res.status).toBe(200)
		} finally {
			await app.close()
		}
	}, 120_000)
})
