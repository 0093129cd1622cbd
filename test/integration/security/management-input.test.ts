/**
 * Bad input to the management API is the caller's fault and answers 400, never 500: ids and limits past PostgreSQL's
 * `integer`, NUL bytes in names and notes (PostgreSQL text cannot hold them), in query strings and bodies. And a
 * write that fails in the database is logged without its bound values (a new key's hash and ciphertext).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_KEY, type SecApp, startSecApp } from './setup'

let app: SecApp
let acct: { accountId: number; tokenId: number; key: string }
beforeAll(async () => {
	app = await startSecApp()
	acct = await app.account(5)
}, 60_000)
afterAll(() => app?.close())

const BIG = 2_147_483_648 // one past PostgreSQL's integer

describe('management API input', () => {
	const queries = ['/api/tokens?account_id=99999999999', '/api/usage?account_id=99999999999', '/api/usage?token_id=99999999999', '/api/console/spend?account_id=99999999999', '/api/console/spend?token_id=99999999999']
	for (const q of queries)
		it(`should answer GET ${q} with 400`, async () => {
			const r = await app.admin(q)
			expect({ q, status: r.status }).toEqual({ q, status: 400 })
		})

	const bodies: Array<[string, string, () => string, () => Record<string, unknown>]> = [
		['POST', 'a key on an account id past integer', () => '/api/tokens', () => ({ account_id: BIG, name: 'k' })],
		['POST', 'a key with rpm_limit past integer', () => '/api/tokens', () => ({ account_id: acct.accountId, name: 'k', rpm_limit: BIG })],
		['POST', 'a key with tpm_limit 1e21', () => '/api/tokens', () => ({ account_id: acct.accountId, name: 'k', tpm_limit: 1e21 })],
		['PATCH', 'a key changed to rpm_limit past integer', () => `/api/tokens/${acct.tokenId}`, () => ({ rpm_limit: BIG })],
		['POST', 'a key whose name holds a NUL byte', () => '/api/tokens', () => ({ account_id: acct.accountId, name: 'a\u0000b' })],
		['PATCH', 'a key renamed with a NUL byte', () => `/api/tokens/${acct.tokenId}`, () => ({ name: 'a\u0000b' })],
		['POST', 'an account whose name holds a NUL byte', () => '/api/accounts', () => ({ name: 'a\u0000b', balance: 1 })],
		['POST', 'a credit whose note holds a NUL byte', () => `/api/accounts/${acct.accountId}/credit`, () => ({ amount: 1, note: 'a\u0000b' })],
	]
	for (const [method, what, path, body] of bodies)
		it(`should answer ${what} with 400 and change nothing`, async () => {
			const before = await app.admin(`/api/accounts/${acct.accountId}`)
			const tokensBefore = (await app.admin(`/api/tokens?account_id=${acct.accountId}`)).body.data
			const r = await app.admin(path(), { method, body: body() })
			expect({ what, status: r.status }).toEqual({ what, status: 400 })
			expect(r.body.error.message).not.toBe('Internal error')
			expect((await app.admin(`/api/accounts/${acct.accountId}`)).body).toEqual(before.body)
			expect((await app.admin(`/api/tokens?account_id=${acct.accountId}`)).body.data).toEqual(tokensBefore)
		})

	it('should answer a sign-in whose username holds a NUL byte with 401, not 500', async () => {
		const res = await fetch(`${app.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'a\u0000b', password: 'whatever-123' }) })
		expect([400, 401]).toContain(res.status)
	})
})

describe('a failed database write in the log', () => {
	it('should name the failure without the bound values (no key hash or ciphertext)', async () => {
		const { createLogger } = await import('../../../src/lib/log')
		const lines: string[] = []
		const log = createLogger('debug', (l) => lines.push(l))
		const err = new Error('Failed query: insert into "api_tokens" ("key_hash", "key_enc") values ($1, $2)\nparams: b218a10d5fc21cbbdee589f90371283df9ccfd58914a29874d69a7db8df7985c,8vVEPjKuP99xj3mXISaIg8LVdInBTqUm31VI5a+8G0zK6Hvve0R9Zv1XTWDQ==')
		log.error('unhandled error', { error: `${err.name}: ${err.message}`, stack: err.stack })
		expect(lines.join('\n')).toContain('Failed query: insert into')
		expect(lines.join('\n')).not.toContain('b218a10d5fc2')
		expect(lines.join('\n')).not.toContain('8vVEPjKuP99x')
	})

	it('should keep a Gemini channel key out of any log line', async () => {
		const { redact } = await import('../../../src/lib/log')
		expect(redact('upstream said: invalid key AIzaSyUPSTREAMgemini0123456789abcdefghi')).not.toContain('UPSTREAMgemini')
	})
})

void ADMIN_KEY
