/**
 * A change made through an instance that cannot reach Redis, on a PostgreSQL every instance shares: it holds on the
 * instances that can, on their very next request once the management call answered (README "Running several
 * instances"), because the bus sends through PostgreSQL NOTIFY what it cannot hand to Redis (src/lib/bus-fallback.ts).
 * Three gateway processes on one database: A on the test Redis; D with REDIS_URL at a port nothing listens on (Redis
 * dead at start: /health `degraded`); E on Redis through a TCP relay the test stalls (Redis stops answering) and then
 * cuts (Redis gone mid-run). A client keeps calling A. Each test prints the time the management call took.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { freePort } from '../../helpers/ports'
import { REDIS_URL, redisEnv } from '../../helpers/redis'
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { ADMIN_KEY, deploy, type Deployment } from '../resilience/server-process'
import { call, noteSkip, ON_POSTGRES, type Server, within } from './pair'

noteSkip(import.meta.path)

/**
 * How long a management call may take when the other instances' acknowledgements arrive: they wait at most 2 s for
 * those (README), so a call that took longer waited for an instance that never heard the change.
 */
const ACKED_MS = 1_900
/** The same through an instance whose Redis stopped answering: each of its two messages first waits 0.5 s for Redis. */
const STALLED_MS = ACKED_MS + 1_000

let first: VendorMock
let second: VendorMock
beforeAll(async () => {
	if (!ON_POSTGRES) return
	first = await startOpenAIMock({ apiKey: 'up-1' })
	second = await startOpenAIMock({ apiKey: 'up-2' })
})
afterAll(async () => {
	await first?.stop()
	await second?.stop()
})

const config = (): GatewayConfig => ({
	channels: [
		{ name: 'first', type: 'openai', base_url: first.url, api_key: 'up-1', models: ['m', 'dual'], model_map: { m: 'gpt-4o-mini', dual: 'gpt-4o-mini' }, priority: 0 },
		{ name: 'second', type: 'openai', base_url: second.url, api_key: 'up-2', models: ['dual'], model_map: { dual: 'gpt-4o-mini' }, priority: 1 },
	],
	models: ['m', 'dual'].map((name) => ({ name, input_per_mtok: 10, output_per_mtok: 30 })),
})

/** REDIS_URL with another port (a relay, or one nothing listens on). */
const redisAt = (port: number) => {
	const u = new URL(REDIS_URL)
	u.port = String(port)
	return u.toString()
}

describe.skipIf(!ON_POSTGRES)('a change made through an instance that cannot reach Redis holds on the others at once', () => {
	let dep: Deployment
	let a: Server
	let d: Server
	let e: Server
	let relay: TcpProxy
	beforeAll(async () => {
		relay = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379), { targetHost: new URL(REDIS_URL).hostname })
		// One prefix for the three, as one deployment's instances share it; usage rows flushed quickly for the price test.
		dep = await deploy(config(), { LOG_LEVEL: 'warn', LEDGER_FLUSH_MS: '100', ...redisEnv(import.meta.path) })
		a = await dep.start()
		d = await dep.start({ REDIS_URL: redisAt(freePort()) })
		e = await dep.start({ REDIS_URL: redisAt(relay.port) })
	}, 60_000)
	afterAll(async () => {
		await dep?.close()
		relay?.stop()
	})

	/** A management call on `server`, with how long it took to answer. */
	async function admin(server: Server, path: string, init: { method?: string; body?: unknown } = {}) {
		const t0 = Date.now()
		const res = await fetch(server.url + path, {
			method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
			headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
			body: init.body === undefined ? undefined : JSON.stringify(init.body),
		})
		const text = await res.text()
		return { status: res.status, body: text ? JSON.parse(text) : undefined, ms: Date.now() - t0 }
	}
	const health = async (s: Server) => (await fetch(`${s.url}/health`)).json()

	/** A key used on A and on `via` (so A has it cached and holds a lease of it). */
	async function warmKey(via: Server, fields: Record<string, unknown> = {}) {
		const acct = await admin(a, '/api/accounts', { body: { name: 'degraded', balance: 5 } })
		const k = await admin(a, '/api/tokens', { body: { account_id: acct.body.id, name: 'k', ...fields } })
		expect(k.status).toBe(201)
		for (const s of [a, via]) expect((await call(s, k.body.key, 'm', 'chat', false, 'warm up')).status).toBe(200)
		return { id: k.body.id as number, key: k.body.key as string }
	}

	it('should start D with Redis unreachable, degraded', async () => {
		const h = await health(d)
		expect({ status: h.status, redis: h.redis, bus: h.bus }).toEqual({
			status: 'degraded',
			redis: { configured: true, reachable: false, subscribed: false },
			bus: { kind: 'redis', subscribed: false },
		})
		expect((await health(a)).status).toBe('ok')
	})

	it('should refuse on A a key disabled through D on its next request', async () => {
		const k = await warmKey(d)
		const r = await admin(d, `/api/tokens/${k.id}`, { method: 'PATCH', body: { status: 'disabled' } })
		expect(r.status).toBe(200)
		const o = await call(a, k.key, 'm', 'chat', false, 'after')
		console.log(`[Redis dead at start] key disabled through D: the call answered in ${r.ms} ms, A refused ${o.status}`)
		expect({ status: o.status, code: o.body?.code }).toEqual({ status: 401, code: 'api_key_disabled' })
		expect(r.ms).toBeLessThan(ACKED_MS)
	}, 20_000)

	it("should refuse on A a model taken off a key's allowed models through D on its next request", async () => {
		const k = await warmKey(d)
		expect((await call(a, k.key, 'dual', 'chat', false, 'allowed')).status).toBe(200)
		const r = await admin(d, `/api/tokens/${k.id}`, { method: 'PATCH', body: { allowed_models: ['m'] } })
		expect(r.status).toBe(200)
		const o = await call(a, k.key, 'dual', 'chat', false, 'no longer')
		console.log(`[Redis dead at start] allowed_models narrowed through D: the call answered in ${r.ms} ms, A answered ${o.status}`)
		expect(o.status).toBe(403)
		expect((await call(a, k.key, 'm', 'chat', false, 'still allowed')).status).toBe(200)
		expect(r.ms).toBeLessThan(ACKED_MS)
	}, 20_000)

	it('should stop routing on A to a channel disabled through D on its next request', async () => {
		const k = await warmKey(d)
		const ch = (await admin(a, '/api/channels')).body.data.find((c: any) => c.name === 'first')
		first.reset()
		second.reset()
		expect((await call(a, k.key, 'dual', 'chat', false, 'before')).status).toBe(200)
		expect([first.requests.length, second.requests.length]).toEqual([1, 0])
		const r = await admin(d, `/api/channels/${ch.id}/disable`, { method: 'POST' })
		expect(r.status).toBe(200)
		try {
			const o = await call(a, k.key, 'dual', 'chat', false, 'after')
			console.log(`[Redis dead at start] channel disabled through D: the call answered in ${r.ms} ms, A routed to ${first.requests.length > 1 ? 'it still' : 'the other'}`)
			expect(o.status).toBe(200)
			expect([first.requests.length, second.requests.length]).toEqual([1, 1])
			expect(r.ms).toBeLessThan(ACKED_MS)
		} finally {
			expect((await admin(a, `/api/channels/${ch.id}/enable`, { method: 'POST' })).status).toBe(200)
		}
		first.reset()
		expect((await call(a, k.key, 'dual', 'chat', false, 'enabled again')).status).toBe(200)
		expect(first.requests.length).toBe(1)
	}, 20_000)

	it('should bill on A at a price raised through D from its next request', async () => {
		const k = await warmKey(d)
		/** Each usage row of the key as the price it was billed at, a multiple of the first price (rows flushed by two instances: in no order). */
		const billedAt = () =>
			dep.withDb(async (db) =>
				(await db.sql.query<Record<string, string>>('SELECT cost, input_tokens, output_tokens FROM usage_logs WHERE token_id = $1', [k.id]))
					.map((r) => Number(r.cost) / (Number(r.input_tokens) * 10 + Number(r.output_tokens) * 30))
					.sort((x, y) => x - y),
			)
		expect((await call(a, k.key, 'm', 'chat', false, 'priced')).status).toBe(200)
		const model = (await admin(a, '/api/models')).body.data.find((m: any) => m.name === 'm')
		const r = await admin(d, `/api/models/${model.id}`, { method: 'PATCH', body: { input_per_mtok: 100, output_per_mtok: 300 } })
		expect(r.status).toBe(200)
		expect((await call(a, k.key, 'm', 'chat', false, 'priced')).status).toBe(200)
		await within(5_000, async () => (await billedAt()).length === 4)
		const prices = await billedAt()
		console.log(`[Redis dead at start] price raised tenfold through D: the call answered in ${r.ms} ms, A's rows billed at ${prices.join(', ')} times the old price`)
		// Both warm-up calls and the call before the change at the old price; the call after it at the new one.
		expect(prices).toEqual([1, 1, 1, 10])
		expect(r.ms).toBeLessThan(ACKED_MS)
	}, 20_000)

	it('should refuse on A a key disabled through E while E gets no answer from Redis (its connection stalled)', async () => {
		const k = await warmKey(e)
		relay.stall()
		const r = await admin(e, `/api/tokens/${k.id}`, { method: 'PATCH', body: { status: 'disabled' } })
		expect(r.status).toBe(200)
		const o = await call(a, k.key, 'm', 'chat', false, 'after')
		console.log(`[Redis stalled] key disabled through E: the call answered in ${r.ms} ms, A refused ${o.status}`)
		expect({ status: o.status, code: o.body?.code }).toEqual({ status: 401, code: 'api_key_disabled' })
		// Not held until E's heartbeat gives up on Redis (15 s and more): each PUBLISH Redis did not take within 0.5 s
		// went through NOTIFY (the invalidation, then the lease reclaim), and the acknowledgements came back that way.
		expect(r.ms).toBeLessThan(STALLED_MS)
	}, 20_000)

	it('should refuse on A a key disabled through E once Redis is cut from E', async () => {
		const k = await warmKey(e)
		relay.cut()
		await within(5_000, async () => (await health(e)).redis.subscribed === false)
		const r = await admin(e, `/api/tokens/${k.id}`, { method: 'PATCH', body: { status: 'disabled' } })
		expect(r.status).toBe(200)
		const o = await call(a, k.key, 'm', 'chat', false, 'after')
		console.log(`[Redis cut] key disabled through E: the call answered in ${r.ms} ms, A refused ${o.status}`)
		expect({ status: o.status, code: o.body?.code }).toEqual({ status: 401, code: 'api_key_disabled' })
		expect(r.ms).toBeLessThan(ACKED_MS)
		// And E joins again once Redis is back.
		await relay.restore()
		await within(10_000, async () => (await health(e)).status === 'ok')
	}, 30_000)
})
