/**
 * Prices and cost. A model's price is integer micro-USD per million tokens (pico-USD per token) plus optional
 * per-request and per-unit prices. A cost is computed from all components with one division and one
 * half-up rounding, so the same usage costs the same whatever protocol or stream mode carried it.
 *
 * Token kinds that vendors price apart have optional prices in the unit-price map (`TOKEN_PRICES`): audio input
 * (uncached and read from the cache) and output, image input and output, cache writes kept longer than the default
 * (Anthropic's 1-hour, OpenAI's 12-hour), and long-context tiers for prompts over 200k tokens (Gemini, Claude) or 272k
 * (OpenAI). A kind without its price costs what it cost before: the text price of its side (a longer write the cache-write price, cached audio the
 * cache-read price). The processing tiers priced apart (OpenAI's Priority, Flex and Ultrafast, Anthropic's fast mode)
 * have optional input and output prices there too, charged when the answer reports that tier served it.
 * @module
 */
import type { ServiceTier, Usage } from '../core/ir'
import { EXACT, divRoundHalfUp, mulDivRound } from './money'

export type Price = {
	inputPerMtok: number
	outputPerMtok: number
	/** Defaults to the input price when not set. */
	cacheReadPerMtok?: number | null
	cacheWritePerMtok?: number | null
	perRequest?: number | null
	maxOutputTokens?: number | null
	/** The model's context window in tokens, when configured (routing/model-limits.ts has the vendors' own). */
	contextWindow?: number | null
	/** Other unit prices, micro-USD per unit (per_image, per_minute, per_second, per_mchar …), and `TOKEN_PRICES`. */
	prices?: Record<string, number>
}

/** The token-kind prices (micro-USD per million tokens) kept in `Price.prices`, by their config and API names. */
export const TOKEN_PRICES = {
	/** OpenAI audio models (`gpt-4o-audio-preview`: $40 against $2.50 text), Gemini audio input (2.5 Flash: $1 against $0.30). */
	audioInput: 'audio_input_per_mtok',
	/** Gemini's cached audio (`cacheTokensDetails` AUDIO; 2.5 Flash: $0.10 against $0.03 for cached text). */
	audioCacheRead: 'audio_cache_read_per_mtok',
	/** OpenAI audio output ($80 against $10 text), Gemini native-audio and TTS output. */
	audioOutput: 'audio_output_per_mtok',
	/** Gemini image output (`gemini-2.5-flash-image`: $30 against $2.50 text). */
	imageOutput: 'image_output_per_mtok',
	/** OpenAI GPT image models' input images (`gpt-image-1`: $10 against $5 text), `usage.input_tokens_details.image_tokens`. */
	imageInput: 'image_input_per_mtok',
	/** Anthropic 1-hour cache writes (2× base input, where 5-minute writes are 1.25×). */
	cacheWrite1h: 'cache_write_1h_per_mtok',
	/** OpenAI 12-hour cache writes (`prompt_cache_options.ttl: "12h"`, GPT-5.6 and later), where 30-minute ones cost the cache-write price. */
	cacheWrite12h: 'cache_write_12h_per_mtok',
	/** Input of a request whose prompt exceeds `LONG_CONTEXT_TOKENS` (Gemini 2.5 Pro, Claude Sonnet 4/4.5 with 1M context). */
	inputLong: 'input_above_200k_per_mtok',
	/** Output of such a request. */
	outputLong: 'output_above_200k_per_mtok',
	/** Input of a request whose prompt exceeds `OPENAI_LONG_CONTEXT_TOKENS` (OpenAI's GPT-5.4 and later: twice the input price). */
	inputAbove272k: 'input_above_272k_per_mtok',
	/** Output of such a request (1.5 times the output price). */
	outputAbove272k: 'output_above_272k_per_mtok',
	/** OpenAI Priority processing (`service_tier: "priority"`; gpt-4.1: $3.50 / $14 against $2 / $8). */
	priorityInput: 'priority_input_per_mtok',
	priorityOutput: 'priority_output_per_mtok',
	/** OpenAI Flex processing (`service_tier: "flex"`; o3: $1 / $4 against $2 / $8). */
	flexInput: 'flex_input_per_mtok',
	flexOutput: 'flex_output_per_mtok',
	/** OpenAI Ultrafast (`service_tier: "ultrafast"`, Responses only; gpt-6-astra: $60 / $300 against $10 / $50, six times Standard). */
	ultrafastInput: 'ultrafast_input_per_mtok',
	ultrafastOutput: 'ultrafast_output_per_mtok',
	/** Anthropic fast mode (`speed: "fast"`; Claude Opus 4.6: $30 / $150 against $5 / $25). OpenAI's Fast mode is Priority. */
	fastInput: 'fast_input_per_mtok',
	fastOutput: 'fast_output_per_mtok',
	/** OpenAI Batch API lines (`/v1/batches`); default half the standard input and output prices (modules/batches/price.ts). */
	batchInput: 'batch_input_per_mtok',
	batchOutput: 'batch_output_per_mtok',
} as const

/** The input and output price names of each tier priced apart. */
const TIER_PRICES: Record<ServiceTier, readonly [string, string]> = {
	priority: [TOKEN_PRICES.priorityInput, TOKEN_PRICES.priorityOutput],
	flex: [TOKEN_PRICES.flexInput, TOKEN_PRICES.flexOutput],
	ultrafast: [TOKEN_PRICES.ultrafastInput, TOKEN_PRICES.ultrafastOutput],
	fast: [TOKEN_PRICES.fastInput, TOKEN_PRICES.fastOutput],
}

/** The names of every tier's prices: a model listing none of them is billed at the standard tier whatever served it. */
export const TIER_PRICE_NAMES: readonly string[] = Object.values(TIER_PRICES).flat()

/**
 * The tiers a request may be served at without naming one: the standard one, or Priority or Flex as its OpenAI
 * project's default tier. Ultrafast and Anthropic's fast mode serve only a request that asks for them.
 */
export const UNASKED_TIERS: ReadonlyArray<ServiceTier | undefined> = [undefined, 'priority', 'flex']

/** Every tier: the bound of a request whose reach is not known. */
const ALL_TIERS: ReadonlyArray<ServiceTier | undefined> = [...UNASKED_TIERS, 'ultrafast', 'fast']

/** Whether the model lists a price of its own for `tier`. */
const tierPriced = (p: Price, tier: ServiceTier): boolean => p.prices?.[TIER_PRICES[tier][0]] !== undefined || p.prices?.[TIER_PRICES[tier][1]] !== undefined

/**
 * Prompts longer than this (input + cache reads + cache writes) are billed at the long-context prices, on all their
 * tokens: "prompts > 200k tokens" (ai.google.dev/gemini-api/docs/pricing), "input tokens exceed 200K" (Anthropic's
 * long-context pricing, which counts cache reads and writes in the input).
 */
export const LONG_CONTEXT_TOKENS = 200_000

/**
 * OpenAI's threshold, likewise on all the request's tokens: "For requests with more than 272K input tokens, input and
 * cache rates double and output costs 1.5 times the short-context rate for the full request" (the model pages of
 * GPT-5.4 and later, developers.openai.com/api/docs/models; OpenAI's input tokens include the cached ones).
 */
export const OPENAI_LONG_CONTEXT_TOKENS = 272_000

/** Each long-context price pair with the prompt length past which it applies, the longer first: a model names one. */
const LONG_CONTEXT_PRICES: ReadonlyArray<readonly [number, string, string]> = [
	[OPENAI_LONG_CONTEXT_TOKENS, TOKEN_PRICES.inputAbove272k, TOKEN_PRICES.outputAbove272k],
	[LONG_CONTEXT_TOKENS, TOKEN_PRICES.inputLong, TOKEN_PRICES.outputLong],
]

const MTOK = 1_000_000

/** The per-token rates (micro-USD per Mtok) that apply to one request. */
type Rates = {
	input: number
	output: number
	cacheRead: number
	cacheWrite: number
	cacheWriteLong: number
	audioInput: number
	audioCacheRead: number
	audioOutput: number
	imageInput: number
	imageOutput: number
}

/**
 * The rates of a request whose prompt is `promptTokens` long, served at `tier` (standard when undefined). Above a
 * long-context threshold the model has prices for (200k or 272k), input and output take those. A tier the model
 * prices takes its input and output prices, which are short-context ones: past the threshold they scale as the
 * standard prices do, for the tiers are multipliers that stack with long context (Claude's fast mode is "6x standard
 * Opus rates" at either length; OpenAI's Flex is half "whichever rate applies"). The cache prices scale as the input
 * price does (both vendors double every cache price with the input price, and the tiers keep the cached-input
 * discount); audio and image prices have no tier.
 */
export function ratesFor(p: Price, promptTokens: number, tier?: ServiceTier): Rates {
	const extra = p.prices
	let input = p.inputPerMtok
	let output = p.outputPerMtok
	if (extra && promptTokens > LONG_CONTEXT_TOKENS) {
		for (const [over, inName, outName] of LONG_CONTEXT_PRICES) {
			if (promptTokens <= over || (extra[inName] === undefined && extra[outName] === undefined)) continue
			input = extra[inName] ?? input
			output = extra[outName] ?? output
			break
		}
	}
	if (tier && tierPriced(p, tier)) {
		const [inName, outName] = TIER_PRICES[tier]
		input = stacked(extra?.[inName], input, p.inputPerMtok)
		output = stacked(extra?.[outName], output, p.outputPerMtok)
	}
	const scale = (r: number) => (input === p.inputPerMtok || p.inputPerMtok === 0 ? r : mulDivRound(r, input, p.inputPerMtok))
	const cacheWrite = p.cacheWritePerMtok ?? p.inputPerMtok
	const cacheRead = scale(p.cacheReadPerMtok ?? p.inputPerMtok)
	return {
		input,
		output,
		cacheRead,
		cacheWrite: scale(cacheWrite),
		cacheWriteLong: scale(extra?.[TOKEN_PRICES.cacheWrite1h] ?? extra?.[TOKEN_PRICES.cacheWrite12h] ?? cacheWrite),
		audioInput: extra?.[TOKEN_PRICES.audioInput] ?? input,
		audioCacheRead: extra?.[TOKEN_PRICES.audioCacheRead] ?? cacheRead,
		audioOutput: extra?.[TOKEN_PRICES.audioOutput] ?? output,
		imageInput: extra?.[TOKEN_PRICES.imageInput] ?? input,
		imageOutput: extra?.[TOKEN_PRICES.imageOutput] ?? output,
	}
}

/** A tier's price (`tierPrice`, the standard `base` when unlisted) at the length where the standard rate is `rate`. */
const stacked = (tierPrice: number | undefined, rate: number, base: number): number => {
	const price = tierPrice ?? base
	return rate === base || base === 0 ? price : mulDivRound(price, rate, base)
}

/**
 * @example tokenCost({input: 1000, output: 500, cacheRead: 0, cacheWrite: 0, reasoning: 0}, gpt4oMini) // micro-USD
 */
export function tokenCost(u: Usage, p: Price): number {
	const r = ratesFor(p, u.input + u.cacheRead + u.cacheWrite, u.tier)
	// Each sub-count is a share of its total, clamped to it: a vendor's odd report never bills a token twice.
	const audioIn = Math.min(u.audioInput ?? 0, u.input)
	const imageIn = Math.min(u.imageInput ?? 0, u.input - audioIn)
	const audioRead = Math.min(u.audioCacheRead ?? 0, u.cacheRead)
	const writeLong = Math.min(u.cacheWriteLong ?? 0, u.cacheWrite)
	const audioOut = Math.min(u.audioOutput ?? 0, u.output)
	const imageOut = Math.min(u.imageOutput ?? 0, u.output - audioOut)
	const counts = [u.input - audioIn - imageIn, audioIn, imageIn, u.cacheRead - audioRead, audioRead, u.cacheWrite - writeLong, writeLong, u.output - audioOut - imageOut, audioOut, imageOut]
	const rates = [r.input, r.audioInput, r.imageInput, r.cacheRead, r.audioCacheRead, r.cacheWrite, r.cacheWriteLong, r.output, r.audioOutput, r.imageOutput]
	let num = 0
	for (let i = 0; i < counts.length; i++) num += counts[i]! * rates[i]!
	// The geography's multiplier scales the token sum before its one rounding.
	const geo = geoMultiplier(u, p) ?? 1
	const divisor = geo === 1 ? MTOK : MTOK * MULTIPLIER_UNIT
	// One half-up rounding of the exact sum: in doubles while that is exact, else in BigInt.
	let exact: number | bigint = num * geo
	if (num >= EXACT || exact >= EXACT) {
		let big = 0n
		for (let i = 0; i < counts.length; i++) big += BigInt(counts[i]!) * BigInt(rates[i]!)
		exact = big * BigInt(geo)
	}
	return divRoundHalfUp(exact, divisor) + searchCost(u, p) + (p.perRequest ?? 0)
}

/**
 * Anthropic bills inference kept in the US (`inference_geo: "us"`, reported in `usage.inference_geo`; Claude Opus 4.6
 * and later) at "a 1.1x pricing multiplier" on every token category: the model's `us_inference_multiplier`, stored
 * like a price in millionths (1.1 is 1,100,000). Web searches and per-request prices are not tokens and keep theirs.
 */
export const US_INFERENCE_MULTIPLIER = 'us_inference_multiplier'

/** A multiplier's unit: 1 is stored as 1,000,000, as a dollar is. */
const MULTIPLIER_UNIT = 1_000_000

/** The multiplier of the geography that served `u`, when the model has one; undefined otherwise. */
const geoMultiplier = (u: Usage, p: Price): number | undefined => (u.inferenceGeo === 'us' ? p.prices?.[US_INFERENCE_MULTIPLIER] : undefined)

/** The unit price of one server-side web search, micro-USD (Anthropic's $10 per 1,000 searches is 10000). */
export const WEB_SEARCH_PRICE = 'per_web_search'

/** Web searches the vendor reported running, at the model's `per_web_search` (none listed: not charged). */
const searchCost = (u: Usage, p: Price): number => (u.webSearches ? u.webSearches * (p.prices?.[WEB_SEARCH_PRICE] ?? 0) : 0)

/**
 * What a request can make its answer cost beyond text (relay/reach.ts reads it from the request): audio parts in its
 * input, audio asked for as output, longer-lived cache writes (1-hour, 12-hour), and the processing tiers that may serve it (undefined in the
 * list: standard; no list: any a request may be served at without asking, `UNASKED_TIERS`). Image output needs no flag: image models produce images unprompted. A bound without a Reach assumes
 * everything the model prices.
 */
export type Reach = {
	audioInput: boolean
	audioOutput: boolean
	cacheWriteLong: boolean
	tiers?: ReadonlyArray<ServiceTier | undefined>
	/** Web searches the request's tools may run (billed per search on top of tokens); none when absent. */
	webSearches?: number
}

/**
 * The highest rates a request's tokens may be billed at: a prompt of up to `inputTokens` tokens (its long-context
 * tier), at each processing tier it may be served at, every input token at the dearest input kind it can reach
 * (uncached, cache reads and writes, images, cached audio, longer-lived writes and audio when `reach` allows them) and every output token at the dearest
 * output kind (text, image, audio when asked for).
 */
function boundRates(inputTokens: number, p: Price, reach: Reach | undefined): { input: number; output: number } {
	let input = 0
	let output = 0
	for (const tier of reach ? (reach.tiers ?? UNASKED_TIERS) : ALL_TIERS) {
		if (tier && !tierPriced(p, tier)) continue
		const r = ratesFor(p, inputTokens, tier)
		// Cached audio whatever the request carries: a cache it names (Gemini `cachedContent`) may hold audio.
		input = Math.max(input, r.input, r.cacheRead, r.audioCacheRead, r.cacheWrite, !reach || reach.cacheWriteLong ? r.cacheWriteLong : 0, !reach || reach.audioInput ? r.audioInput : 0, r.imageInput)
		output = Math.max(output, r.output, r.imageOutput, !reach || reach.audioOutput ? r.audioOutput : 0)
	}
	// Whatever the request asks: an Anthropic workspace's default geography may keep it in the US. Rounded up.
	const geo = p.prices?.[US_INFERENCE_MULTIPLIER]
	if (geo !== undefined && geo > MULTIPLIER_UNIT) return { input: ceilMul(input, geo), output: ceilMul(output, geo) }
	return { input, output }
}

/** ⌈rate × multiplier⌉ for a multiplier in millionths. */
const ceilMul = (rate: number, multiplier: number): number => Math.ceil((rate * multiplier) / MULTIPLIER_UNIT)

/** Worst-case cost of a request before it runs: all input at the dearest input price, full output cap at the dearest output price it can reach. */
export function upperBound(inputTokens: number, maxOutput: number, p: Price, reach?: Reach): number {
	const r = boundRates(inputTokens, p, reach)
	return mulDivRound(inputTokens, r.input, MTOK) + mulDivRound(maxOutput, r.output, MTOK) + 1 + (p.perRequest ?? 0)
}

/**
 * The searches a request's tools may run, at the model's `per_web_search`: held on top of the token bound when the
 * balance allows, but neither needed to start nor taken from the answer's output cap (searches are charged apart,
 * and a run past what was held is charged as far as the balance and the key's limit allow).
 */
export const searchHold = (p: Price, reach: Reach | undefined): number => (reach?.webSearches ? reach.webSearches * (p.prices?.[WEB_SEARCH_PRICE] ?? 0) : 0)

/** Largest output cap that `budget` micro-USD covers after the input, or 0. */
export function affordableOutput(budget: number, inputTokens: number, p: Price, reach?: Reach): number {
	const r = boundRates(inputTokens, p, reach)
	const left = budget - (p.perRequest ?? 0) - mulDivRound(inputTokens, r.input, MTOK) - 1
	if (left <= 0) return 0
	if (r.output === 0) return Number.MAX_SAFE_INTEGER
	return Math.floor((left * MTOK) / r.output)
}
