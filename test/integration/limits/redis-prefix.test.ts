/**
 * REDIS_PREFIX keeps deployments that share one Redis apart: each counts rate limits under its own keys and hears
 * only its own bus channels, while the instances of one deployment (same prefix) still share both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { loadEnv } from '../../../src/config/env'
import { GatewayError } from '../../../src/core/errors'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { createTestDb, type TestDb } from '../../helpers/db'
import { REDIS_URL, redisPrefix } from '../../helpers/redis'

const PROD = `${redisPrefix(import.meta.path)}prod:`
const STAGING = `${redisPrefix(import.meta.path)}staging:`

let t: TestDb
/** Two instances of one deployment, and one of another deployment on the same Redis. */
let prod1: Services
let prod2: Services
let staging: Services
const direct = new Bun.RedisClient(REDIS_URL)

const start = (prefix: string) => createServices(loadEnv({ SECRET_KEY: 'test-secret-key-0123456789', REDIS_URL, REDIS_PREFIX: prefix }), { db: t.db, log: silentLogger })

beforeAll(async () => {
	t = await createTestDb()
	prod1 = await start(PROD)
	prod2 = await start(PROD)
	staging = await start(STAGING)
}, 120_000)
afterAll(async () => {
	for (const s of [prod1, prod2, staging]) await s.close()
	direct.close()
	await t.drop()
})

/** Whether `svc` admits one more request on key `keyId` limited to `rpm` a minute. */
const admits = (svc: Services, keyId: string, rpm: number) =>
	svc.limits.admit({ keyId, rpmLimit: rpm, tpmLimit: null })!.then(
		() => true,
		(e) => (e instanceof GatewayError && e.status === 429 ? false : Promise.reject(e)),
	)

/** Until each limiter counts in Redis under its own prefix (it counts in memory until connected). */
async function untilCountingInRedis(pairs: Array<[Services, string]>) {
	for (const [svc, prefix] of pairs) {
		const probe = `probe-${crypto.randomUUID()}`
		for (let i = 0; ; i++) {
			await admits(svc, probe, 1_000_000)
			if (await direct.get(`${prefix}sb:rpm:${probe}:${Math.floor(Date.now() / 60_000)}`)) break
			if (i > 200) throw new Error('the limiter never counted in Redis')
			await Bun.sleep(25)
		}
	}
}

describe('REDIS_PREFIX', () => {
	it('should count rate limits per prefix: one deployment does not use up the limit of another with the same key id', async () => {
		await untilCountingInRedis([
			[prod1, PROD],
			[prod2, PROD],
			[staging, STAGING],
		])
		// Key ids are database row ids, and two deployments' databases both start at 1.
		const keyId = `shared-${crypto.randomUUID()}`
		expect(await admits(prod1, keyId, 2)).toBe(true)
		expect(await admits(prod2, keyId, 2)).toBe(true)
		expect(await admits(prod1, keyId, 2)).toBe(false) // the same deployment shares the count
		expect(await admits(staging, keyId, 2)).toBe(true)
		expect(await admits(staging, keyId, 2)).toBe(true)
		expect(await admits(staging, keyId, 2)).toBe(false)
	})

	it('should keep bus messages within one prefix', async () => {
		const heard = { prod1: [] as string[], prod2: [] as string[], staging: [] as string[] }
		prod1.bus.subscribe('prefix-test', (m) => heard.prod1.push(m))
		prod2.bus.subscribe('prefix-test', (m) => heard.prod2.push(m))
		staging.bus.subscribe('prefix-test', (m) => heard.staging.push(m))
		for (const s of [prod1, prod2, staging]) await s.bus.ready()
		// PUBLISH answers how many subscriptions Redis handed the message to: the other prod instance only.
		expect(await prod1.bus.publishCounted('prefix-test', 'from prod')).toBe(1)
		expect(await staging.bus.publishCounted('prefix-test', 'from staging')).toBe(0)
		// A publisher hears its message at once and again as Redis' echo; wait for every echo and delivery.
		const all = () => heard.prod1.length === 2 && heard.prod2.length === 1 && heard.staging.length === 2
		for (let i = 0; i < 200 && !all(); i++) await Bun.sleep(10)
		expect(heard).toEqual({ prod1: ['from prod', 'from prod'], prod2: ['from prod'], staging: ['from staging', 'from staging'] })
	})
})
