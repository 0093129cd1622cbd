/**
 * The console's sign-in lockouts and the wrong-`ADMIN_KEY` limits hold across two gateway processes on one
 * PostgreSQL, with Redis (the counts in it) and without (table `login_strikes`, src/limits/strikes.ts): five wrong
 * passwords for a username from one address lock that pair on both instances, however they were spread; the
 * per-username back-off counts every instance's failures, and an address the owner signed in from through one
 * instance is let through on the other; ten wrong bearers from one address lock it on both, and a wrong bearer that
 * reaches an instance which never saw one finds the lock. Requests come from distinct loopback addresses over raw
 * sockets bound to them, as in test/integration/security/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import net from 'node:net'
import { ADMIN_KEY } from '../resilience/server-process'
import { noteSkip, ON_POSTGRES, type Pair, type Server, startPair } from './pair'

noteSkip(import.meta.path)

type Answer = { status: number; headers: Record<string, string>; body: string }

/** One request to `server` from the loopback address `from`, over a socket of its own. */
function from(server: Server, addr: string, method: string, path: string, headers: Record<string, string>, body = ''): Promise<Answer> {
	const port = Number(new URL(server.url).port)
	return new Promise((resolve, reject) => {
		const sock = net.connect({ host: '127.0.0.1', port, localAddress: addr })
		let raw = ''
		const head = Object.entries({ ...headers, 'Content-Length': String(Buffer.byteLength(body)) })
			.map(([k, v]) => `${k}: ${v}\r\n`)
			.join('')
		sock.on('connect', () => sock.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${head}Connection: close\r\n\r\n${body}`))
		sock.on('data', (d) => (raw += d))
		sock.on('error', reject)
		sock.on('close', () => {
			const [top = '', ...rest] = raw.split('\r\n\r\n')
			const [statusLine = '', ...lines] = top.split('\r\n')
			const hs: Record<string, string> = {}
			for (const l of lines) hs[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
			resolve({ status: Number(statusLine.split(' ')[1]), headers: hs, body: rest.join('\r\n\r\n') })
		})
	})
}

const signIn = (server: Server, addr: string, username: string, password: string) =>
	from(server, addr, 'POST', '/api/session', { 'Content-Type': 'application/json' }, JSON.stringify({ username, password }))
const bearer = (server: Server, addr: string, key: string) => from(server, addr, 'GET', '/api/accounts', { Authorization: `Bearer ${key}` })

/** A 429 of the lockout, with a retry-after within `max` seconds. */
function expectLocked(a: Answer, max: number) {
	expect(a.status).toBe(429)
	expect(JSON.parse(a.body).error.code).toBe('too_many_attempts')
	expect(Number(a.headers['retry-after'])).toBeGreaterThan(0)
	expect(Number(a.headers['retry-after'])).toBeLessThanOrEqual(max)
}

for (const redis of [true, false]) {
	describe.skipIf(!ON_POSTGRES)(`sign-in and ADMIN_KEY lockouts on two processes on one database, ${redis ? 'with' : 'without'} Redis`, () => {
		let p: Pair
		beforeAll(async () => {
			p = await startPair(import.meta.path, { channels: [], models: [] }, { redis })
			for (const username of ['ann', 'bob', 'cyd']) {
				const r = await p.admin('/api/users', { body: { username, password: `${username}-password-1` } })
				if (r.status !== 201) throw new Error(JSON.stringify(r.body))
			}
		}, 60_000)
		afterAll(() => p?.close())

		it('should lock a username and address on B after five wrong passwords for it on A, and after five spread over both', async () => {
			for (let i = 0; i < 5; i++) expect((await signIn(p.a, '127.0.4.1', 'ann', `wrong-${i}`)).status).toBe(401)
			const onB = await signIn(p.b, '127.0.4.1', 'ann', 'ann-password-1')
			expectLocked(onB, 15 * 60)
			expect(onB.headers['set-cookie']).toBeUndefined()
			expectLocked(await signIn(p.a, '127.0.4.1', 'Ann', 'ann-password-1'), 15 * 60)
			expectLocked(await signIn(p.b, '127.0.4.1', 'ann', 'wrong-b'), 15 * 60)
			// The lock is the pair's: the same user from another address signs in on either.
			expect((await signIn(p.b, '127.0.4.2', 'ann', 'ann-password-1')).status).toBe(200)

			// Five in all, alternating: neither instance saw five.
			for (let i = 0; i < 5; i++) expect((await signIn(i % 2 ? p.b : p.a, '127.0.4.3', 'bob', `wrong-${i}`)).status).toBe(401)
			for (const s of [p.a, p.b]) expectLocked(await signIn(s, '127.0.4.3', 'bob', 'bob-password-1'), 15 * 60)
		})

		it("should hold a username back on both once eleven addresses failed across them, but not its owner's usual address", async () => {
			// The owner signs in through A before the attack.
			expect((await signIn(p.a, '127.0.5.200', 'cyd', 'cyd-password-1')).status).toBe(200)
			for (let i = 1; i <= 11; i++) expect((await signIn(i % 2 ? p.a : p.b, `127.0.5.${i}`, 'cyd', `guess-${i}`)).status).toBe(401)
			// B saw five of them, below the ten free ones: only the shared count holds the right password back there.
			for (const s of [p.b, p.a]) expectLocked(await signIn(s, '127.0.5.99', 'cyd', 'cyd-password-1'), 60)
			// B never saw the owner, but the address they signed in from through A is shared.
			expect((await signIn(p.b, '127.0.5.200', 'cyd', 'cyd-password-1')).status).toBe(200)
		})

		it('should count wrong ADMIN_KEY bearers from one address on both instances', async () => {
			// Ten on A; B has not seen a wrong bearer yet, and its first finds the address locked.
			for (let i = 0; i < 10; i++) expect((await bearer(p.a, '127.0.6.1', `guess-a${i}`)).status).toBe(401)
			expectLocked(await bearer(p.b, '127.0.6.1', 'guess-b0'), 15 * 60)
			for (const s of [p.a, p.b]) expectLocked(await bearer(s, '127.0.6.1', ADMIN_KEY), 15 * 60)

			// Ten spread over both: the eleventh is refused on either, and so is the right key.
			for (let i = 0; i < 10; i++) expect((await bearer(i % 2 ? p.b : p.a, '127.0.6.2', `guess-${i}`)).status).toBe(401)
			for (const s of [p.a, p.b]) {
				expectLocked(await bearer(s, '127.0.6.2', 'guess-11'), 15 * 60)
				expectLocked(await bearer(s, '127.0.6.2', ADMIN_KEY), 15 * 60)
			}
			// Other addresses are not locked by it.
			for (const s of [p.a, p.b]) expect((await bearer(s, '127.0.6.3', ADMIN_KEY)).status).toBe(200)
		})
	})
}
