import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { loadEnv } from '../../../src/config/env'
import { GatewayError } from '../../../src/core/errors'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { createTestDb, type TestDb } from '../../helpers/db'
import { createToken, deleteToken, getToken } from '../../../src/modules/admin/tokens/service'
import { createAccount } from '../../../src/modules/admin/accounts/service'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

let t: TestDb
let a: Services
let b: Services

beforeAll(async () => {
	t = await createTestDb()
	const env = loadEnv({ SECRET_KEY: 'test-secret-key-0123456789', REDIS_URL })
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
