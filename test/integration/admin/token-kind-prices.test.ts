/**
 * The management API's token-kind prices (billing/pricing.ts TOKEN_PRICES): accepted beside the other prices, shown
 * under `prices`, removed with null, and a misspelt one refused rather than billed at $0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
beforeAll(async () => {
	app = await startTestApp()
}, 60_000)
afterAll(() => app.close())

describe('token-kind prices through /api/models', () => {
	it('should store, show and remove them, and refuse a name no code charges', async () => {
		const body = { name: 'gpt-audio-x', input_per_mtok: 2.5, output_per_mtok: 10, audio_input_per_mtok: 40, audio_output_per_mtok: 80, image_output_per_mtok: 30 }
		const created = await app.admin('/api/models', { body })
		expect(created.status).toBe(201)
		expect(created.body.prices).toEqual({ audio_input_per_mtok: 40, audio_output_per_mtok: 80, image_output_per_mtok: 30 })
		expect(app.svc.catalog.price('gpt-audio-x')?.prices).toEqual({ audio_input_per_mtok: 40_000_000, audio_output_per_mtok: 80_000_000, image_output_per_mtok: 30_000_000 })

		const patched = await app.admin(`/api/models/${created.body.id}`, { method: 'PATCH', body: { image_output_per_mtok: null, cache_write_1h_per_mtok: 6, input_above_200k_per_mtok: 5, output_above_200k_per_mtok: 15 } })
		expect(patched.status).toBe(200)
		expect(patched.body.prices).toEqual({ audio_input_per_mtok: 40, audio_output_per_mtok: 80, cache_write_1h_per_mtok: 6, input_above_200k_per_mtok: 5, output_above_200k_per_mtok: 15 })

		// OpenAI's long-context prices, past its own threshold (272k input tokens).
		const gpt = await app.admin('/api/models', { body: { name: 'gpt-6.2-sol', input_per_mtok: 2, output_per_mtok: 10, input_above_272k_per_mtok: 4, output_above_272k_per_mtok: 15 } })
		expect(gpt.status).toBe(201)
		expect(gpt.body.prices).toEqual({ input_above_272k_per_mtok: 4, output_above_272k_per_mtok: 15 })
		expect(app.svc.catalog.price('gpt-6.2-sol')?.prices).toEqual({ input_above_272k_per_mtok: 4_000_000, output_above_272k_per_mtok: 15_000_000 })

		// The newest tiers, OpenAI's 12-hour cache writes, and Anthropic's US-only factor (kept in millionths, as prices are).
		const claude = await app.admin('/api/models', { body: { name: 'claude-opus-x', input_per_mtok: 5, output_per_mtok: 25, fast_input_per_mtok: 30, fast_output_per_mtok: 150, us_inference_multiplier: 1.1 } })
		expect(claude.status).toBe(201)
		expect(claude.body.prices).toEqual({ fast_input_per_mtok: 30, fast_output_per_mtok: 150, us_inference_multiplier: 1.1 })
		expect(app.svc.catalog.price('claude-opus-x')?.prices).toEqual({ fast_input_per_mtok: 30_000_000, fast_output_per_mtok: 150_000_000, us_inference_multiplier: 1_100_000 })
		const astra = await app.admin(`/api/models/${gpt.body.id}`, { method: 'PATCH', body: { ultrafast_input_per_mtok: 12, ultrafast_output_per_mtok: 60, cache_write_12h_per_mtok: 4 } })
		expect(astra.status).toBe(200)
		expect(astra.body.prices).toMatchObject({ ultrafast_input_per_mtok: 12, ultrafast_output_per_mtok: 60, cache_write_12h_per_mtok: 4 })

		const misspelt = await app.admin('/api/models', { body: { name: 'gpt-audio-y', input_per_mtok: 2.5, audio_in_per_mtok: 40 } })
		expect(misspelt.status).toBe(400)
		expect(JSON.stringify(misspelt.body)).toContain('audio_in_per_mtok')
	})
})
