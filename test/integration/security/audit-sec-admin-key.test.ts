/**
 * Guessing ADMIN_KEY, which the operator chooses (and may choose weak), on the management API: wrong keys from one
 * address lock that address out after ten; wrong keys from many addresses close the API to new addresses with a
 * back-off of at most a minute; an address that used the right key before is never held up. Requests come from
 * distinct loopback addresses over raw sockets bound to them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import net from 'node:net'
import { createSecretGuessGuard } from '../../../src/limits/secret-guess'
import { ADMIN_KEY, type SecApp, startSecApp } from './setup'

let app: SecApp

function getFrom(from: string, path: string, key: string): Promise<{ status: number; headers: Record<string, string> }> {
	const port = Number(new URL(app.url).port)
	return new Promise((resolve, reject) => {
		const sock = net.connect({ host: '127.0.0.1', port, localAddress: from })
		let raw = ''
		sock.on('connect', () => sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`))
		sock.on('data', (d) => (raw += d))
		sock.on('error', reject)
		sock.on('close', () => {
			const [head = ''] = raw.split('\r\n\r\n')
			const [statusLine = '', ...lines] = head.split('\r\n')
			const headers: Record<string, string> = {}
			for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
			resolve({ status: Number(statusLine.split(' ')[1]), headers })
		})
	})
}

beforeAll(async () => {
	app = await startSecApp()
}, 60_000)
afterAll(() => app?.close())

describe('guessing ADMIN_KEY', () => {
	it('should lock one address out after ten wrong keys, even for the right one', async () => {
		for (let i = 0; i < 10; i++) expect((await getFrom('127.0.2.1', '/api/accounts', `guess-${i}`)).status).toBe(401)
		const locked = await getFrom('127.0.2.1', '/api/accounts', ADMIN_KEY)
		expect(locked.status).toBe(429)
		expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0)
		// Another address is not locked by it.
		expect((await getFrom('127.0.2.2', '/api/accounts', ADMIN_KEY)).status).toBe(200)
	})

	it('should hold new addresses back once many addresses guessed, but not one that used the right key', async () => {
		// 127.0.2.2 used the right key above. Ten more wrong keys make twenty in all, from eleven addresses.
		for (let i = 0; i < 11; i++) expect((await getFrom(`127.0.3.${i + 1}`, '/api/accounts', `guess-x${i}`)).status).toBe(401)
		const held = await getFrom('127.0.3.99', '/api/accounts', ADMIN_KEY)
		expect(held.status).toBe(429)
		expect(Number(held.headers['retry-after'])).toBeLessThanOrEqual(60)
		expect((await getFrom('127.0.2.2', '/api/accounts', ADMIN_KEY)).status).toBe(200)
	})
})

describe('the guess guard', () => {
	it('should not count a client locked out by address toward the shared back-off', () => {
		const g = createSecretGuessGuard({ perAddress: 3, freeFailures: 5 })
		// The caller checks retryAfter first and stops counting a locked address.
		for (let i = 0; i < 100; i++) if (g.retryAfter('1.1.1.1') === 0) g.fail('1.1.1.1')
		expect(g.retryAfter('1.1.1.1')).toBeGreaterThan(0)
		expect(g.retryAfter('2.2.2.2')).toBe(0)
	})
})
