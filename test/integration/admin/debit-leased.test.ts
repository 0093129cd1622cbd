/**
 * Removing money that another instance has leased (QA report, item 4): two gateway instances on one database
 * (PostgreSQL with DATABASE_URL: two connection pools; PGlite: one shared Db), joined by a bus that delivers a moment
 * after publishing, as Redis does. The balance the API shows counts the unused part of every lease; a debit of that
 * much succeeds once the other instance has given its lease back, money held by a request in flight is never taken,
 * and the ledger invariant holds throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import { type Db, openDb } from '../../../src/db/client'
import { type Bus, memoryBus } from '../../../src/lib/bus'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { ADMIN_KEY } from '../../helpers/app'
import { createTestDb, type TestDb } from '../../helpers/db'
import { expectLedgerInvariant } from '../resilience/invariant'
import { watchLateness } from '../../helpers/lateness'

/** USD per million tokens: an answer costs a few cents, and its reservation more. */
const PRICE = { input_per_mtok: 1000, output_per_mtok: 2000 }

type Instance = { url: string; svc: Services; stop(): Promise<void> }

let mock: VendorMock
let tdb: TestDb
let a: Instance
let b: Instance

/** A shared bus whose messages arrive 40 ms after `publish` returns, to every instance (Redis pub/sub's round trip). */
function laggingBus(ms: number): Bus {
	const inner = memoryBus()
	return { ...inner, publish: (topic, message) => void setTimeout(() => inner.publish(topic, message), ms) }
}
const bus = laggingBus(40)

async function startInstance(db: Db): Promise<Instance> {
	const env = loadEnv({ ADMIN_KEY, SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'error' })
	const svc = await createServices(env, {
		db,
		bus,
		log: silentLogger,
		config: {
			channels: [{ name: 'up', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['m'], model_map: { m: 'gpt-4o-mini' } }],
			models: [{ name: 'm', ...PRICE }],
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
	mock = await startOpenAIMock({ apiKey: 'up-key', record: false })
	tdb = await createTestDb()
	a = await startInstance(tdb.db)
	b = await startInstance(tdb.url ? await openDb(tdb.url) : tdb.db)
}, 60_000)

afterAll(async () => {
	for (const i of [b, a]) {
		await i.stop()
		if (i.svc.db !== tdb.db) await i.svc.db.sql.close()
	}
	await tdb.drop()
	await mock.stop()
})

async function admin(at: Instance, path: string, body?: unknown) {
	const res = await fetch(at.url + path, {
		method: body ? 'POST' : 'GET',
		headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
		body: body ? JSON.stringify(body) : undefined,
	})
	return { status: res.status, body: (await res.json()) as any }
}

async function account(balance: number) {
	const acct = await admin(a, '/api/accounts', { name: 'leased', balance })
	const tok = await admin(a, '/api/tokens', { account_id: acct.body.id, name: 'k' })
	return { id: acct.body.id as number, key: tok.body.key as string }
}

const chat = (at: Instance, key: string) =>
	fetch(`${at.url}/v1/chat/completions`, {
		method: 'POST',
		headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
	})

/** The `balance` column (what no lease holds) and what instance `at` holds in leases on the account. */
async function column(id: number) {
	const [r] = await tdb.db.sql.query<{ balance: number }>('SELECT balance FROM accounts WHERE id = $1', [id])
	return r!.balance
}
const leased = (at: Instance, id: number) => at.svc.ledger.leases().filter((l) => l.accountId === id)

describe('debit of leased money', () => {
	it('should remove the whole balance the API shows while another instance holds a lease on it', async () => {
		const { id, key } = await account(1)
		expect((await chat(b, key)).status).toBe(200)
		await b.svc.ledger.flush()
		// b leased more than that one answer cost, and keeps the lease (it goes back after LEASE_IDLE_MS).
		expect(leased(b, id).length).toBe(1)
		const shown = (await admin(a, `/api/accounts/${id}`)).body.balance as number
		expect(shown).toBeLessThan(1)
		expect(await column(id)).toBeLessThan(Math.round(shown * 1e6))

		const debit = await admin(a, `/api/accounts/${id}/credit`, { amount: -shown })
		expect(debit.status).toBe(200)
		expect(debit.body).toEqual({ balance: 0 })
		expect((await admin(a, `/api/accounts/${id}`)).body.balance).toBe(0)
		expect(await column(id)).toBe(0)
		// Nothing is left to spend, on either instance.
		expect((await chat(b, key)).status).toBe(402)
		expect((await chat(a, key)).status).toBe(402)
		await expectLedgerInvariant(tdb.db.sql, a.svc.ledger, b.svc.ledger)
	})

	it('should refuse at once a debit past the balance shown, taking nothing', async () => {
		const { id, key } = await account(1)
		expect((await chat(b, key)).status).toBe(200)
		await b.svc.ledger.flush()
		const shown = (await admin(a, `/api/accounts/${id}`)).body.balance as number
		const started = Date.now()
		const lateness = watchLateness()
		const over = await admin(a, `/api/accounts/${id}/credit`, { amount: -(shown + 0.01) })
		expect(over.status).toBe(400)
		expect(over.body.error).toMatchObject({ param: 'amount', message: 'amount would take the balance below zero' })
		expect(Date.now() - started).toBeLessThan(1_000 + lateness.stop())
		expect((await admin(a, `/api/accounts/${id}`)).body.balance).toBe(shown)
		await expectLedgerInvariant(tdb.db.sql, a.svc.ledger, b.svc.ledger)
	})

	it('should never take what a request in flight on the other instance holds', async () => {
		const { id, key } = await account(1)
		// The answer comes late: its reservation is in use on b meanwhile.
		mock.faultOnce = { kind: 'slow', firstByteMs: 600 }
		const answer = chat(b, key)
		let inUse = 0
		for (let i = 0; i < 200 && !inUse; i++) {
			inUse = leased(b, id).reduce((s, l) => s + l.inUse, 0)
			if (!inUse) await Bun.sleep(5)
		}
		expect(inUse).toBeGreaterThan(0)
		await b.svc.ledger.flush()
		// The balance shown leaves out what the request holds; all of it can be removed, and not a micro-dollar more.
		const shown = (await admin(a, `/api/accounts/${id}`)).body.balance as number
		expect(Math.round((1 - shown) * 1e6)).toBe(inUse)
		expect((await admin(a, `/api/accounts/${id}/credit`, { amount: -shown })).status).toBe(200)
		expect((await admin(a, `/api/accounts/${id}/credit`, { amount: -0.000001 })).status).toBe(400)
		// The request still finishes and is paid from what it held; the rest of its hold comes back.
		expect((await answer).status).toBe(200)
		const t = await expectLedgerInvariant(tdb.db.sql, a.svc.ledger, b.svc.ledger)
		const row = t.accounts.find((x) => x.id === id)!
		expect(row.used).toBeGreaterThan(0)
		expect(row.used).toBeLessThanOrEqual(inUse)
		expect(row.balance + row.held).toBe(inUse - row.used)
	})
})
