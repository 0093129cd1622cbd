/**
 * Password guessing against one console user from many addresses: the per-address lock alone let an attacker who
 * rotates addresses guess forever. Each request here comes from its own loopback address (127.0.0.0/8 is all
 * loopback on Linux), over a raw socket bound to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import net from 'node:net'
import { createLoginBackoff } from '../../../src/limits/login-backoff'
import { type SecApp, startSecApp } from './setup'

let app: SecApp

/** POST /api/session from `from`; the status, headers (lower-cased) and body. */
function signInFrom(from: string, username: string, password: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
	const port = Number(new URL(app.url).port)
	const body = JSON.stringify({ username, password })
	return new Promise((resolve, reject) => {
		const sock = net.connect({ host: '127.0.0.1', port, localAddress: from })
		let raw = ''
		sock.on('connect', () =>
			sock.write(`POST /api/session HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`),
		)
		sock.on('data', (d) => (raw += d))
		sock.on('error', reject)
		sock.on('close', () => {
			const [head = '', ...rest] = raw.split('\r\n\r\n')
			const [statusLine = '', ...lines] = head.split('\r\n')
			const headers: Record<string, string> = {}
			for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
			resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') })
		})
	})
}

beforeAll(async () => {
	app = await startSecApp()
	const acct = await app.account(1, 'dave-acct')
	const r = await app.admin('/api/users', { body: { username: 'dave', password: 'dave-password-1', account_id: acct.accountId } })
	if (r.status !== 201) throw new Error(JSON.stringify(r.body))
}, 60_000)
afterAll(() => app?.close())

describe('guessing one password from many addresses', () => {
	it('should close the username to every new address once ten guesses failed, with a short retry-after', async () => {
		// The owner signs in from their usual address before the attack.
		expect((await signInFrom('127.0.0.2', 'dave', 'dave-password-1')).status).toBe(200)
		// Eleven addresses, one wrong guess each: no address reaches its own limit of five.
		for (let i = 1; i <= 11; i++) expect((await signInFrom(`127.0.1.${i}`, 'dave', `guess-${i}-password`)).status).toBe(401)
		// A twelfth address, with the right password this time: refused without being checked.
		const held = await signInFrom('127.0.1.12', 'Dave ', 'dave-password-1')
		expect(held.status).toBe(429)
		expect(held.headers['set-cookie']).toBeUndefined()
		const wait = Number(held.headers['retry-after'])
		expect(wait).toBeGreaterThan(0)
		expect(wait).toBeLessThanOrEqual(60)
		expect(JSON.parse(held.body).error.code).toBe('too_many_attempts')
	})

	it("should still let the owner sign in from an address they signed in from before", async () => {
		expect((await signInFrom('127.0.0.2', 'dave', 'dave-password-1')).status).toBe(200)
	})

	it('should leave other usernames alone', async () => {
		const r = await signInFrom('127.0.1.13', 'nobody-here', 'whatever-password')
		expect(r.status).toBe(401)
	})
})

describe('the per-username back-off', () => {
	it('should double the delay per failure past the free ones, up to a minute at most', () => {
		let now = 0
		const b = createLoginBackoff({ freeFailures: 10, now: () => now })
		const waits: number[] = []
		for (let i = 0; i < 20; i++) {
			b.fail('admin', `10.0.0.${i}`)
			waits.push(b.retryAfter('admin', '10.9.9.9'))
		}
		expect(waits).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 60, 60, 60, 60])
		now += 60_000
		expect(b.retryAfter('ADMIN', '10.9.9.9')).toBe(0)
	})

	it('should forget the failures after a quiet window, and after the owner signs in', () => {
		let now = 0
		const b = createLoginBackoff({ freeFailures: 1, windowMs: 60_000, now: () => now })
		b.fail('a', '1.1.1.1')
		b.fail('a', '1.1.1.2')
		expect(b.retryAfter('a', '1.1.1.3')).toBe(1)
		now = 60_000
		b.fail('a', '1.1.1.4')
		expect(b.retryAfter('a', '1.1.1.5')).toBe(0)
		b.fail('a', '1.1.1.6')
		expect(b.retryAfter('a', '1.1.1.5')).toBe(1)
		b.succeed('a', '2.2.2.2')
		expect(b.retryAfter('a', '1.1.1.5')).toBe(0)
	})

	it('should keep holding a username back through a flood of made-up usernames', () => {
		const b = createLoginBackoff({ freeFailures: 2 })
		for (let i = 0; i < 5; i++) b.fail('admin', `1.1.1.${i}`)
		for (let i = 0; i < 60_000; i++) b.fail(`junk-${i}`, '6.6.6.6')
		expect(b.retryAfter('admin', '9.9.9.9')).toBeGreaterThan(0)
	})

	it('should exempt only addresses the user signed in from', () => {
		const b = createLoginBackoff({ freeFailures: 0 })
		b.succeed('a', '2.2.2.2')
		b.fail('a', '1.1.1.1')
		expect(b.retryAfter('a', '2.2.2.2')).toBe(0)
		expect(b.retryAfter('a', '1.1.1.1')).toBeGreaterThan(0)
		expect(b.retryAfter('b', '2.2.2.2')).toBe(0)
	})
})
