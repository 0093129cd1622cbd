/**
 * Concurrency (issue 4): bursts of 200 requests, half streaming, half OpenAI and half Anthropic, against a key whose
 * spend limit affords about ten answers, and against an account whose balance affords about ten; then the same from
 * two gateway instances on one database (PostgreSQL: two connection pools; PGlite: one shared Db, since PGlite is
 * single-process). The limit and the balance are never passed, every answer is paid exactly once, every refusal is a
 * 402 in the caller's shape, and the ledger invariant holds with no hold left open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import { type Db, openDb } from '../../../src/db/client'
import { memoryBus } from '../../../src/lib/bus'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { ADMIN_KEY } from '../../helpers/app'
import { createTestDb, type TestDb } from '../../helpers/db'
import { expectLedgerInvariant } from './invariant'
import { answerText, body, errorOf, post, type Proto } from './rig'

const N = 200
/** USD per million tokens, so one answer costs a few cents: 1,000 µ$ per input token, 2,000 per output token. */
const PRICE = { input_per_mtok: 1000, output_per_mtok: 2000 }
const MAX_TOKENS = 10

type Instance = { url: string; svc: Services; stop(): Promise<void> }

let mock: VendorMock
let tdb: TestDb
const instances: Instance[] = []

/** The instances' shared bus, as Redis would be between processes (leases are reclaimed through it). */
const bus = memoryBus()

async function startInstance(db: Db): Promise<Instance> {
	const env = loadEnv({ ADMIN_KEY, SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'error' })
	const svc = await createServices(env, {
		db,
		bus,
		log: silentLogger,
		config: {
			channels: [{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['burst'], model_map: { burst: 'gpt-4o-mini' } }],
			models: [{ name: 'burst', ...PRICE }],
		},
	})
	const app = createApp(svc).listen({ port: 0, hostname: '127.0.0.1', idleTimeout: 60 })
	return {
		url: `http://127.0.0.1:${app.server!.port}`,
		svc,
		async stop() {
			await app.stop(true)
			await svc.close()
		},
	}
}

beforeAll(async () => {
	// Every answer waits a little, so a burst is in flight all at once (each reserves before any settles).
	mock = await startOpenAIMock({ apiKey: 'up-key', delayMs: 150, record: false })
	tdb = await createTestDb()
	instances.push(await startInstance(tdb.db))
	// The second instance: its own connection pool on PostgreSQL; on PGlite the one in-process database.
	instances.push(await startInstance(tdb.url ? await openDb(tdb.url) : tdb.db))
}, 60_000)

afterAll(async () => {
	for (const i of instances.reverse()) {
		await i.stop()
		if (i.svc.db !== tdb.db) await i.svc.db.sql.close()
	}
	await tdb.drop()
	await mock.stop()
})

async function admin(path: string, b: unknown) {
	const res = await fetch(instances[0]!.url + path, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(b) })
	const json = (await res.json()) as { id: number; key: string }
	if (res.status !== 201) throw new Error(`${path}: ${JSON.stringify(json)}`)
	return json
}

/** One answer's cost and the worst case the gateway reserves for it, both measured (the reservation is read while in flight). */
async function measureOne(proto: Proto): Promise<{ cost: number; reserve: number }> {
	const acct = await admin('/api/accounts', { name: 'probe', balance: 10 })
	const tok = await admin('/api/tokens', { account_id: acct.id, name: 'probe' })
	const answer = post(instances[0]!.url, proto, tok.key, body('burst', 'concurrent request', false, MAX_TOKENS))
	let reserve = 0
	for (let i = 0; i < 100 && !reserve; i++) {
		reserve = instances[0]!.svc.ledger.leases().find((l) => l.tokenId === tok.id)?.inUse ?? 0
		if (!reserve) await Bun.sleep(5)
	}
	expect((await answer).status).toBe(200)
	await instances[0]!.svc.ledger.flush()
	const [u] = await tdb.db.sql.query<{ cost: number }>('SELECT cost FROM usage_logs WHERE token_id = $1', [tok.id])
	expect(reserve).toBeGreaterThanOrEqual(u!.cost)
	return { cost: u!.cost, reserve }
}

/** Fires N requests at once, spread over the instances, both protocols, half streaming. */
async function burst(key: string, over: Instance[]) {
	return Promise.all(
		Array.from({ length: N }, async (_, i) => {
			const proto: Proto = i % 2 ? 'messages' : 'chat'
			const a = await post(over[i % over.length]!.url, proto, key, body('burst', 'concurrent request', i % 4 < 2, MAX_TOKENS))
			if (a.status !== 200) expect(errorOf(proto, a.json).message).toBeTruthy()
			else expect(answerText(proto, a)).toBe('Hello! You said: concurrent request')
			return a.status
		}),
	)
}

/** Checks one burst's outcome against the database: refusals are 402, each answer is charged once and the same. */
async function checkBurst(statuses: number[], tokenId: number, cost: number) {
	const ok = statuses.filter((s) => s === 200).length
	expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([])
	for (const i of instances) await i.svc.ledger.flush()
	const rows = await tdb.db.sql.query<{ cost: number; status: number }>('SELECT cost, status FROM usage_logs WHERE token_id = $1', [tokenId])
	expect(rows).toHaveLength(ok)
	expect(rows.every((r) => r.status === 200 && r.cost === cost)).toBe(true)
	const t = await expectLedgerInvariant(tdb.db.sql)
	expect(t.inUse).toBe(0)
	const [key] = t.keys.filter((k) => k.id === tokenId)
	expect(key!.spent).toBe(ok * cost)
	const account = t.accounts.find((a) => a.id === key!.account_id)!
	// The balance as the API shows it: what is not spent, wherever the instances' leases hold it.
	return { ok, key: key!, account: { ...account, balance: account.balance + account.held } }
}

describe(`concurrency: ${N} requests at once`, () => {
	let cost = 0
	let reserve = 0
	beforeAll(async () => {
		const [chat, messages] = [await measureOne('chat'), await measureOne('messages')]
		expect(messages.cost).toBe(chat.cost)
		cost = chat.cost
		reserve = Math.max(chat.reserve, messages.reserve)
	})

	for (const spread of [1, 2])
		it(`should never take a key past its spend limit (${spread} instance${spread > 1 ? 's' : ''})`, async () => {
			const acct = await admin('/api/accounts', { name: 'rich', balance: 100 })
			const limit = 10 * cost
			const tok = await admin('/api/tokens', { account_id: acct.id, name: 'limited', spend_limit: limit / 1e6 })
			const statuses = await burst(tok.key, instances.slice(0, spread))
			const r = await checkBurst(statuses, tok.id, cost)
			expect(r.key.spent).toBeLessThanOrEqual(limit)
			// At least as many as the limit covers at the worst case; at most as many as it covers at the real cost.
			expect(r.ok).toBeGreaterThanOrEqual(Math.floor(limit / reserve))
			expect(r.ok).toBeLessThanOrEqual(10)
			expect(r.account.balance).toBe(100e6 - r.ok * cost)
		})

	for (const spread of [1, 2])
		it(`should never take an account below zero (${spread} instance${spread > 1 ? 's' : ''})`, async () => {
			const balance = 10 * cost
			const acct = await admin('/api/accounts', { name: 'poor', balance: balance / 1e6 })
			const tok = await admin('/api/tokens', { account_id: acct.id, name: 'unlimited' })
			const statuses = await burst(tok.key, instances.slice(0, spread))
			const r = await checkBurst(statuses, tok.id, cost)
			expect(r.account.balance).toBe(balance - r.ok * cost)
			expect(r.account.balance).toBeGreaterThanOrEqual(0)
			expect(r.ok).toBeGreaterThanOrEqual(Math.floor(balance / reserve))
			expect(r.ok).toBeLessThanOrEqual(10)
		})
})
