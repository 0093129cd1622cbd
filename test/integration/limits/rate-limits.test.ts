import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { startOpenAIMock } from '../../mocks'
import { startTestApp, type TestApp } from '../../helpers/app'

import { redisEnv } from '../../helpers/redis'

const REDIS = redisEnv(import.meta.path)

let mock: Awaited<ReturnType<typeof startOpenAIMock>>
const apps: TestApp[] = []

const config = (url: string) => ({
	channels: [{ name: 'mock', type: 'openai' as const, base_url: url, api_key: 'up-key', models: ['gpt-4o-mini'] }],
	models: [{ name: 'gpt-4o-mini', input_per_mtok: 1, output_per_mtok: 2 }],
})

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
}, 120_000)
afterAll(async () => {
	for (const a of apps) await a.close()
	await mock.stop()
})

async function limitedKey(app: TestApp, limits: { rpm_limit?: number; tpm_limit?: number }) {
	const { key, tokenId } = await app.account(10)
	expect((await app.admin(`/api/tokens/${tokenId}`, { method: 'PATCH', body: limits })).status).toBe(200)
	return key
}

const chat = (app: TestApp, key: string) =>
	fetch(`${app.url}/v1/chat/completions`, {
		method: 'POST',
		headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
		body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four' }] }),
	})
const messages = (app: TestApp, key: string) =>
	fetch(`${app.url}/v1/messages`, {
		method: 'POST',
		headers: { 'x-api-key': key, 'content-type': 'application/json' },
		body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
	})

describe('rate limits', () => {
	it('should answer 429 with retry-after in the caller protocol once requests per minute are used up (no Redis)', async () => {
		const app = await startTestApp({ config: config(mock.url) })
		apps.push(app)
		// Counted in the database on PostgreSQL, which other instances may share; in memory on PGlite, one process's.
		expect(app.svc.limits.shared).toBe(app.svc.db.kind === 'postgres')
		const key = await limitedKey(app, { rpm_limit: 2 })
		expect((await chat(app, key)).status).toBe(200)
		expect((await messages(app, key)).status).toBe(200)
		const over = await chat(app, key)
		expect(over.status).toBe(429)
		expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
		expect((await over.json()).error.code).toBe('rate_limit_exceeded')
		const overAnthropic = await messages(app, key)
		expect(overAnthropic.status).toBe(429)
		expect(await overAnthropic.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
	})

	// The openai SDK replaces a retry-after over 60 s by its own backoff of a second or so: its retries would be refused
	// and counted, pushing the wait out. The Anthropic SDK waits what it is told.
	it('should tell the openai SDK not to retry a wait it would not honour, and leave the Anthropic SDK its retry', async () => {
		const app = apps[0]!
		const key = await limitedKey(app, { rpm_limit: 1 })
		let sent = 0
		const counting: typeof fetch = Object.assign((input: RequestInfo | URL, init?: RequestInit) => (sent++, fetch(input, init)), { preconnect: fetch.preconnect })
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 2, fetch: counting })
		await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
		const err = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.RateLimitError)
		const headers = (err as InstanceType<typeof OpenAI.RateLimitError>).headers
		expect(Number(headers.get('retry-after'))).toBeGreaterThan(60)
		expect(headers.get('x-should-retry')).toBe('false')
		expect(sent).toBe(2)
		const over = await messages(app, key)
		expect(over.status).toBe(429)
		expect(over.headers.get('x-should-retry')).toBeNull()
	})

	it('should not count what calls no model (the model list, the billing dashboard) toward requests per minute', async () => {
		const app = apps[0]!
		const key = await limitedKey(app, { rpm_limit: 1 })
		const auth = { authorization: `Bearer ${key}` }
		for (let i = 0; i < 3; i++) {
			expect((await fetch(`${app.url}/v1/models`, { headers: auth })).status).toBe(200)
			expect((await fetch(`${app.url}/v1/dashboard/billing/subscription`, { headers: auth })).status).toBe(200)
		}
		expect((await chat(app, key)).status).toBe(200)
		expect((await chat(app, key)).status).toBe(429)
	})

	it('should stop a key once its tokens per minute are used up', async () => {
		const app = apps[0]!
		const key = await limitedKey(app, { tpm_limit: 10 })
		expect((await chat(app, key)).status).toBe(200) // ~4 in + 9 out tokens
		const over = await chat(app, key)
		expect(over.status).toBe(429)
		expect((await over.json()).error.message).toMatch(/tokens per minute/)
	})

	it('should share counters between instances through Redis', async () => {
		const a = await startTestApp({ config: config(mock.url), env: REDIS })
		apps.push(a)
		expect(a.svc.limits.shared).toBe(true)
		const key = await limitedKey(a, { rpm_limit: 3 })
		// A second instance on the same database and Redis.
		const { createApp } = await import('../../../src/app')
		const { createServices } = await import('../../../src/services')
		const { loadEnv } = await import('../../../src/config/env')
		const { silentLogger } = await import('../../../src/lib/log')
		const svcB = await createServices(loadEnv({ SECRET_KEY: 'test-secret-key-0123456789', ...REDIS }), { db: a.svc.db, log: silentLogger })
		const b = createApp(svcB).listen({ port: 0, hostname: '127.0.0.1' })
		const bUrl = { url: `http://127.0.0.1:${b.server!.port}` } as TestApp
		try {
			const codes = [await chat(a, key), await chat(bUrl, key), await chat(a, key), await chat(bUrl, key)].map((r) => r.status)
			expect(codes).toEqual([200, 200, 200, 429])
		} finally {
			await b.stop(true)
			await svcB.close()
		}
	})

	it('should degrade to per-instance limits, not an outage, when Redis is unreachable', async () => {
		const app = await startTestApp({ config: config(mock.url), env: { REDIS_URL: 'redis://127.0.0.1:1' } })
		apps.push(app)
		const key = await limitedKey(app, { rpm_limit: 1 })
		// Without waiting for Redis: the first connection's own retries take ~30 s to give up.
		const started = Date.now()
		expect((await chat(app, key)).status).toBe(200)
		expect((await chat(app, key)).status).toBe(429)
		expect(Date.now() - started).toBeLessThan(5_000)
		expect((await fetch(`${app.url}/health`)).status).toBe(200)
	})
})

describe('metrics', () => {
	it('should count requests, tokens and cost in Prometheus format', async () => {
		const app = apps[0]!
		const { key } = await app.account(1)
		expect((await chat(app, key)).status).toBe(200)
		const text = await (await fetch(`${app.url}/metrics`)).text()
		expect(text).toContain('# TYPE switchboard_requests_total counter')
		expect(text).toMatch(/switchboard_requests_total\{endpoint="\/v1\/chat\/completions",model="gpt-4o-mini",channel="mock",status="200"\} \d+/)
		expect(text).toMatch(/switchboard_tokens_total\{model="gpt-4o-mini",kind="output"\} \d+/)
		expect(text).toContain('switchboard_request_duration_seconds_bucket')
	})
})
