/**
 * A start that changed the catalog through GATEWAY_CONFIG tells the other running instances (bus topic
 * `catalog-changed`, as the management API does), so they serve the new channels and prices at once rather than after
 * their 30 s backstop reload (QA operator report, minor observations). A start with an unchanged config tells no one.
 * Two instances in one process on one database and one bus, as instances share PostgreSQL and Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import type { GatewayConfig } from '../../../src/config/gateway-file'
import { type Bus, memoryBus } from '../../../src/lib/bus'
import { silentLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { createTestDb, type TestDb } from '../../helpers/db'
import { startOpenAIMock, type VendorMock } from '../../mocks'

const UP_KEY = 'up-config-publish-key'
const env = loadEnv({ ADMIN_KEY: 'test-admin-key-0123456789', SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'error' })

let t: TestDb
let mock: VendorMock
/** The bus the instances share, and every topic published on it. */
let bus: Bus
const published: string[] = []
let running: Services
let server: { stop(closeActive?: boolean): unknown }
let client: OpenAI
const started: Services[] = []

const config = (models: string[]): GatewayConfig => ({
	channels: models.map((m) => ({ name: `ch-${m}`, type: 'openai', base_url: mock.url, api_key: UP_KEY, models: [m], model_map: { [m]: 'gpt-4o-mini' } })),
	models: models.map((m) => ({ name: m, input_per_mtok: 1, output_per_mtok: 2 })),
})

/** Another instance starting on the same database and bus with this config (a restart with a new GATEWAY_CONFIG). */
async function startInstance(cfg: GatewayConfig) {
	const svc = await createServices(env, { db: t.db, bus, config: cfg, log: silentLogger })
	started.push(svc)
	return svc
}

beforeAll(async () => {
	t = await createTestDb()
	mock = await startOpenAIMock({ apiKey: UP_KEY })
	const inner = memoryBus()
	bus = {
		...inner,
		publish(topic, message) {
			published.push(topic)
			inner.publish(topic, message)
		},
	}
	running = await startInstance(config(['pub-a']))
	const app = createApp(running).listen({ port: 0, hostname: '127.0.0.1' })
	server = app.server!
	const acct = await running.db.sql.query<{ id: number }>(`INSERT INTO accounts (name, balance) VALUES ('pub', 10000000) RETURNING id`)
	const res = await fetch(`http://127.0.0.1:${app.server!.port}/api/tokens`, {
		method: 'POST',
		headers: { authorization: `Bearer ${env.adminKey}`, 'content-type': 'application/json' },
		body: JSON.stringify({ account_id: acct[0]!.id, name: 'k' }),
	})
	const key = ((await res.json()) as { key: string }).key
	client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${app.server!.port}/v1`, maxRetries: 0 })
}, 120_000)
afterAll(async () => {
	await server.stop(true)
	for (const s of started) await s.close()
	await mock.stop()
	await t.drop()
})

const ask = (model: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })

/** Asks until `ok` holds for the outcome, for at most 2 s (the backstop reload would take up to 30 s). */
async function within2s(model: string, ok: (r: unknown) => boolean) {
	const deadline = Date.now() + 2_000
	for (;;) {
		const r = await ask(model).catch((e: unknown) => e)
		if (ok(r) || Date.now() > deadline) return r
		await Bun.sleep(20)
	}
}

describe('a start with a changed GATEWAY_CONFIG', () => {
	it('should make the running instance serve the new model at once', async () => {
		expect((await ask('pub-a')).choices[0]!.message.content).toBe('Hello! You said: hi')
		const before = (await ask('pub-b').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
		expect(before.status).toBe(404)
		published.length = 0
		await startInstance(config(['pub-a', 'pub-b']))
		expect(published).toContain('catalog-changed')
		// The running instance reloads when the new one announces its change (the reload itself takes a moment).
		const r = await within2s('pub-b', (x) => !(x instanceof Error))
		expect(r).not.toBeInstanceOf(Error)
		expect((r as OpenAI.ChatCompletion).choices[0]!.message.content).toBe('Hello! You said: hi')
	})

	it('should make the running instance stop serving a model the new config removed', async () => {
		await startInstance(config(['pub-b']))
		const gone = (await within2s('pub-a', (x) => x instanceof OpenAI.APIError)) as InstanceType<typeof OpenAI.APIError>
		expect(gone).toBeInstanceOf(OpenAI.APIError)
		expect(gone.status).toBe(503) // known (a disabled channel lists it), unavailable
	})

	it('should announce nothing when the config did not change', async () => {
		published.length = 0
		await startInstance(config(['pub-b']))
		expect(published).not.toContain('catalog-changed')
	})
})
