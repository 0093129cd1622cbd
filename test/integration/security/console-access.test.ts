/**
 * The console's session as an attacker meets it: cookie flags, CSRF on every state-changing management route, a
 * signed-in user reaching another account's keys, usage or balance (IDOR) or an administrator's routes, and password
 * guessing. Each refused attempt must also leave the state as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type SecApp, startSecApp } from './setup'

type Session = { cookie: string; csrf: string; setCookie: string }

let app: SecApp
let alice: { accountId: number; tokenId: number; key: string }
let bob: { accountId: number; tokenId: number; key: string }
let aliceS: Session

async function signIn(username: string, password: string, headers: Record<string, string> = {}): Promise<Session> {
	const res = await fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username, password }) })
	const setCookie = res.headers.get('set-cookie') ?? ''
	const body = (await res.json()) as { csrf_token?: string }
	if (res.status !== 200) throw new Error(`sign-in ${res.status}: ${JSON.stringify(body)}`)
	return { cookie: setCookie.split(';')[0]!, csrf: body.csrf_token!, setCookie }
}

async function as(s: Session, method: string, path: string, body?: unknown, csrf: string | null = s.csrf) {
	const headers: Record<string, string> = { cookie: s.cookie }
	if (csrf !== null) headers['x-csrf-token'] = csrf
	if (body !== undefined) headers['content-type'] = 'application/json'
	const res = await fetch(app.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
	const text = await res.text()
	let json: any
	try {
		json = JSON.parse(text)
	} catch {}
	return { status: res.status, body: json ?? text }
}

beforeAll(async () => {
	app = await startSecApp()
	alice = await app.account(10, 'alice-acct')
	bob = await app.account(10, 'bob-acct')
	for (const [u, a] of [['alice', alice], ['bob', bob]] as const) {
		const r = await app.admin('/api/users', { body: { username: u, password: `${u}-password-1`, account_id: a.accountId } })
		if (r.status !== 201) throw new Error(JSON.stringify(r.body))
	}
	aliceS = await signIn('alice', 'alice-password-1')
}, 60_000)
afterAll(() => app?.close())

describe('session cookie', () => {
	it('should be HttpOnly and SameSite=Strict, and not Secure over plain http', () => {
		expect(aliceS.setCookie).toMatch(/;\s*HttpOnly/i)
		expect(aliceS.setCookie).toMatch(/;\s*SameSite=Strict/i)
		expect(aliceS.setCookie).not.toMatch(/;\s*Secure/i)
	})

	it('should be Secure behind an https proxy', async () => {
		const s = await signIn('bob', 'bob-password-1', { 'x-forwarded-proto': 'https' })
		expect(s.setCookie).toMatch(/;\s*Secure/i)
	})

	it('should refuse a cross-origin sign-in and a form-encoded one', async () => {
		const cross = await fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body: JSON.stringify({ username: 'alice', password: 'alice-password-1' }) })
		expect(cross.status).toBe(403)
		expect(cross.headers.get('set-cookie')).toBeNull()
		const form = await fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=alice&password=alice-password-1' })
		expect(form.status).toBe(415)
	})
})

describe('CSRF', () => {
	// Every state-changing route a plain user may call; each must refuse a cookie without the token (or a wrong one).
	const routes: Array<[string, string, () => string, unknown]> = [
		['POST', '/api/tokens', () => '/api/tokens', { account_id: 0, name: 'csrf' }],
		['PATCH', '/api/tokens/:id', () => `/api/tokens/${alice.tokenId}`, { name: 'csrf' }],
		['DELETE', '/api/tokens/:id', () => `/api/tokens/${alice.tokenId}`, undefined],
		['POST', '/api/users/me/password', () => '/api/users/me/password', { current_password: 'alice-password-1', new_password: 'hacked-password-1' }],
		['DELETE', '/api/session', () => '/api/session', undefined],
	]
	for (const [method, label, path, body] of routes)
		for (const csrf of [null, 'wrong-token', ''])
			it(`should refuse ${method} ${label} with x-csrf-token ${csrf === null ? 'missing' : JSON.stringify(csrf)}`, async () => {
				const b = body && typeof body === 'object' && 'account_id' in body ? { ...body, account_id: alice.accountId } : body
				const before = (await as(aliceS, 'GET', '/api/tokens')).body
				const r = await as(aliceS, method, path(), b, csrf)
				expect({ route: `${method} ${path()}`, status: r.status }).toEqual({ route: `${method} ${path()}`, status: 403 })
				expect((await as(aliceS, 'GET', '/api/tokens')).body).toEqual(before)
			})

	it('should still sign alice in with her password (nothing above changed it)', async () => {
		await signIn('alice', 'alice-password-1')
	})
})

describe('a plain user and other accounts (IDOR)', () => {
	it("should not read, change, reveal or delete another account's key", async () => {
		for (const [method, path, body] of [
			['GET', `/api/tokens/${bob.tokenId}`],
			['GET', `/api/tokens/${bob.tokenId}/key`],
			['PATCH', `/api/tokens/${bob.tokenId}`, { status: 'disabled' }],
			['DELETE', `/api/tokens/${bob.tokenId}`],
			['POST', '/api/tokens', { account_id: bob.accountId, name: 'mine-now' }],
		] as Array<[string, string, unknown?]>) {
			const r = await as(aliceS, method, path, body)
			expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 })
			expect(JSON.stringify(r.body)).not.toContain(bob.key)
		}
		const still = await app.admin(`/api/tokens/${bob.tokenId}`)
		expect(still.body.status).toBe('active')
	})

	it("should list only her own keys, usage and spend whatever account or token she names", async () => {
		const keys = await as(aliceS, 'GET', `/api/tokens?account_id=${bob.accountId}`)
		expect([200, 404]).toContain(keys.status)
		if (keys.status === 200) expect(keys.body.data.every((k: any) => k.account_id === alice.accountId)).toBe(true)
		// Bob spends something, so there is a row to leak.
		await fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${bob.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sec-gpt', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) })
		await app.svc.ledger.flush()
		for (const q of [`account_id=${bob.accountId}`, `token_id=${bob.tokenId}`, '']) {
			const u = await as(aliceS, 'GET', `/api/usage?${q}`)
			if (u.status === 200) expect(u.body.data.filter((row: any) => row.account_id !== alice.accountId)).toEqual([])
			else expect(u.status).toBe(404)
			const s = await as(aliceS, 'GET', `/api/console/spend?${q}`)
			if (s.status === 200) expect(s.body.data).toEqual([])
			else expect(s.status).toBe(404)
		}
	})

	it("should not read another account, credit any account, or list accounts", async () => {
		expect((await as(aliceS, 'GET', `/api/accounts/${bob.accountId}`)).status).toBe(404)
		const list = await as(aliceS, 'GET', '/api/accounts')
		if (list.status === 200) expect(list.body.data.map((a: any) => a.id)).toEqual([alice.accountId])
		else expect([403, 404]).toContain(list.status)
		const before = await app.balance(alice.accountId)
		const credit = await as(aliceS, 'POST', `/api/accounts/${alice.accountId}/credit`, { amount: 1000 })
		expect(credit.status).toBe(403)
		expect(await app.balance(alice.accountId)).toBe(before)
	})

	it('should not reach administrator routes', async () => {
		for (const [method, path, body] of [
			['GET', '/api/channels'],
			['POST', '/api/channels', { name: 'evil', type: 'openai', base_url: 'http://127.0.0.1:1', api_key: 'x', models: ['sec-gpt'] }],
			['POST', '/api/models', { name: 'free-model', input_per_mtok: 0, output_per_mtok: 0 }],
			['PATCH', '/api/models/1', { input_per_mtok: 0 }],
			['GET', '/api/users'],
			['POST', '/api/users', { username: 'mallory', password: 'mallory-password', is_admin: true }],
			['PATCH', '/api/users/1', { is_admin: true }],
			['GET', '/api/settings'],
			['PATCH', '/api/settings', { signup_enabled: true }],
			['POST', '/api/accounts', { name: 'x', balance: 100 }],
		] as Array<[string, string, unknown?]>) {
			const r = await as(aliceS, method, path, body)
			expect({ method, path, status: r.status }).toEqual({ method, path, status: 403 })
		}
		const me = await as(aliceS, 'GET', '/api/session')
		expect(me.body.user.is_admin).toBe(false)
	})
})

describe('password guessing', () => {
	it('should refuse further guesses for a username from an address after five, even the right password', async () => {
		const guess = (password: string) =>
			fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'bob', password }) })
		for (let i = 0; i < 5; i++) expect((await guess(`wrong-${i}-password`)).status).toBe(401)
		const locked = await guess('bob-password-1')
		expect(locked.status).toBe(429)
		expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0)
		expect(locked.headers.get('set-cookie')).toBeNull()
		// The lock is per username: alice is not locked out by bob's guesser.
		await signIn('alice', 'alice-password-1')
	})

	it('should stop guessing the current password through a stolen session (password change)', async () => {
		const carol = await app.account(1, 'carol-acct')
		await app.admin('/api/users', { body: { username: 'carol', password: 'carol-password-1', account_id: carol.accountId } })
		const s = await signIn('carol', 'carol-password-1')
		const change = (current: string) => as(s, 'POST', '/api/users/me/password', { current_password: current, new_password: 'carol-password-2' })
		for (let i = 0; i < 5; i++) expect((await change(`guess-${i}-password`)).status).toBe(400)
		const locked = await change('carol-password-1')
		expect(locked.status).toBe(429)
		// Unchanged: the old password still signs in, the new one does not.
		await signIn('carol', 'carol-password-1')
	})

	it('should count the username case-insensitively (BOB is bob)', async () => {
		const r = await fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ' BOB ', password: 'bob-password-1' }) })
		expect(r.status).toBe(429)
	})
})
