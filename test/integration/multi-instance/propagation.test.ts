/**
 * What one instance changes reaches the other, as an operator of two gateway processes on one PostgreSQL checks it:
 * a key deleted, disabled or its limit lowered through the management API of A, a channel disabled or its upstream
 * key replaced on A, while a client keeps calling B. With Redis, and without it through PostgreSQL LISTEN/NOTIFY, the
 * change holds on B's very next request (the management call answers once every instance applied it). When B's
 * LISTEN session is killed, what changed meanwhile holds on B once it listens again (it resyncs), and until then
 * within 5 s (it polls; README "Running several instances"). Each test prints the time it measured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { startOpenAIMock, type MockOptions, type VendorMock } from '../../mocks'
import { call, keyBooks, noteSkip, ON_POSTGRES, type Outcome, type Pair, type Server, startPair, within } from './pair'

noteSkip(import.meta.path)

/** While an instance's bus is down, how soon a change made on another holds on it (it polls; README). */
const DETACHED_MS = 5_000
/** Slack for a poll's own round trip and the lookup the first stale request sets off. */
const SLACK_MS = 700

let first: VendorMock
let second: VendorMock
/** The options object of `rotating`: its key is changed as a vendor rotating the key would. */
const rotatingOpts: MockOptions = { apiKey: 'up-old' }
let rotating: VendorMock
beforeAll(async () => {
	if (!ON_POSTGRES) return
	first = await startOpenAIMock({ apiKey: 'up-1' })
	second = await startOpenAIMock({ apiKey: 'up-2' })
	rotating = await startOpenAIMock(rotatingOpts)
})
afterAll(async () => {
	await first?.stop()
	await second?.stop()
	await rotating?.stop()
})

const config = (): GatewayConfig => ({
	channels: [
		{ name: 'first', type: 'openai', base_url: first.url, api_key: 'up-1', models: ['m', 'dual'], model_map: { m: 'gpt-4o-mini', dual: 'gpt-4o-mini' }, priority: 0 },
		{ name: 'second', type: 'openai', base_url: second.url, api_key: 'up-2', models: ['dual'], model_map: { dual: 'gpt-4o-mini' }, priority: 1 },
		{ name: 'rotating', type: 'openai', base_url: rotating.url, api_key: 'up-old', models: ['rot'], model_map: { rot: 'gpt-4o-mini' } },
	],
	models: ['m', 'dual', 'rot'].map((name) => ({ name, input_per_mtok: 10, output_per_mtok: 30 })),
})

/**
 * Calls B every 100 ms (chat, not streamed) from the moment the change answered, until `done` holds for an outcome;
 * returns how long after the change it took and the outcomes seen before.
 */
async function pollUntil(server: Server, key: string, model: string, done: (o: Outcome) => boolean | Promise<boolean>, limitMs: number) {
	const t0 = Date.now()
	const before: Outcome[] = []
	for (;;) {
		const o = await call(server, key, model, 'chat', false, 'are you still there')
		if (await done(o)) return { ms: Date.now() - t0, before, last: o }
		before.push(o)
		if (Date.now() - t0 > limitMs) throw new Error(`still not changed after ${Date.now() - t0} ms: last ${JSON.stringify(o)}`)
		await Bun.sleep(100)
	}
}

for (const redis of [true, false]) {
	const mode = redis ? 'with Redis' : 'without Redis (PostgreSQL LISTEN/NOTIFY)'
	describe.skipIf(!ON_POSTGRES)(`a change on instance A reaches instance B (${mode})`, () => {
		let p: Pair
		beforeAll(async () => {
			p = await startPair(import.meta.path, config(), { redis })
		}, 30_000)
		afterAll(() => p?.close())

		/** A key used on both instances (so each has it cached and holds a lease of it). */
		async function warmKey(fields: Record<string, unknown> = {}) {
			const { accountId, tokens } = await p.account(5, [fields])
			for (const s of [p.a, p.b]) expect((await call(s, tokens[0]!.key, 'm', 'chat', false, 'warm up')).status).toBe(200)
			return { accountId, ...tokens[0]! }
		}

		it(`should refuse on B a key deleted on A at once`, async () => {
			const k = await warmKey()
			expect((await p.admin(`/api/tokens/${k.id}`, { method: 'DELETE' })).status).toBe(200)
			const r = await pollUntil(p.b, k.key, 'm', (o) => o.status === 401, SLACK_MS)
			console.log(`[${mode}] key deleted on A: refused on B after ${r.ms} ms, ${r.before.length} answered meanwhile`)
			expect(r.last.body).toMatchObject({ code: 'invalid_api_key' })
			expect(r.before).toEqual([])
		}, 20_000)

		it('should refuse on B a key deleted on A when B is next called, however long after (not once more from its cache)', async () => {
			const k = await warmKey()
			expect((await p.admin(`/api/tokens/${k.id}`, { method: 'DELETE' })).status).toBe(200)
			// B is not called while its cached copy of the key goes stale: its next call comes past the 5 s.
			await Bun.sleep(DETACHED_MS + 300)
			const o = await call(p.b, k.key, 'm', 'messages', false, 'long after')
			expect({ status: o.status, body: o.body }).toMatchObject({ status: 401, body: { error: { type: 'authentication_error' } } })
		}, 20_000)

		it(`should refuse on B a key disabled on A at once`, async () => {
			const k = await warmKey()
			expect((await p.admin(`/api/tokens/${k.id}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200)
			const r = await pollUntil(p.b, k.key, 'm', (o) => o.status === 401, SLACK_MS)
			console.log(`[${mode}] key disabled on A: refused on B after ${r.ms} ms, ${r.before.length} answered meanwhile`)
			expect(r.last.body.code).toBe('api_key_disabled')
			expect(r.before).toEqual([])
		}, 20_000)

		it(`should refuse on B a key whose limit A lowered below its spend at once, B's lease of it notwithstanding`, async () => {
			const k = await warmKey({ spend_limit: 1 })
			// A large request on B leases B a large slice of the key's $1 (a quarter of it): enough for a thousand of the polls.
			expect((await call(p.b, k.key, 'm', 'chat', false, 'a large reservation', 4000)).status).toBe(200)
			const spentBefore = (await keyBooks(p.dep, k.id)).spent
			expect((await p.admin(`/api/tokens/${k.id}`, { method: 'PATCH', body: { spend_limit: 0.000001 } })).status).toBe(200)
			const r = await pollUntil(p.b, k.key, 'm', (o) => o.status === 402, SLACK_MS)
			console.log(`[${mode}] limit lowered on A: refused on B after ${r.ms} ms, ${r.before.length} answered meanwhile`)
			expect(r.last.body).toMatchObject({ code: 'insufficient_quota' })
			expect(r.before).toEqual([])
			// A answers the same.
			expect((await call(p.a, k.key, 'm', 'messages', false, 'and here')).status).toBe(402)
			// What B answered meanwhile is all that was spent past the new limit.
			await Bun.sleep(300)
			const after = await keyBooks(p.dep, k.id)
			expect(after.spent).toBe(after.used)
			expect(after.okRows).toBe(3 + r.before.length)
			expect(after.spent).toBeGreaterThanOrEqual(spentBefore)
		}, 20_000)

		it(`should stop routing to a channel disabled on A at once on B`, async () => {
			const k = await warmKey()
			const ch = (await p.admin('/api/channels')).body.data.find((c: any) => c.name === 'first')
			first.reset()
			second.reset()
			expect((await call(p.b, k.key, 'dual', 'chat', false, 'before')).status).toBe(200)
			expect([first.requests.length, second.requests.length]).toEqual([1, 0])
			expect((await p.admin(`/api/channels/${ch.id}/disable`, { method: 'POST' })).status).toBe(200)
			try {
				const r = await pollUntil(p.b, k.key, 'dual', (o) => o.status === 200 && second.requests.length > 0, SLACK_MS)
				console.log(`[${mode}] channel disabled on A: B moved off it after ${r.ms} ms, ${r.before.length} calls to it meanwhile`)
				expect(r.before).toEqual([])
				const onFirst = first.requests.length
				expect((await call(p.b, k.key, 'dual', 'messages', true, 'after')).status).toBe(200)
				expect(first.requests.length).toBe(onFirst)
			} finally {
				expect((await p.admin(`/api/channels/${ch.id}/enable`, { method: 'POST' })).status).toBe(200)
				// Back in use on B before the next test.
				first.reset()
				await pollUntil(p.b, k.key, 'dual', (o) => o.status === 200 && first.requests.length > 0, SLACK_MS)
			}
		}, 20_000)

		it(`should send B's calls with a channel key replaced on A at once, the channel left enabled`, async () => {
			const k = await warmKey()
			rotatingOpts.apiKey = 'up-old'
			expect((await call(p.b, k.key, 'rot', 'chat', false, 'before')).status).toBe(200)
			const ch = (await p.admin('/api/channels')).body.data.find((c: any) => c.name === 'rotating')
			// The vendor key leaked: the operator revokes it at the vendor and gives the channel the new one on A.
			rotatingOpts.apiKey = 'up-new'
			expect((await p.admin(`/api/channels/${ch.id}`, { method: 'PATCH', body: { api_key: 'up-new' } })).status).toBe(200)
			rotating.reset()
			const r = await pollUntil(p.b, k.key, 'rot', (o) => o.status === 200, SLACK_MS)
			console.log(`[${mode}] channel key replaced on A: B used the new one after ${r.ms} ms, ${r.before.length} refused meanwhile`)
			expect(r.before).toEqual([])
			expect(rotating.requests.at(-1)!.headers.authorization).toBe('Bearer up-new')
			// A call B made with the old key before it heard of the new one must not have disabled the channel the
			// operator just repaired.
			const now = (await p.admin(`/api/channels/${ch.id}`)).body
			expect({ status: now.status, reason: now.disabled_reason ?? null }).toEqual({ status: 'enabled', reason: null })
			for (const s of [p.a, p.b]) expect((await call(s, k.key, 'rot', 'messages', false, 'after')).status).toBe(200)
		}, 20_000)
	})
}

describe.skipIf(!ON_POSTGRES)("B's LISTEN session killed (without Redis)", () => {
	let p: Pair
	beforeAll(async () => {
		p = await startPair(import.meta.path, config(), { redis: false })
	}, 30_000)
	afterAll(() => p?.close())

	/** B's bus session (its application_name names B's pid), as an operator finds it. */
	const listenerPid = () =>
		p.dep.withDb(async (db) => (await db.sql.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`switchboard-bus/${p.b.proc.pid}`]))[0]?.pid)
	const busOf = async (s: Server) => (await (await fetch(`${s.url}/health`)).json()).bus

	it('should apply on B what changed while it was not listening, and hear A at once again once it listens', async () => {
		expect(await busOf(p.b)).toEqual({ kind: 'postgres', subscribed: true })
		const { tokens } = await p.account(5, [{}, {}, {}])
		const [quiet, viaApi, later] = tokens as [{ id: number; key: string }, { id: number; key: string }, { id: number; key: string }]
		for (const k of tokens) for (const s of [p.a, p.b]) expect((await call(s, k.key, 'm', 'chat', false, 'warm up')).status).toBe(200)
		const pid = await listenerPid()
		expect(pid).toBeNumber()
		// One statement: a key deleted with no instance told (as by an instance whose message B missed), then B's session
		// killed, so B cannot have heard of it before it reconnects.
		await p.dep.withDb((db) => db.sql.query(`WITH d AS (UPDATE api_tokens SET status = 'deleted' WHERE id = $1) SELECT pg_terminate_backend($2)`, [quiet.id, pid]))
		// And one deleted through A while B is (most likely still) reconnecting.
		expect((await p.admin(`/api/tokens/${viaApi.id}`, { method: 'DELETE' })).status).toBe(200)
		const back = await within(5_000, async () => {
			const now = await listenerPid()
			return now !== undefined && now !== pid && (await busOf(p.b)).subscribed
		}, 20)
		console.log(`[LISTEN killed] B listened again after ${back} ms`)
		for (const k of [quiet, viaApi]) {
			const o = await call(p.b, k.key, 'm', 'chat', false, 'after the cut')
			expect({ status: o.status, code: o.body?.code }).toEqual({ status: 401, code: 'invalid_api_key' })
		}
		// Heard at once again.
		expect((await p.admin(`/api/tokens/${later.id}`, { method: 'PATCH', body: { status: 'disabled' } })).status).toBe(200)
		const o = await call(p.b, later.key, 'm', 'messages', false, 'and now')
		expect({ status: o.status, type: o.body?.error?.type }).toEqual({ status: 401, type: 'authentication_error' })
	}, 30_000)
})
