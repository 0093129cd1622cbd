/**
 * Batch prices (src/modules/batches/price.ts): half the model's prices unless it sets its own batch input and output
 * prices, and a cached token never billed above an uncached one.
 */
import { describe, expect, it } from 'bun:test'
import { TOKEN_PRICES } from '../../../src/billing/pricing'
import { batchPrice } from '../../../src/modules/batches/price'

describe('batchPrice', () => {
	it('should halve every price of a model with no batch prices of its own', () => {
		const p = batchPrice({ inputPerMtok: 1_000_000, outputPerMtok: 4_000_000, cacheReadPerMtok: 100_000, cacheWritePerMtok: 1_250_000, perRequest: 10, maxOutputTokens: null, prices: { per_image: 40_000 } })
		expect(p).toMatchObject({ inputPerMtok: 500_000, outputPerMtok: 2_000_000, cacheReadPerMtok: 50_000, cacheWritePerMtok: 625_000, perRequest: 5, prices: { per_image: 20_000 } })
	})

	it('should keep a multiplier, which is not a price: a US-only Claude batch costs 1.1 times the halved prices', () => {
		const p = batchPrice({ inputPerMtok: 5_000_000, outputPerMtok: 25_000_000, prices: { us_inference_multiplier: 1_100_000, fast_input_per_mtok: 30_000_000 } })
		expect(p.prices).toEqual({ us_inference_multiplier: 1_100_000, fast_input_per_mtok: 15_000_000 })
	})

	it("should cap cache reads at the model's own batch input price", () => {
		// $0.10 batch input, $0.20 standard cache read: half of that would be $0.10 too; at $0.05 batch input, $0.05.
		const p = batchPrice({ inputPerMtok: 300_000, outputPerMtok: 2_500_000, cacheReadPerMtok: 200_000, cacheWritePerMtok: null, perRequest: null, maxOutputTokens: null, prices: { [TOKEN_PRICES.batchInput]: 50_000, [TOKEN_PRICES.batchOutput]: 1_000_000 } })
		expect(p).toMatchObject({ inputPerMtok: 50_000, outputPerMtok: 1_000_000, cacheReadPerMtok: 50_000 })
	})
})
