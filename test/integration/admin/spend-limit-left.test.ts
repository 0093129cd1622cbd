/**
 * A key refused for its spend limit says how much of the limit is left (QA of a fresh clone): a key of $0.0001 that had
 * spent $0.00001 was refused "API key spend limit reached" while the console showed it active at a tenth of its limit,
 * since the request needed at least $0.000265 up front. The refusal now says what is left beside what was needed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { type TestApp, startTestApp } from '../../helpers/app'
import { startOpenAIMock, type VendorMock } from '../../mocks'

let mock: VendorMock
let app: TestApp

beforeAll(async () => {
	mock = await startOpenAIMock({ apiKey: 'up-key' })
	app = await startTestApp({
		config: {
			channels: [{ name: 'mock', type: 'openai', base_url: mock.url, api_key: 'up-key', models: ['gpt-4o-mini', 'gpt-4o'] }],
			// gpt-4o-mini: a call of the mock's 2 input and 5 output tokens costs 3 micro-USD; gpt-4o at $15 per million
			// output tokens needs more up front than the key below has.
			models: [
				{ name: 'gpt-4o-mini', input_per_mtok: 0.15, output_per_mtok: 0.6 },
				{ name: 'gpt-4o', input_per_mtok: 3, output_per_mtok: 15 },
			],
		},
	})
}, 120_000)
afterAll(async () => {
	await app.close()
	await mock.stop()
})

describe('a key refused for its spend limit', () => {
	it('should say what was needed and how much of its limit is left, in each SDK', async () => {
		const { key } = await app.account(10, { spend_limit: 0.0001 })
		const openai = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: key, maxRetries: 0 })
		const cheap = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] })
		expect(cheap.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5 })
		const refused = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello there' }] }).catch((e: unknown) => e)
		expect(refused).toBeInstanceOf(OpenAI.APIError)
		expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402)
		const said = (refused as InstanceType<typeof OpenAI.APIError>).message
		expect(said).toStartWith('402 API key spend limit reached: this request needs at least $0.000')
		// $0.0001 less the 3 micro-USD the first call cost.
		expect(said).toEndWith("and $0.000097 of the key's limit is left")
		const anthropic = new Anthropic({ baseURL: app.url, apiKey: key, maxRetries: 0 })
		const viaMessages = await anthropic.messages.create({ model: 'gpt-4o', max_tokens: 1000, messages: [{ role: 'user', content: 'Hello there' }] }).catch((e: unknown) => e)
		expect(viaMessages).toBeInstanceOf(Anthropic.APIError)
		expect((viaMessages as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'billing_error', message: expect.stringMatching(/and \$0\.000097 of the key's limit is left$/) } })
	})
})
