import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_PASSWORD, type ConsoleApp, startConsoleApp } from './console-app'

let app: ConsoleApp

beforeAll(async () => {
	app = await startConsoleApp()
}, 120_000)
afterAll(() => app.close())

describe('console sessions', () => {
	it('should sign in with the bootstrapped administrator and set a HttpOnly SameSite=Strict cookie', async () => {
		const r = await app.post('/api/session', { username: 'admin', password: ADMIN_PASSWORD })
		expect(r.status).toBe(200)
		const cookie = r.headers.get('set-cookie') ?? ''
		expect(cookie).toMatch(/^sb_session=[A-Za-z0-9]{40,};/)
		expect(cookie).toContain('HttpOnly')
		expect(cookie).toContain('SameSite=Strict')
		expect(cookie).toContain('Path=/')
		expect(cookie).not.toContain('Secure')
		expect(r.body.user).toMatchObject({ username: 'admin', is_admin: true })
		expect(r.body.account.name).toBe('admin')
		expect(r.body.csrf_token).toMatch(/^[A-Za-z0-9]{32}$/)
	})

	it('should mark the cookie Secure when the request came over https', async () => {
		const r = await app.post('/api/session', { username: 'admin', password: ADMIN_PASSWORD }, { 'x-forwarded-proto': 'https' })
		expect(r.headers.get('set-cookie')).toContain('Secure')
	})

	it('should store only the hash of the session id', async () => {
		const b = await app.signIn('admin', ADMIN_PASSWORD)
		const id = b.cookie.split('=')[1]!
		const rows = await app.svc.db.sql.query<{ id_hash: string }>('SELECT id_hash FROM sessions')
		expect(rows.some((r) => r.id_hash === id)).toBe(false)
		expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.id_hash))).toBe(true)
	})

	it('should refuse a wrong password with 401 and a message in words', async () => {
		const r = await app.post('/api/session', { username: 'admin', password: 'nope-nope' })
		expect(r.status).toBe(401)
		expect(r.body.error.message).toBe('Wrong username or password')
		expect(r.headers.get('set-cookie')).toBeNull()
	})

	it('should answer an unknown username exactly like a wrong password', async () => {
		const r = await app.post('/api/session', { username: 'nobody', password: 'whatever1' })
		expect(r.status).toBe(401)
		expect(r.body.error.message).toBe('Wrong username or password')
	})

	it('should rate-limit repeated failures for one username and address', async () => {
		for (let i = 0; i < 5; i++) expect((await app.post('/api/session', { username: 'victim', password: `guess-${i}` })).status).toBe(401)
		const r = await app.post('/api/session', { username: 'victim', password: 'guess-6' })
		expect(r.status).toBe(429)
		expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
		expect(r.body.error.message).toContain('Too many failed sign-ins')
	})

	it('should refuse a sign-in posted from another origin (login CSRF)', async () => {
		const r = await app.post('/api/session', { username: 'admin', password: ADMIN_PASSWORD }, { origin: 'https://evil.example' })
		expect(r.status).toBe(403)
	})

	it('should refuse credentials sent as a form (what a foreign page can post without CORS)', async () => {
		const res = await fetch(`${app.url}/api/session`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: `username=admin&password=${ADMIN_PASSWORD}`,
		})
		expect(res.status).toBe(415)
	})

	it('should report who is signed in, and nobody without a cookie', async () => {
		const b = await app.signIn('admin', ADMIN_PASSWORD)
		const me = await b.call('/api/session')
		expect(me.status).toBe(200)
		expect(me.body.user.username).toBe('admin')
		expect(me.body.csrf_token).toBe(b.csrf)
		const anon = await fetch(`${app.url}/api/session`).then((r) => r.json())
		expect(anon).toEqual({ user: null, account: null, csrf_token: null, signup_enabled: false })
	})

	it('should sign out: the cookie is cleared and the old one stops working', async () => {
		const b = await app.signIn('admin', ADMIN_PASSWORD)
		const out = await b.call('/api/session', { method: 'DELETE' })
		expect(out.status).toBe(200)
		expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
		expect((await b.call('/api/session')).body.user).toBeNull()
		expect((await b.call('/api/tokens')).status).toBe(401)
	})

	it('should refuse a sign-out without the CSRF token', async () => {
		const b = await app.signIn('admin', ADMIN_PASSWORD)
		expect((await b.call('/api/session', { method: 'DELETE', csrf: false })).status).toBe(403)
		expect((await b.call('/api/session')).body.user.username).toBe('admin')
	})

	it('should not accept an expired session', async () => {
		const b = await app.signIn('admin', ADMIN_PASSWORD)
		await app.svc.db.sql.query(`UPDATE sessions SET expires_at = now() - interval '1 second'`)
		expect((await b.call('/api/session')).body.user).toBeNull()
		expect((await b.call('/api/accounts')).status).toBe(401)
	})
})
