/**
 * The sign-in limits count by the caller's address. Behind a reverse proxy every connection comes from the proxy, so
 * without TRUSTED_PROXIES all callers share one count; with it, X-Forwarded-For names the caller, and only when the
 * peer is a trusted proxy (from anyone else the header is ignored, or a guesser could pick a new address per try).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { callerAddress } from '../../../src/http/client-address'
import { type SecApp, startSecApp } from './setup'

/** A wrong sign-in for `username`, sent from 127.0.0.1 with `forwardedFor` in X-Forwarded-For. */
const wrongSignIn = (app: SecApp, username: string, forwardedFor: string) =>
	fetch(`${app.url}/api/session`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
		body: JSON.stringify({ username, password: 'not-the-password-1' }),
	}).then((r) => r.status)

async function withUser(app: SecApp, username: string) {
	const acct = await app.account(1, `${username}-acct`)
	const r = await app.admin('/api/users', { body: { username, password: 'right-password-1', account_id: acct.accountId } })
	if (r.status !== 201) throw new Error(JSON.stringify(r.body))
}

describe('callerAddress', () => {
	it('should take the nearest untrusted forwarded hop, only from a trusted peer', () => {
		const trusted = ['127.0.0.1', '10.0.0.0/8']
		expect(callerAddress('127.0.0.1', '203.0.113.9', trusted)).toBe('203.0.113.9')
		// The client's own entries (left of the first untrusted hop) are not believed.
		expect(callerAddress('10.0.0.5', '6.6.6.6, 198.51.100.7, 10.0.0.9', trusted)).toBe('198.51.100.7')
		expect(callerAddress('::ffff:10.0.0.5', '198.51.100.7', trusted)).toBe('198.51.100.7')
		// From an untrusted peer the header is the client's word: ignored.
		expect(callerAddress('192.0.2.1', '198.51.100.7', trusted)).toBe('192.0.2.1')
		expect(callerAddress('127.0.0.1', '198.51.100.7', [])).toBe('127.0.0.1')
		expect(callerAddress('127.0.0.1', null, trusted)).toBe('127.0.0.1')
		expect(callerAddress(undefined, '198.51.100.7', trusted)).toBe('local')
	})
})

describe('sign-in limits behind a proxy', () => {
	let plain: SecApp
	let proxied: SecApp
	beforeAll(async () => {
		;[plain, proxied] = await Promise.all([startSecApp(), startSecApp({ TRUSTED_PROXIES: '127.0.0.1' })])
		await Promise.all([withUser(plain, 'erin'), withUser(proxied, 'erin')])
	}, 60_000)
	afterAll(() => Promise.all([plain?.close(), proxied?.close()]))

	it('should count each forwarded caller apart when the proxy is trusted', async () => {
		// Five wrong passwords lock a username and address pair; here each caller has four.
		for (const caller of ['198.51.100.1', '198.51.100.2']) for (let i = 0; i < 4; i++) expect(await wrongSignIn(proxied, 'erin', caller)).toBe(401)
		expect(await wrongSignIn(proxied, 'erin', '198.51.100.1')).toBe(401)
		expect(await wrongSignIn(proxied, 'erin', '198.51.100.1')).toBe(429)
		expect(await wrongSignIn(proxied, 'erin', '198.51.100.3')).toBe(401)
	})

	it('should ignore X-Forwarded-For from a peer it does not trust', async () => {
		// A new forwarded address per try does not escape the per-address lock.
		const statuses = []
		for (let i = 1; i <= 6; i++) statuses.push(await wrongSignIn(plain, 'erin', `203.0.113.${i}`))
		expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
	})
})
