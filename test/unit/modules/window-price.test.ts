/**
 * Prices of background responses run in a completion window (src/modules/responses/window-price.ts): 2h 30% and 8h
 * 40% below Standard on every token rate; other prices as they are; soonest, none or a value OpenAI does not define
 * at Standard.
 */
import { describe, expect, it } from 'bun:test'
import { TOKEN_PRICES } from '../../../src/billing/pricing'
import { completionWindow, windowPrice } from '../../../src/modules/responses/window-price'

const PRICE = {
	name: 'gpt-6.2-sol',
	inputPerMtok: 1_250_000,
	outputPerMtok: 10_000_000,
	cacheReadPerMtok: 125_000,
	cacheWritePerMtok: null,
	perRequest: 3,
	maxOutputTokens: 128_000,
	prices: { [TOKEN_PRICES.audioInput]: 40_000_000, [TOKEN_PRICES.imageInput]: 333_333, per_image: 40_000 },
}

describe('windowPrice', () => {
	it('should take 40% off every token rate in the 8h window and 30% in the 2h one, rounding half up', () => {
		expect(windowPrice(PRICE, '8h')).toEqual({
			...PRICE,
			inputPerMtok: 750_000,
			outputPerMtok: 6_000_000,
			cacheReadPerMtok: 75_000,
			prices: { [TOKEN_PRICES.audioInput]: 24_000_000, [TOKEN_PRICES.imageInput]: 200_000, per_image: 40_000 },
		})
		expect(windowPrice(PRICE, '2h')).toMatchObject({ inputPerMtok: 875_000, outputPerMtok: 7_000_000, cacheReadPerMtok: 87_500, cacheWritePerMtok: null, perRequest: 3, prices: { [TOKEN_PRICES.imageInput]: 233_333 } })
	})
})

describe('completionWindow', () => {
	it('should name only the discounted windows', () => {
		expect(completionWindow({ background: true, background_options: { completion_window: '8h', continuation_id: 'c' } })).toBe('8h')
		expect(completionWindow({ background_options: { completion_window: '2h' } })).toBe('2h')
		for (const body of [{}, { background_options: null }, { background_options: { completion_window: 'soonest' } }, { background_options: { completion_window: '24h' } }, { background_options: '8h' }])
			expect(completionWindow(body)).toBeUndefined()
	})
})
