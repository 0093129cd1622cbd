import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { loadEnv } from '../../../src/config/env'
import { GatewayError } from '../../../src/core/errors'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { createTestDb, type TestDb } from '../../helpers/db'
import { createToken, deleteToken, getToken } from '../../../src/modules/admin/tokens/service'
import { createAccount } from '../../../src/modules/admin/accounts/service'
import { createKeyCache } from '../../../src/auth/api-key'
import { sha256Hex } from '../../../src/lib/secrets'

import { redisEnv } from '../../helpers/redis'

let t: TestDb
let a: Services
let b: Services

beforeAll(async () => {
	t = await createTestDb()
	const env = loadEnv({ SECRET_KEY: 'test-secret-key-0123456789', ...redisEnv(import.meta.path) })
	a = await createServices(env, { db: t.db, log: silentLogger })
	b = await createServices(env, { db: t.db, log: silentLogger })
}, 120_000)
afterAll(async () => {
	await a.close()
	await b.close()
	await t.drop()
})

describe('key cache', () => {
	it('should serve a warm key without touching the database', async () => {
		const acct = await createAccount(t.db, 'k', 0)
		const { key } = await createToken(a, acct.id, { name: 'x' })
		await a.keys.authenticate(key)
		const query = t.db.sql.query
		let calls = 0
		t.db.sql.query = (...args) => {
			calls++
			return query(...args)
		}
		try {
			for (let i = 0; i < 100; i++) await a.keys.authenticate(key)
		} finally {
			t.db.sql.query = query
		}
		expect(calls).toBe(0)
	})

	it('should reject a deleted key on another instance within a second (Redis bus)', async () => {
		expect(b.bus.kind).toBe('redis')
		const acct = await createAccount(t.db, 'k', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'x' })
		expect((await b.keys.authenticate(key)).id).toBe(row.id) // warm on b
		await deleteToken(a, await getToken(a, row.id))
		await expect(a.keys.authenticate(key)).rejects.toBeInstanceOf(GatewayError) // at once here
		const deadline = Date.now() + 1000
		let rejected = false
		while (Date.now() < deadline && !rejected) {
			rejected = await b.keys.authenticate(key).then(
				() => false,
				() => true,
			)
			if (!rejected) await Bun.sleep(20)
		}
		expect(rejected).toBe(true)
	})
})

describe('key cache expiry', () => {
	/** A cache on the test database with its own clock, and a count of the lookups it sends. */
	function clocked(opts: { subscribed?: () => boolean; bus?: 'memory' | 'redis'; db?: 'pglite' | 'postgres' } = {}) {
		let clock = 1_000_000
		let lookups = 0
		const orm = t.db.orm
		const db = {
			...t.db,
			kind: opts.db ?? t.db.kind,
			orm: new Proxy(orm, {
				get(target, prop, receiver) {
					if (prop === 'select') lookups++
					return Reflect.get(target, prop, receiver)
				},
			}),
		}
		// A Redis bus whose subscription the test turns off and on (an outage).
		const local = { kind: opts.bus ?? 'redis', subscribe() {}, publish() {}, publishCounted: async () => 0, subscribed: opts.subscribed ?? (() => true) }
		const cache = createKeyCache(db as never, local as never, () => clock)
		return { cache, lookups: () => lookups, advance: (ms: number) => (clock += ms) }
	}

	it('should send one lookup for a burst of requests with a key it has not seen', async () => {
		const acct = await createAccount(t.db, 'burst', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'burst' })
		const c = clocked()
		const tokens = await Promise.all(Array.from({ length: 200 }, () => c.cache.authenticate(key)))
		expect(tokens.every((x) => x.id === row.id)).toBe(true)
		expect(c.lookups()).toBe(1)
	})

	it('should keep answering an expired valid key while one lookup refreshes it, then apply what the lookup found', async () => {
		const acct = await createAccount(t.db, 'stale', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'stale' })
		const c = clocked()
		await c.cache.authenticate(key)
		c.advance(61_000)
		// Disabled behind the cache's back (no invalidation): the expired entry still answers while it refreshes.
		await t.db.sql.query("UPDATE api_tokens SET status = 'disabled' WHERE id = $1", [row.id])
		const burst = await Promise.all(Array.from({ length: 50 }, () => c.cache.authenticate(key)))
		expect(burst.every((x) => x.id === row.id)).toBe(true)
		expect(c.lookups()).toBe(2)
		const deadline = Date.now() + 1000
		let err: unknown
		while (Date.now() < deadline && !err) {
			err = await c.cache.authenticate(key).then(
				() => undefined,
				(e: unknown) => e,
			)
			if (!err) await Bun.sleep(5)
		}
		expect((err as GatewayError).code).toBe('api_key_disabled')
	})

	it('should wait for the lookup of a key it last found unknown, so a new key works at once', async () => {
		const acct = await createAccount(t.db, 'late', 0)
		const c = clocked()
		const { key } = await createToken(a, acct.id, { name: 'late' })
		await t.db.sql.query("UPDATE api_tokens SET key_hash = 'x' || key_hash WHERE key_hash = $1", [sha256Hex(key)])
		await expect(c.cache.authenticate(key)).rejects.toBeInstanceOf(GatewayError)
		await t.db.sql.query("UPDATE api_tokens SET key_hash = substr(key_hash, 2) WHERE key_hash = $1", [`x${sha256Hex(key)}`])
		c.advance(2_001)
		expect((await c.cache.authenticate(key)).name).toBe('late')
	})

	it('should hand a warm, usable key over at once, and leave everything else to authenticate', async () => {
		const acct = await createAccount(t.db, 'now', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'now' })
		const c = clocked()
		// Not looked up yet: the cache does not know it.
		expect(c.cache.cached(key)).toBeUndefined()
		await c.cache.authenticate(key)
		expect(c.cache.cached(key)?.id).toBe(row.id)
		expect(c.lookups()).toBe(1)
		for (const bad of [undefined, '', 'sk-short', `pk-${key.slice(3)}`, `${key}x`]) expect(c.cache.cached(bad)).toBeUndefined()
		// Stale: authenticate answers and refreshes it.
		c.advance(61_000)
		expect(c.cache.cached(key)).toBeUndefined()
		// Disabled: only authenticate says why.
		await t.db.sql.query("UPDATE api_tokens SET status = 'disabled' WHERE id = $1", [row.id])
		c.cache.invalidate(sha256Hex(key))
		expect(c.cache.cached(key)).toBeUndefined()
		await expect(c.cache.authenticate(key)).rejects.toMatchObject({ code: 'api_key_disabled' })
		expect(c.cache.cached(key)).toBeUndefined()
	})

	it('should trust a cached key only briefly while the bus is not subscribed (revocations cannot arrive)', async () => {
		const acct = await createAccount(t.db, 'detached', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'detached' })
		let subscribed = true
		const c = clocked({ subscribed: () => subscribed })
		await c.cache.authenticate(key)
		c.advance(5_500)
		expect(c.cache.cached(key)?.id).toBe(row.id) // subscribed: the minute-long entry holds
		subscribed = false
		expect(c.cache.cached(key)).toBeUndefined() // not subscribed: older than 5 s is looked up again
		await t.db.sql.query("UPDATE api_tokens SET status = 'disabled' WHERE id = $1", [row.id])
		await c.cache.authenticate(key) // answered from the stale entry while one lookup refreshes it
		expect(c.lookups()).toBe(2)
		const deadline = Date.now() + 1000
		let err: unknown
		while (Date.now() < deadline && !err) {
			err = await c.cache.authenticate(key).then(
				() => undefined,
				(e: unknown) => e,
			)
			if (!err) await Bun.sleep(5)
		}
		expect((err as GatewayError).code).toBe('api_key_disabled')
	})

	it('should trust a cached key only briefly on a PostgreSQL shared without Redis (other instances cannot tell it)', async () => {
		const acct = await createAccount(t.db, 'no-redis', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'no-redis' })
		const shared = clocked({ bus: 'memory', db: 'postgres' })
		const alone = clocked({ bus: 'memory', db: 'pglite' })
		for (const c of [shared, alone]) await c.cache.authenticate(key)
		shared.advance(5_500)
		alone.advance(5_500)
		// PGlite has one process: its own bus hears every change. PostgreSQL may have other instances that do not.
		expect(alone.cache.cached(key)?.id).toBe(row.id)
		expect(shared.cache.cached(key)).toBeUndefined()
		await t.db.sql.query("UPDATE api_tokens SET status = 'disabled' WHERE id = $1", [row.id])
		await shared.cache.authenticate(key) // the stale entry answers while one lookup refreshes it
		const deadline = Date.now() + 1000
		let err: unknown
		while (Date.now() < deadline && !err) {
			err = await shared.cache.authenticate(key).then(
				() => undefined,
				(e: unknown) => e,
			)
			if (!err) await Bun.sleep(5)
		}
		expect((err as GatewayError).code).toBe('api_key_disabled')
	})

	for (const mode of [{ bus: 'redis', idleMs: 10 * 60_000 }, { bus: 'memory', db: 'postgres', idleMs: 60_000 }] as const)
		it(`should not answer once more from an entry long past its freshness (${mode.bus} bus): a key deleted unheard, then idle, waits for its lookup`, async () => {
			const acct = await createAccount(t.db, 'idle', 0)
			const { key, row } = await createToken(a, acct.id, { name: 'idle' })
			const c = clocked(mode)
			await c.cache.authenticate(key)
			// Deleted with no message reaching this cache (one missed while the bus was down, or an instance with none).
			await t.db.sql.query("UPDATE api_tokens SET status = 'deleted' WHERE id = $1", [row.id])
			c.advance(mode.idleMs)
			await expect(c.cache.authenticate(key)).rejects.toMatchObject({ code: 'invalid_api_key' })
			expect(c.lookups()).toBe(2)
		})

	it('should still answer a busy key from its entry while one lookup refreshes it, just past its freshness', async () => {
		const acct = await createAccount(t.db, 'busy', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'busy' })
		const c = clocked()
		await c.cache.authenticate(key)
		c.advance(60_500)
		// Answered at once from the entry, the refresh under way.
		expect((await c.cache.authenticate(key)).id).toBe(row.id)
		expect(c.lookups()).toBe(2)
	})

	it('should not hand over a key past its expiry', async () => {
		const acct = await createAccount(t.db, 'expiring', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'expiring' })
		const c = clocked()
		await t.db.sql.query('UPDATE api_tokens SET expires_at = $1 WHERE id = $2', [new Date(1_000_000 + 30_000).toISOString(), row.id])
		await c.cache.authenticate(key)
		expect(c.cache.cached(key)?.id).toBe(row.id)
		c.advance(30_000)
		expect(c.cache.cached(key)).toBeUndefined()
		await expect(c.cache.authenticate(key)).rejects.toMatchObject({ code: 'api_key_expired' })
	})
})
