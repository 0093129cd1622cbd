/**
 * The price of a batch line. OpenAI bills Batch API requests at 50% of the model's standard prices
 * (platform.openai.com/docs/guides/batch: "a 50% cost discount compared to synchronous APIs"). A model may set its
 * own `batch_input_per_mtok` / `batch_output_per_mtok`; every other price (cache reads and writes, audio, per request)
 * is halved, cache reads capped at the batch input price; a multiplier (`us_inference_multiplier`) is not a price and stays.
 * @module
 */
import { type Price, TOKEN_PRICES, US_INFERENCE_MULTIPLIER } from '../../billing/pricing'

const half = (n: number) => Math.round(n / 2)

/** @example batchPrice({ inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 }) // 500_000 / 1_000_000 */
export function batchPrice(p: Price): Price {
	const prices: Record<string, number> = {}
	for (const [k, v] of Object.entries(p.prices ?? {})) if (k !== TOKEN_PRICES.batchInput && k !== TOKEN_PRICES.batchOutput) prices[k] = k === US_INFERENCE_MULTIPLIER ? v : half(v)
	const inputPerMtok = p.prices?.[TOKEN_PRICES.batchInput] ?? half(p.inputPerMtok)
	return {
		inputPerMtok,
		outputPerMtok: p.prices?.[TOKEN_PRICES.batchOutput] ?? half(p.outputPerMtok),
		// Never above the batch input price: a model whose own batch input price is under half its cache-read price
		// would otherwise bill a cached token more than an uncached one.
		cacheReadPerMtok: Math.min(half(p.cacheReadPerMtok ?? p.inputPerMtok), inputPerMtok),
		cacheWritePerMtok: p.cacheWritePerMtok == null ? null : half(p.cacheWritePerMtok),
		perRequest: p.perRequest == null ? null : half(p.perRequest),
		maxOutputTokens: p.maxOutputTokens,
		prices,
	}
}
