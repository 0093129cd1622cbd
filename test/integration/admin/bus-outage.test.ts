/**
 * Two gateway instances on one database and one Redis, the second reaching Redis through a TCP relay the test cuts
 * and restores (QA report: after a 3 s Redis blip an instance never subscribed again, and one started while Redis was
 * down never joined, so keys deleted elsewhere kept working there).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import { GatewayError } from '../../../src/core/errors'
import { silentLogger } from '../../../src/lib/log'
import { createAccount } from '../../../src/modules/admin/accounts/service'
import { createToken, deleteToken, getToken } from '../../../src/modules/admin/tokens/service'
import { createServices, type Services } from '../../../src/services'
import { createTestDb, type TestDb } from '../../helpers/db'
import { redisPrefix } from '../../helpers/redis'
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy'

const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const env = (port: string) => loadEnv({ SECRET_KEY: 'test-secret-key-0123456789', REDIS_URL: `redis://${REDIS.hostname}:${port}/12`, REDIS_PREFIX: redisPrefix(import.meta.path) })

let t: TestDb
let a: Services
const opened: Array<{ close(): unknown }> = []

beforeAll(async () => {
	t = await createTestDb()
	a = await createServices(env(REDIS.port || '6379'), { db: t.db, log: silentLogger })
}, 120_000)
afterAll(async () => {
	for (const x of opened.reverse()) await x.close()
	await a.close()
	await t.drop()
})

async function instanceBehind(opts: { startCut?: boolean } = {}): Promise<{ b: Services; proxy: TcpProxy }> {
	const proxy = await startTcpProxy(Number(REDIS.port || 6379), { targetHost: REDIS.hostname, ...opts })
	opened.push({ close: () => proxy.stop() })
	const b = await createServices(env(String(proxy.port)), { db: t.db, log: silentLogger })
	opened.push(b)
	return { b, proxy }
}

async function health(svc: Services) {
	const res = await createApp(svc).handle(new Request('http://localhost/health'))
	return { status: res.status, body: (await res.json()) as { status: string; redis: { configured: boolean; reachable: boolean; subscribed: boolean } } }
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000) {
	const deadline = Date.now() + ms
	while (!(await cond())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
		await Bun.sleep(20)
	}
}

const refused = (svc: Services, key: string) =>
	svc.keys.authenticate(key).then(
		() => false,
		(e) => e instanceof GatewayError,
	)

describe('bus outage', () => {
	it('should drop the key cache when it subscribes again after a Redis blip, and hear deletions again', async () => {
		const { b, proxy } = await instanceBehind()
		expect(b.bus.subscribed()).toBe(true)
		const acct = await createAccount(t.db, 'blip', 0)
		const first = await createToken(a, acct.id, { name: 'first' })
		const second = await createToken(a, acct.id, { name: 'second' })
		await b.keys.authenticate(first.key) // warm on b
		await b.keys.authenticate(second.key)

		proxy.cut()
		await until('b notices the cut', () => !b.bus.subscribed())
		const down = await health(b)
		expect(down.status).toBe(200) // still serving, with per-instance state
		expect(down.body.status).toBe('degraded')
		expect(down.body.redis).toEqual({ configured: true, reachable: false, subscribed: false })

		// Deleted on a while b cannot hear it.
		await deleteToken(a, await getToken(a, first.row.id))
		await Bun.sleep(500)
		await proxy.restore()
		await until('b is subscribed again', () => b.bus.subscribed())
		// Whatever b cached before may be stale: nothing is served from the cache without a fresh lookup.
		expect(b.keys.cached(first.key)).toBeUndefined()
		expect(b.keys.cached(second.key)).toBeUndefined()
		expect(await refused(b, first.key)).toBe(true)
		expect((await b.keys.authenticate(second.key)).name).toBe('second')
		expect((await health(b)).body).toMatchObject({ status: 'ok', redis: { configured: true, reachable: true, subscribed: true } })

		// And it hears the next deletion at once again.
		await deleteToken(a, await getToken(a, second.row.id))
		await until('b refuses the second key', () => refused(b, second.key), 2_000)
	})

	it('should join the bus once Redis is reachable when it was down at start', async () => {
		const { b, proxy } = await instanceBehind({ startCut: true })
		expect(b.bus.kind).toBe('redis')
		expect(b.bus.subscribed()).toBe(false)
		expect((await health(b)).body).toMatchObject({ status: 'degraded', redis: { subscribed: false } })

		await proxy.restore()
		await until('b is subscribed', () => b.bus.subscribed())
		const acct = await createAccount(t.db, 'late', 0)
		const { key, row } = await createToken(a, acct.id, { name: 'late' })
		await b.keys.authenticate(key)
		await deleteToken(a, await getToken(a, row.id))
		await until('b refuses the deleted key', () => refused(b, key), 2_000)
		expect((await health(b)).body.status).toBe('ok')
	})
})
