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
			channels: [{ name: 'oa', type: 'openai', base_url: oa.url, api_key: 'up-oa', models: ['omni-moderation-latest', 'text-moderation-paid'] }],
			models: priceList([{ name: 'text-moderation-paid', per_request: 0.001 }]),
		},
	})
}, 30_000)

afterAll(async () => {
	await app.close()
	await oa.stop()
})

describe('POST /v1/moderations', () => {
	it('should pass through with the SDK and be free for an unpriced moderation model', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		const r = await openai.moderations.create({ input: ['fine text', 'a fight #flag'] })
		expect(r.results.map((x) => x.flagged)).toEqual([false, true])
		expect(r.results[1]!.categories.violence).toBe(true)
		expect(await app.balance(accountId)).toBe(1)
		const [row] = await usageOf(app, accountId)
		expect(row).toMatchObject({ endpoint: '/v1/moderations', model: 'omni-moderation-latest', cost: 0 })
	})

	it('should charge per_request when the model has a price', async () => {
		const { key, accountId } = await app.account(1)
		const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1` })
		await openai.moderations.create({ model: 'text-moderation-paid', input: 'hello' })
		expect(micros(await app.balance(accountId))).toBe(1_000_000 - 1000)
	})

	it('should answer 400 without input', async () => {
		const { key } = await app.account(1)
		const res = await fetch(`${app.url}/v1/moderations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })
		expect(res.status).toBe(400)
	})
})
