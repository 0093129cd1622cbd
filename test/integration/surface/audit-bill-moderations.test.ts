/**
 * Billing audit of /v1/moderations: a moderation model priced by tokens (as Mistral prices its moderation model) is
 * charged its input tokens at the listed price, not nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'
import { micros, priceList, usageOf } from './helpers'

let oa: VendorMock
let app: TestApp

beforeAll(async () => {
	oa = await startOpenAIMock({ apiKey: 'up-oa' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['mod-tokens', 'mod-both'], model_map: { 'mod-tokens': 'omni-moderation-latest', 'mod-both': 'omni-moderation-latest' } }],
			models: priceList([
				// $1,000 per million tokens: 1,000 micro-USD a token, so the count shows in the charge.
				{ name: 'mod-tokens', input_per_mtok: 1000 },
				{ name: 'mod-both', input_per_mtok: 1000, per_request: 0.0005 },
			]),
		},
	})
}, 60_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

describe('POST /v1/moderations priced by tokens', () => {
	it('should charge the input tokens at input_per_mtok', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		const r = await openai.moderations.create({ model: 'mod-tokens', input: 'hello world' })
		expect(r.results[0]!.flagged).toBe(false)
		// "hello world" is 2 tokens (o200k).
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/moderations', model: 'mod-tokens', input_tokens: 2 })
		expect(micros(row!.cost)).toBe(2000)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 2000)
	})

	it('should charge per_request plus the tokens of every input', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1`, maxRetries: 0 })
		await openai.moderations.create({ model: 'mod-both', input: ['hello world', 'a fight #flag'] })
		const [row] = await usageOf(app, accountId)
		expect(micros(row!.cost)).toBe(500 + row!.input_tokens * 1000)
		expect(row!.input_tokens).toBeGreaterThan(4)
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - micros(row!.cost))
	})
})
