/** Price presentation shared by the console's Models page and the server-rendered /pricing page. */
import { US_INFERENCE_MULTIPLIER } from '../../billing/pricing'
import { usd } from './format'

export type PriceFields = {
	input_per_mtok: number | null
	output_per_mtok: number | null
	cache_read_per_mtok: number | null
	cache_write_per_mtok: number | null
	per_request: number | null
	prices: Record<string, number>
}

const UNITS: Record<string, string> = {
	per_image: 'image',
	per_minute: 'minute',
	per_second: 'second',
	per_mchar: '1M characters',
	per_char: 'character',
	per_call: 'call',
	per_task: 'task',
	// Token kinds priced apart (billing/pricing.ts TOKEN_PRICES), per million tokens.
	audio_input_per_mtok: '1M audio input tokens',
	audio_cache_read_per_mtok: '1M cached audio input tokens',
	audio_output_per_mtok: '1M audio output tokens',
	image_input_per_mtok: '1M image input tokens',
	image_output_per_mtok: '1M image output tokens',
	cache_write_1h_per_mtok: '1M 1-hour cache write tokens',
	cache_write_12h_per_mtok: '1M 12-hour cache write tokens',
	input_above_200k_per_mtok: '1M input tokens (prompts over 200k)',
	output_above_200k_per_mtok: '1M output tokens (prompts over 200k)',
	input_above_272k_per_mtok: '1M input tokens (prompts over 272k)',
	output_above_272k_per_mtok: '1M output tokens (prompts over 272k)',
	priority_input_per_mtok: '1M input tokens (priority tier, OpenAI Fast mode)',
	priority_output_per_mtok: '1M output tokens (priority tier, OpenAI Fast mode)',
	flex_input_per_mtok: '1M input tokens (flex tier)',
	flex_output_per_mtok: '1M output tokens (flex tier)',
	ultrafast_input_per_mtok: '1M input tokens (ultrafast tier)',
	ultrafast_output_per_mtok: '1M output tokens (ultrafast tier)',
	fast_input_per_mtok: '1M input tokens (Anthropic fast mode)',
	fast_output_per_mtok: '1M output tokens (Anthropic fast mode)',
	batch_input_per_mtok: '1M input tokens (Batch API)',
	batch_output_per_mtok: '1M output tokens (Batch API)',
}

/**
 * `per_image_hd` → 'image (hd)', `per_minute` → 'minute'.
 * @example unitLabel('per_image_1024x1024') === 'image (1024x1024)'
 */
export function unitLabel(key: string): string {
	if (UNITS[key]) return UNITS[key]
	const base = Object.keys(UNITS)
		.sort((a, b) => b.length - a.length)
		.find((k) => key.startsWith(`${k}_`))
	if (base) return `${UNITS[base]} (${key.slice(base.length + 1).replace(/_/g, ' ')})`
	return key.replace(/^per_/, '').replace(/_/g, ' ')
}

/**
 * Prices that are not per token, as readable lines.
 * @example otherPrices({ ...m, per_request: 0.01, prices: { per_image: 0.04 } }) // ['$0.01 / request', '$0.04 / image']
 */
export function otherPrices(m: PriceFields): string[] {
	const out: string[] = []
	if (m.per_request !== null && m.per_request > 0) out.push(`${usd(m.per_request)} / request`)
	for (const [k, v] of Object.entries(m.prices).sort(([a], [b]) => a.localeCompare(b))) out.push(k === US_INFERENCE_MULTIPLIER ? `×${v} on every token price for US-only inference` : `${usd(v)} / ${unitLabel(k)}`)
	return out
}

/** Cached-input price as shown: the cache-read price, which defaults to the input price when unset. */
export const cachedInput = (m: PriceFields) => m.cache_read_per_mtok ?? m.input_per_mtok

/** Cache-write price as billed: its own when set, else the input price (billing/pricing.ts `ratesFor`). */
export const cacheWrite = (m: PriceFields) => m.cache_write_per_mtok ?? m.input_per_mtok

/**
 * Whether a list shows a Cache write column: writes are billed at their own price when a model has one, so the list
 * must show it; a list where no model has one would only repeat the input price in it.
 */
export const showsCacheWrite = (list: PriceFields[]) => list.some((m) => m.cache_write_per_mtok !== null)
