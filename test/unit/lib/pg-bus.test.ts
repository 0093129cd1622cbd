/**
 * The PostgreSQL bus (LISTEN/NOTIFY) between two instances on one database, against the test run's PostgreSQL
 * (DATABASE_URL; skipped on PGlite, which has one process): delivery, no echo, the count acked topics wait for,
 * messages past NOTIFY's 8000-byte payload limit, a session terminated by the server (pg_terminate_backend) or cut in
 * the network, and what was published meanwhile.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import type { Socket } from 'bun'
import type { Bus } from '../../../src/lib/bus'
import { encode, type PgBusOptions, pgBus, SESSION_NAME } from '../../../src/lib/pg-bus'
import { createTestDb, type TestDb } from '../../helpers/db'
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy'

const ON_POSTGRES = !!process.env.DATABASE_URL
if (!ON_POSTGRES) console.log('skip lib/pg-bus.test.ts: the PostgreSQL bus needs DATABASE_URL')

let t: TestDb
beforeAll(async () => {
	if (ON_POSTGRES) t = await createTestDb()
})
afterAll(() => t?.drop())

const cleanup: Array<() => unknown> = []
afterEach(async () => {
	for (const f of cleanup.splice(0).reverse()) await f()
})

const FAST: PgBusOptions = { retry: { minMs: 20, maxMs: 200 }, connectWaitMs: 2_000 }

async function bus(name: string, opts: PgBusOptions & { port?: number } = {}): Promise<Bus> {
	const url = new URL(t.url!)
	if (opts.port) url.port = String(opts.port)
	const b = await pgBus(url.toString(), () => {}, { ...FAST, name, ...opts })
	cleanup.push(() => b.close())
	return b
}

async function proxy(opts: { startCut?: boolean } = {}): Promise<TcpProxy> {
	const u = new URL(t.url!)
	const p = await startTcpProxy(Number(u.port || 5432), { targetHost: u.hostname, ...opts })
	cleanup.push(() => p.stop())
	return p
}

/**
 * A relay to the database that drops every notification on its way to the client (NotificationResponse, message type
 * `A`), as LISTEN through a transaction-pooling PgBouncer delivers none: the LISTEN itself succeeds.
 */
function deafRelay(): number {
	const u = new URL(t.url!)
	type Link = { upstream?: Socket<undefined>; queued: Uint8Array[]; pending: Buffer }
	const server = Bun.listen<Link>({
		hostname: '127.0.0.1',
		port: 0,
		socket: {
			open(client) {
				client.data = { queued: [], pending: Buffer.alloc(0) }
				void Bun.connect<undefined>({
					hostname: u.hostname,
					port: Number(u.port || 5432),
					socket: {
						data(_up, bytes) {
							// Whole messages only: a type byte, then a length that counts itself.
							let buf = Buffer.concat([client.data.pending, bytes])
							while (buf.length >= 5 && buf.length >= 1 + buf.readUInt32BE(1)) {
								const end = 1 + buf.readUInt32BE(1)
								if (buf[0] !== 0x41) client.write(buf.subarray(0, end))
								buf = buf.subarray(end)
							}
							client.data.pending = Buffer.from(buf)
						},
						close: () => void client.end(),
						error: () => void client.end(),
					},
				}).then((upstream) => {
					client.data.upstream = upstream
					for (const b of client.data.queued) upstream.write(b)
				})
			},
			data(client, bytes) {
				if (client.data.upstream) client.data.upstream.write(bytes)
				else client.data.queued.push(new Uint8Array(bytes))
			},
			close: (client) => void client.data.upstream?.end(),
		},
	})
	cleanup.push(() => server.stop(true))
	return server.port
}

function listen(b: Bus, topic: string) {
	const r = { got: [] as string[], resyncs: 0 }
	b.subscribe(
		topic,
		(m) => r.got.push(m),
		() => r.resyncs++,
	)
	return r
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 10_000) {
	const deadline = Date.now() + ms
	while (!(await cond())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
		await Bun.sleep(10)
	}
}

/** The server-side pid of the bus session named `name`, if connected. */
async function sessionPid(name: string): Promise<number | undefined> {
	const [r] = await t.db.sql.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [SESSION_NAME + name])
	return r?.pid
}

describe('encode', () => {
	it('should send a short message as one payload and a long one as parts of under 8000 bytes, whole characters each', () => {
		expect(encode('me', 'news', 'hello', () => '1')).toEqual(['me news\nhello'])
		const long = 'ä€😀x'.repeat(3_000)
		const parts = encode('me', 'news', long, () => '7')
		expect(parts.length).toBeGreaterThan(1)
		for (const p of parts) expect(Buffer.byteLength(p)).toBeLessThan(8_000)
		expect(parts.map((p) => p.slice(p.indexOf('\n') + 1)).join('')).toBe(long)
		expect(parts[0]!.split('\n')[0]).toBe(`me news 7 0 ${parts.length}`)
	})
})

describe.skipIf(!ON_POSTGRES)('postgres bus', () => {
	it('should deliver to the other instance at once, not echo to the sender, and count the other listeners', async () => {
		const a = await bus('a')
		const b = await bus('b')
		expect([a.kind, a.subscribed(), b.subscribed()]).toEqual(['postgres', true, true])
		const atA = listen(a, 'news')
		const atB = listen(b, 'news')
		expect(await a.publishCounted('news', 'one')).toBe(1)
		await until('b hears a', () => atB.got.includes('one'))
		b.publish('news', 'two')
		await until('a hears b', () => atA.got.includes('two'))
		await Bun.sleep(100)
		// Each instance applied its own message when it published it, once.
		expect(atA.got).toEqual(['one', 'two'])
		expect(atB.got).toEqual(['one', 'two'])
		expect([atA.resyncs, atB.resyncs]).toEqual([0, 0])
		expect(await a.ping()).toBe(true)
	})

	it("should carry a message longer than NOTIFY's 8000-byte payload whole", async () => {
		const a = await bus('a')
		const b = await bus('b')
		const atB = listen(b, 'token-invalidate')
		// 300 key hashes, as disabling an account with 300 keys invalidates: ~19 KB.
		const hashes = Array.from({ length: 300 }, (_, i) => new Bun.CryptoHasher('sha256').update(String(i)).digest('hex')).join(',')
		a.publish('token-invalidate', hashes)
		a.publish('token-invalidate', 'short')
		await until('b hears both', () => atB.got.length === 2)
		expect(atB.got).toEqual([hashes, 'short'])
	})

	it('should listen again after the server terminated its session, resync, and send what it published meanwhile', async () => {
		const a = await bus('a')
		const b = await bus('b')
		const atA = listen(a, 'news')
		const atB = listen(b, 'news')
		const pid = await sessionPid('b')
		expect(pid).toBeNumber()
		expect((await t.db.sql.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]))[0]!.ok).toBe(true)
		await until('b notices', () => !b.subscribed(), 5_000)
		b.publish('news', 'said while down')
		await until('b listens again', () => b.subscribed(), 5_000)
		expect(await sessionPid('b')).not.toBe(pid)
		expect(atB.resyncs).toBe(1)
		await until('a hears what b said while down', () => atA.got.includes('said while down'))
		a.publish('news', 'after')
		await until('b hears a again', () => atB.got.includes('after'))
		expect(atA.resyncs).toBe(0)
	})

	it('should join once the database is reachable when it was not at start, and notice a connection that stopped answering', async () => {
		const p = await proxy({ startCut: true })
		const a = await bus('a')
		const b = await bus('b', { port: p.port, connectWaitMs: 200, heartbeatMs: 200 })
		const atB = listen(b, 'news')
		expect(b.subscribed()).toBe(false)
		expect(await b.ping()).toBe(false)
		await p.restore()
		await until('b listens', () => b.subscribed())
		a.publish('news', 'hello')
		await until('b hears a', () => atB.got.includes('hello'))

		p.stall()
		await until('b notices the stall', () => !b.subscribed(), 5_000)
		await p.restore()
		await until('b listens again', () => b.subscribed(), 5_000)
		a.publish('news', 'again')
		await until('b hears a again', () => atB.got.includes('again'))
		expect(atB.resyncs).toBe(2)
	})

	it('should not count as listening on a session that delivers no notifications (LISTEN through a transaction-pooling PgBouncer)', async () => {
		const b = await bus('deaf', { port: deafRelay(), connectWaitMs: 300 })
		const atB = listen(b, 'news')
		// Its LISTEN succeeded, but its probe never comes back: not up (it would poll), and no resync of its subscribers.
		await Bun.sleep(1_000)
		expect(await sessionPid('deaf')).toBeNumber()
		expect({ subscribed: b.subscribed(), resyncs: atB.resyncs }).toEqual({ subscribed: false, resyncs: 0 })
	})

	it('should keep a healthy session through its heartbeats (each a NOTIFY it must hear itself)', async () => {
		const a = await bus('a')
		// Each beat must be heard within its period: 50 ms failed under a loaded machine (a slow NOTIFY round trip is a
		// lost session by design), so five beats of 200 ms.
		const b = await bus('b', { heartbeatMs: 200 })
		const atB = listen(b, 'news')
		const pid = await sessionPid('b')
		await Bun.sleep(1_000)
		expect({ subscribed: b.subscribed(), resyncs: atB.resyncs, pid: await sessionPid('b') }).toEqual({ subscribed: true, resyncs: 0, pid })
		// Others' probes are not messages.
		a.publish('news', 'still here')
		await until('b hears a', () => atB.got.includes('still here'))
		expect(atB.got).toEqual(['still here'])
	})

	it('should stop reconnecting once closed', async () => {
		const b = await bus('closing')
		await b.close()
		expect(b.subscribed()).toBe(false)
		await Bun.sleep(300)
		expect(await sessionPid('closing')).toBeUndefined()
	})
})
