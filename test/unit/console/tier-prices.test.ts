/** Processing-tier prices in the console: typed on the price dialog's unit-price lines, shown per million tokens. */
import { describe, expect, it } from 'bun:test'
import { type PriceForm, priceBody } from '../../../src/console/lib/price-form'
import { otherPrices, unitLabel } from '../../../src/console/lib/prices'

const form = (units: string): PriceForm => ({ name: 'm', input: '2', output: '8', cacheRead: '', cacheWrite: '', perRequest: '', maxOut: '', context: '', units })

describe('tier prices in the console', () => {
	it('should send the tier price lines as their API fields and label them by tier', () => {
		expect(priceBody(form('priority_input_per_mtok = 3.5\nflex_output_per_mtok = 4'))).toEqual({ name: 'm', input_per_mtok: 2, output_per_mtok: 8, priority_input_per_mtok: 3.5, flex_output_per_mtok: 4 })
		expect(unitLabel('priority_output_per_mtok')).toBe('1M output tokens (priority tier, OpenAI Fast mode)')
		const m = { input_per_mtok: 2, output_per_mtok: 8, cache_read_per_mtok: null, cache_write_per_mtok: null, per_request: null, prices: { flex_input_per_mtok: 1, priority_input_per_mtok: 3.5 } }
		expect(otherPrices(m)).toEqual(['$1.00 / 1M input tokens (flex tier)', '$3.50 / 1M input tokens (priority tier, OpenAI Fast mode)'])
	})

	it("should take OpenAI's Ultrafast and Anthropic's fast-mode prices and tell the two fast tiers apart", () => {
		expect(priceBody(form('ultrafast_output_per_mtok = 300\nfast_input_per_mtok = 30'))).toEqual({ name: 'm', input_per_mtok: 2, output_per_mtok: 8, ultrafast_output_per_mtok: 300, fast_input_per_mtok: 30 })
		expect(unitLabel('ultrafast_input_per_mtok')).toBe('1M input tokens (ultrafast tier)')
		expect(unitLabel('fast_output_per_mtok')).toBe('1M output tokens (Anthropic fast mode)')
	})

	it('should take the US-only inference multiplier as a line and show it as a factor, not a price', () => {
		expect(priceBody(form('us_inference_multiplier = 1.1'))).toEqual({ name: 'm', input_per_mtok: 2, output_per_mtok: 8, us_inference_multiplier: 1.1 })
		const m = { input_per_mtok: 5, output_per_mtok: 25, cache_read_per_mtok: null, cache_write_per_mtok: null, per_request: null, prices: { us_inference_multiplier: 1.1 } }
		expect(otherPrices(m)).toEqual(['×1.1 on every token price for US-only inference'])
	})
})
