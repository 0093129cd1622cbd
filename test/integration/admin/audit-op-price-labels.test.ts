/**
 * Every token kind priced apart is named in words where prices are shown (the public /pricing page and the console's
 * Models and Prices pages share console/lib/prices.ts): Batch API prices read "1M input tokens (Batch API)", not the
 * raw "batch input per mtok" of the fallback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { TOKEN_PRICES } from '../../../src/billing/pricing'
import { unitLabel } from '../../../src/console/lib/prices'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp

beforeAll(async () => {
	app = await startTestApp({
		config: {
			channels: [{ name: 'oa', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k', models: ['gpt-4.1'] }],
			models: [{ name: 'gpt-4.1', input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 } as never],
		},
	})
}, 60_000)
afterAll(() => app.close())

describe('price labels', () => {
	it('should show Batch API prices in words on /pricing', async () => {
		const html = await (await fetch(`${app.url}/pricing`)).text()
		expect(html).toContain('$1.00 / 1M input tokens (Batch API)')
		expect(html).toContain('$4.00 / 1M output tokens (Batch API)')
		expect(html).not.toContain('per mtok')
	})

	it('should have words for every token kind billing prices apart', () => {
		for (const name of Object.values(TOKEN_PRICES)) expect({ name, label: unitLabel(name) }).toEqual({ name, label: expect.stringMatching(/^1M /) })
	})
})
