/**
 * Unit prices of the passthrough families, read from a model's price entry. Every price is integer micro-USD:
 * `per_request` (column), `prices.per_*` (per image, minute, second, million characters …) and the token prices.
 * Costs are integers computed with one rounding (billing/money.ts).
 * @module
 */
import { mulDivRound } from '../billing/money'
import { type Price, tokenCost } from '../billing/pricing'
import { emptyUsage } from '../core/ir'

/** Token part of a price, without the per-request fee. @example tokensCost(p, 1000) // input only */
export function tokensCost(p: Price, input: number, output = 0): number {
	if (input <= 0 && output <= 0) return 0
	return tokenCost({ ...emptyUsage(), input, output }, { ...p, perRequest: 0 })
}

/** The first of `keys` present in `prices`. @example unitPrice(p, 'per_minute', 'per_second') */
export function unitPrice(p: Price, ...keys: string[]): number | undefined {
	for (const k of keys) {
		const v = p.prices?.[k]
		if (typeof v === 'number') return v
	}
	return undefined
}

/** Whether the price lists any token price. */
export const hasTokenPrice = (p: Price): boolean => p.inputPerMtok > 0 || p.outputPerMtok > 0

/**
 * Price of one image, looked up in this order (the first that exists wins):
 * 1. `per_image_<size>_<quality>` (e.g. `per_image_1024x1024_hd`), 2. `per_image_<size>`, 3. `per_image_<quality>`,
 * 4. `per_image`, 5. the model's `per_request`, 6. the highest `per_image_*` listed (a size or quality the list does
 * not name is charged at the dearest listed, never for free). `undefined` when none exists: the image is then priced by
 * the tokens the upstream reports (gpt-image models).
 * @example imageUnitPrice({ …, prices: { per_image_1024x1024_hd: 80000, per_image: 40000 } }, '1024x1024', 'hd') // 80000
 */
export function imageUnitPrice(p: Price, size?: string, quality?: string): number | undefined {
	const keys: string[] = []
	const sized = size && size !== 'auto' ? size : undefined
	const q = quality && quality !== 'auto' ? quality : undefined
	if (sized && q) keys.push(`per_image_${sized}_${q}`)
	if (sized) keys.push(`per_image_${sized}`)
	if (q) keys.push(`per_image_${q}`)
	keys.push('per_image')
	const hit = unitPrice(p, ...keys)
	if (hit !== undefined) return hit
	if (p.perRequest != null) return p.perRequest
	const listed = Object.entries(p.prices ?? {}).filter(([k]) => k.startsWith('per_image_'))
	return listed.length ? Math.max(...listed.map(([, v]) => v)) : undefined
}

/** Whether audio of this model is priced by duration (`per_minute` or `per_second`). */
export const pricedByDuration = (p: Price): boolean => unitPrice(p, 'per_minute', 'per_second') !== undefined

/**
 * Cost of `seconds` of audio: `per_minute` pro rata per whole second (OpenAI bills Whisper "rounded to the nearest
 * second"), else `per_second`; 0 when neither is set.
 * @example durationCost({ …, prices: { per_minute: 6000 } }, 90) // 9000
 */
export function durationCost(p: Price, seconds: number): number {
	const s = Math.max(0, Math.ceil(seconds))
	const perMinute = unitPrice(p, 'per_minute')
	if (perMinute !== undefined) return mulDivRound(s, perMinute, 60)
	const perSecond = unitPrice(p, 'per_second')
	return perSecond !== undefined ? s * perSecond : 0
}

/**
 * Cost of speaking `chars` characters: `per_mchar` (micro-USD per million characters, as OpenAI prices tts-1) or
 * `per_char`; `undefined` when the model has neither (then tokens price it).
 * @example charCost({ …, prices: { per_mchar: 15_000_000 } }, 1000) // 15000 ($0.015)
 */
export function charCost(p: Price, chars: number): number | undefined {
	const perM = unitPrice(p, 'per_mchar')
	if (perM !== undefined) return mulDivRound(chars, perM, 1_000_000)
	const per = unitPrice(p, 'per_char')
	return per !== undefined ? chars * per : undefined
}

/** The model's per-request fee, or 0. */
export const requestFee = (p: Price): number => p.perRequest ?? 0
