/**
 * The prices of token kinds billed apart (audio, image output, 1-hour cache writes, the long-context tier) in the
 * console: typed on the price dialog's unit-price lines, and shown per million tokens on the Models and /pricing pages.
 */
import { describe, expect, it } from 'bun:test'
import { type PriceForm, priceBody } from '../../../src/console/lib/price-form'
import { otherPrices, unitLabel } from '../../../src/console/lib/prices'

const form = (units: string): PriceForm => ({ name: 'm', input: '3', output: '15', cacheRead: '', cacheWrite: '', perRequest: '', maxOut: '', context: '', units })

describe('token-kind prices in the console', () => {
	it('should send the token-kind price lines of the dialog as their API fields', () => {
		expect(priceBody(form('audio_input_per_mtok = 40\ncache_write_1h_per_mtok = 6\ninput_above_200k_per_mtok = 6'))).toEqual({
			name: 'm',
			input_per_mtok: 3,
			output_per_mtok: 15,
			audio_input_per_mtok: 40,
			cache_write_1h_per_mtok: 6,
			input_above_200k_per_mtok: 6,
		})
		expect(() => priceBody(form('audio_in_per_mtok = 40'))).toThrow('is not a unit price this gateway charges')
	})

	it('should show them per million tokens of their kind', () => {
		expect(unitLabel('audio_output_per_mtok')).toBe('1M audio output tokens')
		expect(unitLabel('output_above_200k_per_mtok')).toBe('1M output tokens (prompts over 200k)')
		const m = { input_per_mtok: 2.5, output_per_mtok: 10, cache_read_per_mtok: null, cache_write_per_mtok: null, per_request: null, prices: { audio_output_per_mtok: 80, audio_input_per_mtok: 40 } }
		expect(otherPrices(m)).toEqual(['$40.00 / 1M audio input tokens', '$80.00 / 1M audio output tokens'])
	})
})
