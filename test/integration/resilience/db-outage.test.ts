/**
 * Database outage (issue 4), PostgreSQL only: the gateway reaches PostgreSQL through a TCP proxy the test controls
 * (127.0.0.1). With the proxy cut, the instance serves from its lease only until its next flush fails; then new model
 * requests fail with 503 in the caller's shape (never a 500, and the upstream is not called) and /health says 503
 * (/health/live, liveness, still 200);
 * once it is back, requests work again, what was answered during the cut is billed, and the ledger invariant holds.
 * PGlite is embedded in the process and cannot go away alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Socket, TCPSocketListener } from 'bun'
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { ADMIN_KEY } from '../../helpers/app'
import { createTestDb, type TestDb } from '../../helpers/db'
import { expectLedgerInvariant } from './invariant'
import { answerText, body, errorOf, post, type Proto } from './rig'

const PG = process.env.DATABASE_URL
if (!PG) console.warn('db-outage.test.ts: skipped, it needs PostgreSQL (run with DATABASE_URL=postgres://…)')

/** A TCP relay to PostgreSQL that can be cut (listener closed, every connection reset) and restored on the same port. */
function pgProxy(target: URL) {
	type Pair = { peer?: Socket<Pair>; pending: Uint8Array[] }
	const open = new Set<Socket<Pair>>()
	let listener: TCPSocketListener<Pair> | undefined
	let port = 0
	const listen = () => {
		if (listener) return
		listener = Bun.listen<Pair>({
			hostname: '127.0.0.1',
			port,
			socket: {
				async open(client) {
					client.data = { pending: [] }
					open.add(client)
					try {
						const server = await Bun.connect<Pair>({
							hostname: target.hostname,
							port: Number(target.port || 5432),
							socket: {
								data: (_s, d) => void client.write(d),
								close: () => void client.end(),
								error: () => void client.end(),
							},
						})
						server.data = { peer: client, pending: [] }
						open.add(server)
						client.data.peer = server
						for (const d of client.data.pending) server.write(d)
					} catch {
						client.end()
					}
				},
				data(client, d) {
					if (client.data.peer) client.data.peer.write(d)
					else client.data.pending.push(new Uint8Array(d))
				},
				close: (client) => void client.data.peer?.end(),
				error: (client) => void client.data.peer?.end(),
			},
		})
		port = listener.port
	}
	listen()
	return {
		get port() {
			return port
		},
		cut() {
			listener?.stop(true)
			listener = undefined
			for (const s of open) s.terminate()
			open.clear()
		},
		restore: listen,
		stop() {
			listener?.stop(true)
			for (const s of open) s.terminate()
		},
	}
}

describe.skipIf(!PG)('database outage (PostgreSQL)', () => {
	let tdb: TestDb
	let proxy: ReturnType<typeof pgProxy>
	let mock: VendorMock
	let svc: Services
	let url: string
	let stopApp: () => Promise<void>
	let key: string

	beforeAll(async () => {
		tdb = await createTestDb()
		const real = new URL(tdb.url!)
		proxy = pgProxy(real)
		const via = new URL(real)
		via.hostname = '127.0.0.1'
		via.port = String(proxy.port)
		mock = await startOpenAIMock({ apiKey: 'up-key' })
		svc = await createServices(loadEnv({ DATABASE_URL: via.toString(), ADMIN_KEY, SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'error' }), {
			log: silentLogger,
			config: {
				channels: [{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['dbm'], model_map: { dbm: 'gpt-4o-mini' } }],
				models: [{ name: 'dbm', input_per_mtok: 1, output_per_mtok: 2 }],
			},
		})
		const app = createApp(svc).listen({ port: 0, hostname: '127.0.0.1' })
		url = `http://127.0.0.1:${app.server!.port}`
		stopApp = async () => {
			await app.stop(true)
			await svc.close()
		}
		const admin = async (path: string, b: unknown) =>
			(await (await fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(b) })).json()) as { id: number; key: string }
		const acct = await admin('/api/accounts', { name: 'db', balance: 5 })
		key = (await admin('/api/tokens', { account_id: acct.id, name: 'k' })).key
	}, 60_000)

	afterAll(async () => {
		proxy.restore()
		await stopApp()
		proxy.stop()
		await mock.stop()
		await tdb.drop()
	})

	const cases: Array<[Proto, boolean]> = [
		['chat', false],
		['chat', true],
		['messages', false],
		['messages', true],
	]

	/** Answers served from the instance's lease after the cut, before the failed flush stopped it (billed later). */
	let servedDuringOutage = 0

	it('should answer 503 in the shape of the caller once the database is down, without calling the upstream', async () => {
		for (const [proto, stream] of cases) expect((await post(url, proto, key, body('dbm', 'before', stream))).status).toBe(200)
		proxy.cut()
		// The instance serves from its lease until the next flush fails (about LEDGER_FLUSH_MS): those answers are
		// kept in memory and billed once the database is back. Then it stops, and answers 503.
		for (let i = 0; i < 50; i++) {
			const a = await post(url, 'chat', key, body('dbm', 'cut', false))
			if (a.status === 503) break
			expect(a.status).toBe(200)
			servedDuringOutage++
			await Bun.sleep(20)
		}
		expect(servedDuringOutage).toBeLessThan(50)
		const called = mock.requests.length
		for (const [proto, stream] of cases) {
			const a = await post(url, proto, key, body('dbm', 'during', stream), { 'x-request-id': `down-${proto}-${stream}` })
			expect(a.status).toBe(503)
			expect(a.headers.get('x-request-id')).toBe(`down-${proto}-${stream}`)
			const e = errorOf(proto, a.json)
			expect(e.message).toContain('database')
		}
		expect(mock.requests.length).toBe(called)
		expect((await fetch(`${url}/health`)).status).toBe(503)
		// Liveness does not follow the database: an orchestrator restarting on it would restart every instance at once.
		const live = await fetch(`${url}/health/live`)
		expect(live.status).toBe(200)
		expect(await live.json()).toMatchObject({ status: 'ok' })
	})

	it('should serve and bill again once the database is back, including what it answered during the cut', async () => {
		proxy.restore()
		for (const [proto, stream] of cases) {
			const a = await post(url, proto, key, body('dbm', 'after', stream))
			expect(a.status).toBe(200)
			expect(answerText(proto, a)).toBe('Hello! You said: after')
		}
		expect((await fetch(`${url}/health`)).status).toBe(200)
		const t = await expectLedgerInvariant(tdb.db.sql, svc.ledger)
		expect(t.inUse).toBe(0)
		const [u] = await tdb.db.sql.query<{ n: number }>('SELECT count(*)::bigint AS n FROM usage_logs WHERE cost > 0')
		expect(u!.n).toBe(8 + servedDuringOutage)
	})
})
