/**
 * The price of a background response run in a completion window (`background_options.completion_window`, openai-node
 * 7.58): OpenAI bills `2h` 30% and `8h` 40% below Standard, on the model's token rates, and `soonest` (the default)
 * at Standard (developers.openai.com/api/docs/guides/background). The window is named only in the request (the
 * Response object does not echo it), so the background task keeps the price it will be settled at (background.ts).
 * Prices per unit other than tokens (a request, an image, a minute) are not token rates and stay as they are.
 * @module
 */
import { mulDivRound } from '../../billing/money'
import { type Price, TOKEN_PRICES } from '../../billing/pricing'

/** What each discounted window leaves of a token rate, as a fraction (numerator, denominator). */
const WINDOW_SHARE = { '2h': [7, 10], '8h': [6, 10] } as const

export type CompletionWindow = keyof typeof WINDOW_SHARE

/** The discounted window a Responses request body asks for; undefined for `soonest`, none or anything else. */
export function completionWindow(body: Record<string, unknown>): CompletionWindow | undefined {
	const options = body.background_options
	if (!options || typeof options !== 'object') return undefined
	const w = (options as Record<string, unknown>).completion_window
	return w === '2h' || w === '8h' ? w : undefined
}

const TOKEN_PRICE_NAMES = new Set<string>(Object.values(TOKEN_PRICES))

/** @example windowPrice({ inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 }, '8h') // 600_000 / 1_200_000 */
export function windowPrice<P extends Price>(p: P, window: CompletionWindow): P {
	const [share, of] = WINDOW_SHARE[window]
	const cut = (n: number) => mulDivRound(n, share, of)
	const prices: Record<string, number> = {}
	for (const [k, v] of Object.entries(p.prices ?? {})) prices[k] = TOKEN_PRICE_NAMES.has(k) ? cut(v) : v
	return {
		...p,
		inputPerMtok: cut(p.inputPerMtok),
		outputPerMtok: cut(p.outputPerMtok),
		cacheReadPerMtok: p.cacheReadPerMtok == null ? p.cacheReadPerMtok : cut(p.cacheReadPerMtok),
		cacheWritePerMtok: p.cacheWritePerMtok == null ? p.cacheWritePerMtok : cut(p.cacheWritePerMtok),
		prices,
	}
}
