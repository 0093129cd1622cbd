import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { call } from './helpers'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['text-embedding-3-small'] }],
			// 0.25 USD per token: each one-word embedding costs a quarter.
			models: [{ name: 'text-embedding-3-small', input_per_mtok: 250_000 }],
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

const spend = async (key: string, words: number) => {
	const r = await call(app, key, '/v1/embeddings', { body: { model: 'text-embedding-3-small', input: Array.from({ length: words }, () => 'w').join(' ') } })
	expect(r.status).toBe(200)
}

describe('GET /v1/dashboard/billing/*', () => {
	it('should show the account (balance plus spend, and spend in cents) for a key without a limit', async () => {
		const { key } = await app.account(10)
		await spend(key, 3)
		const sub = await call(app, key, '/v1/dashboard/billing/subscription')
		expect(sub.status).toBe(200)
		expect(sub.body).toEqual({ object: 'billing_subscription', has_payment_method: true, soft_limit_usd: 10, hard_limit_usd: 10, system_hard_limit_usd: 10, access_until: 0 })
		const usage = await call(app, key, '/v1/dashboard/billing/usage?start_date=2024-01-01&end_date=2024-02-01')
		expect(usage.body).toEqual({ object: 'list', total_usage: 75 })
	})

	it('should count the whole account, whichever of its keys spent', async () => {
		const { key, accountId } = await app.account(10)
		const second = await app.admin('/api/tokens', { body: { account_id: accountId, name: 'second' } })
		await spend(second.body.key, 2)
		expect((await call(app, key, '/v1/dashboard/billing/usage')).body.total_usage).toBe(50)
		expect((await call(app, key, '/v1/dashboard/billing/subscription')).body.hard_limit_usd).toBe(10)
	})

	it('should show the key limit and the key spend for a key with a spend limit', async () => {
		const expires = new Date(Date.now() + 86_400_000)
		const { key } = await app.account(10, { spend_limit: 2, expires_at: expires.toISOString() })
		await spend(key, 1)
		const sub = await call(app, key, '/v1/dashboard/billing/subscription')
		expect(sub.body).toMatchObject({ hard_limit_usd: 2, access_until: Math.floor(expires.getTime() / 1000) })
		expect((await call(app, key, '/v1/dashboard/billing/usage')).body.total_usage).toBe(25)
	})

	it('should cap the key limit at what the account can still pay', async () => {
		const { key } = await app.account(1, { spend_limit: 50 })
		await spend(key, 2)
		// 0.5 spent, 0.5 left in the account: 1 in all, not 50
		expect((await call(app, key, '/v1/dashboard/billing/subscription')).body.hard_limit_usd).toBe(1)
	})

	it('should also answer without the /v1 prefix, and 401 without a key', async () => {
		const { key } = await app.account(3)
		expect((await call(app, key, '/dashboard/billing/subscription')).body.hard_limit_usd).toBe(3)
		const anon = await fetch(`${app.url}/v1/dashboard/billing/usage`)
		expect(anon.status).toBe(401)
		expect(((await anon.json()) as { error: { code: string } }).error.code).toBe('missing_api_key')
	})
})
