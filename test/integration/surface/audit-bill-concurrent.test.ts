/**
 * Billing audit, concurrency on the non-chat endpoints: many requests at once on one key with a small spend limit (or
 * an account with a small balance) never spend past it, the sum of the charges is exactly what the answered ones cost,
 * and the refused ones get OpenAI's 402 `insufficient_quota`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { call, micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	// Slow answers keep every request in flight at once, so all of them reserve before any settles.
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['dall-e-3', 'tts-1', 'text-embedding-3-small'] }],
			models: priceList([
				{ name: 'dall-e-3', per_image: 0.04 },
				{ name: 'tts-1', per_mchar: 15 },
				{ name: 'text-embedding-3-small', input_per_mtok: 20 },
			]),
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

async function burst(key: string, n: number, path: string, body: (i: number) => unknown) {
	oa.fault = { kind: 'slow', firstByteMs: 300 }
	try {
		return await Promise.all(Array.from({ length: n }, (_, i) => call(app, key, path, { body: body(i) })))
	} finally {
		oa.fault = undefined
	}
}

function expectRefusals(results: Array<{ status: number; body: any }>, ok: number) {
	expect(results.filter((r) => r.status === 200)).toHaveLength(ok)
	for (const r of results.filter((r) => r.status !== 200)) {
		expect(r.status).toBe(402)
		expect(r.body.error.code).toBe('insufficient_quota')
	}
}

describe('concurrent non-chat requests against a small limit', () => {
	it("should answer exactly the images a key's spend limit covers and charge exactly those", async () => {
		const { key, accountId, tokenId } = await app.account(10, { spend_limit: 0.12 })
		const results = await burst(key, 10, '/v1/images/generations', (i) => ({ model: 'dall-e-3', prompt: `a cat ${i}` }))
		expectRefusals(results, 3)
		const rows = (await usageOf(app, accountId)).filter((r) => r.status === 200)
		expect(rows.map((r) => micros(r.cost))).toEqual([40_000, 40_000, 40_000])
		const t = (await app.admin(`/api/tokens/${tokenId}`)).body
		expect([micros(t.spent), t.reserved]).toEqual([120_000, 0])
		expect(micros(await app.balance(accountId))).toBe(10_000_000 - 120_000)
	})

	it("should answer exactly the speech an account's balance covers and charge exactly that", async () => {
		// 100 characters at $15 per million: 1,500 micro-USD each; the balance covers 4.
		const { key, accountId } = await app.account(0.006)
		const input = 'x'.repeat(100)
		const results = await Promise.all(
			(await burst(key, 8, '/v1/audio/speech', () => ({ model: 'tts-1', input, voice: 'alloy' }))).map(async (r) => ({ status: r.status, body: r.body })),
		)
		expectRefusals(results, 4)
		expect(micros(await app.balance(accountId))).toBe(0)
		const rows = (await usageOf(app, accountId)).filter((r) => r.status === 200)
		expect(rows.reduce((n, r) => n + micros(r.cost), 0)).toBe(6000)
	})

	it('should never charge embeddings past the balance', async () => {
		const { key, accountId } = await app.account(0.001)
		const results = await burst(key, 12, '/v1/embeddings', (i) => ({ model: 'text-embedding-3-small', input: `some words to embed here ${i}` }))
		const ok = results.filter((r) => r.status === 200).length
		expect(ok).toBeGreaterThan(0)
		expect(ok).toBeLessThan(12)
		expectRefusals(results, ok)
		const rows = await usageOf(app, accountId)
		const spent = rows.reduce((n, r) => n + micros(r.cost), 0)
		const balance = micros(await app.balance(accountId))
		expect(balance).toBeGreaterThanOrEqual(0)
		expect(balance + spent).toBe(1000)
		// Each answered request paid its tokens at the list price: 20 micro-USD a token.
		for (const r of rows.filter((r) => r.status === 200)) expect(micros(r.cost)).toBe(r.input_tokens * 20)
	})
})
