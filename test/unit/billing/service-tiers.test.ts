/**
 * Processing tiers (src/billing/pricing.ts): a request served at OpenAI's `priority`, `flex` or `ultrafast`, or at
 * Anthropic's fast mode, costs that tier's input and output prices when the model lists them (cached input scaled as
 * the input price is; past a long-context threshold, scaled as the standard prices are there), the standard prices
 * otherwise; and the reservation's bound prices only the tiers and token kinds its request can reach (`Reach`),
 * never less than any charge within that reach. Expected micro-USD by hand.
 */
import { describe, expect, it } from 'bun:test'
import { type Price, type Reach, affordableOutput, tokenCost, upperBound } from '../../../src/billing/pricing'
import { type Usage, emptyUsage } from '../../../src/core/ir'

/** micro-USD per Mtok from USD per Mtok. */
const m = (usd: number) => Math.round(usd * 1e6)
const usage = (u: Partial<Usage>): Usage => ({ ...emptyUsage(), ...u })

// gpt-4.1: $2 input, $0.50 cached, $8 output; Priority $3.50 / $14 (cached $0.875), Flex $1 / $4 (cached $0.25).
const GPT41: Price = {
	inputPerMtok: m(2),
	outputPerMtok: m(8),
	cacheReadPerMtok: m(0.5),
	prices: { priority_input_per_mtok: m(3.5), priority_output_per_mtok: m(14), flex_input_per_mtok: m(1), flex_output_per_mtok: m(4) },
}
// gpt-4o-audio-preview: text $2.50 / $10, audio $40 / $80 per 1M tokens.
const AUDIO: Price = { inputPerMtok: m(2.5), outputPerMtok: m(10), prices: { audio_input_per_mtok: m(40), audio_output_per_mtok: m(80) } }
// Claude Sonnet: $3 input, $15 output, 5-minute writes $3.75, 1-hour writes $6.
const CLAUDE: Price = { inputPerMtok: m(3), outputPerMtok: m(15), cacheReadPerMtok: m(0.3), cacheWritePerMtok: m(3.75), prices: { cache_write_1h_per_mtok: m(6) } }
// gemini-2.5-flash-image: $0.30 input, $2.50 text output, $30 image output.
const IMAGE: Price = { inputPerMtok: m(0.3), outputPerMtok: m(2.5), prices: { image_output_per_mtok: m(30) } }

const TEXT: Reach = { audioInput: false, audioOutput: false, cacheWriteLong: false }

describe('tokenCost by the tier that served the request', () => {
	// 1,000 uncached input, 200 cached, 500 output.
	const u = { input: 1000, cacheRead: 200, output: 500 }

	it('should bill the tier priced apart at its prices, cached input scaled as its input price', () => {
		// standard: 1000×2 + 200×0.5 + 500×8 = 2,000 + 100 + 4,000
		expect(tokenCost(usage(u), GPT41)).toBe(6100)
		// priority: 1000×3.5 + 200×0.875 + 500×14 = 3,500 + 175 + 7,000
		expect(tokenCost(usage({ ...u, tier: 'priority' }), GPT41)).toBe(10_675)
		// flex: 1000×1 + 200×0.25 + 500×4 = 1,000 + 50 + 2,000
		expect(tokenCost(usage({ ...u, tier: 'flex' }), GPT41)).toBe(3050)
	})

	it('should bill a tier the model does not price at the standard prices', () => {
		const plain: Price = { inputPerMtok: m(2), outputPerMtok: m(8), cacheReadPerMtok: m(0.5) }
		expect(tokenCost(usage({ ...u, tier: 'priority' }), plain)).toBe(6100)
		// Only Priority's output priced: its input stays at the standard price.
		const outOnly: Price = { ...plain, prices: { priority_output_per_mtok: m(14) } }
		expect(tokenCost(usage({ ...u, tier: 'priority' }), outOnly)).toBe(2000 + 100 + 7000)
	})
})

describe('the tiers only a request that asks gets, and long context', () => {
	// gpt-6-astra: $10 / $50, cached $1; Ultrafast $60 / $300 (cached $6); past 272k, $20 / $75.
	const ASTRA: Price = {
		inputPerMtok: m(10),
		outputPerMtok: m(50),
		cacheReadPerMtok: m(1),
		prices: { ultrafast_input_per_mtok: m(60), ultrafast_output_per_mtok: m(300), input_above_272k_per_mtok: m(20), output_above_272k_per_mtok: m(75), flex_input_per_mtok: m(5), flex_output_per_mtok: m(25) },
	}
	// Claude Opus 4.6: $5 / $25, cached $0.50; fast mode $30 / $150; past 200k $10 / $37.50, and fast mode there $60 / $225.
	const OPUS: Price = {
		inputPerMtok: m(5),
		outputPerMtok: m(25),
		cacheReadPerMtok: m(0.5),
		prices: { fast_input_per_mtok: m(30), fast_output_per_mtok: m(150), input_above_200k_per_mtok: m(10), output_above_200k_per_mtok: m(37.5) },
	}

	it('should bill Ultrafast and fast mode at their prices, cached input scaled with them', () => {
		// 1000×60 + 200×6 + 500×300
		expect(tokenCost(usage({ input: 1000, cacheRead: 200, output: 500, tier: 'ultrafast' }), ASTRA)).toBe(60_000 + 1200 + 150_000)
		// 1000×30 + 200×3 + 500×150
		expect(tokenCost(usage({ input: 1000, cacheRead: 200, output: 500, tier: 'fast' }), OPUS)).toBe(30_000 + 600 + 75_000)
		// Each tier is the model's own: Opus names no Ultrafast, Astra no fast mode.
		expect(tokenCost(usage({ input: 1000, output: 500, tier: 'ultrafast' }), OPUS)).toBe(5000 + 12_500)
		expect(tokenCost(usage({ input: 1000, output: 500, tier: 'fast' }), ASTRA)).toBe(10_000 + 25_000)
	})

	it('should stack a tier with long context: its prices scale as the standard ones do past the threshold', () => {
		// Opus fast mode over 200k: "$60 / $225" per Mtok, 250,000 × 60 + 1,000 × 225; cached at 60 / 10 of $1.
		expect(tokenCost(usage({ input: 250_000, output: 1000, tier: 'fast' }), OPUS)).toBe(15_000_000 + 225_000)
		expect(tokenCost(usage({ input: 200_000, cacheRead: 100_000, output: 0, tier: 'fast' }), OPUS)).toBe(12_000_000 + 600_000)
		// Flex is half "whichever rate applies": past 272k, $10 / $37.50 on Astra.
		expect(tokenCost(usage({ input: 300_000, output: 1000, tier: 'flex' }), ASTRA)).toBe(3_000_000 + 37_500)
		// Ultrafast past 272k: 60 × 2 and 300 × 1.5.
		expect(tokenCost(usage({ input: 300_000, output: 1000, tier: 'ultrafast' }), ASTRA)).toBe(36_000_000 + 450_000)
		// At 272k exactly, the short-context tier prices.
		expect(tokenCost(usage({ input: 272_000, output: 0, tier: 'ultrafast' }), ASTRA)).toBe(16_320_000)
	})

	it('should reserve at Ultrafast or fast mode only a request that may be served there', () => {
		// Unasked (a reach without tiers): Astra's dearest is the standard tier, Opus likewise.
		expect(upperBound(1000, 500, ASTRA, TEXT)).toBe(10_000 + 25_000 + 1)
		expect(upperBound(1000, 500, OPUS, TEXT)).toBe(5000 + 12_500 + 1)
		expect(upperBound(1000, 500, ASTRA, { ...TEXT, tiers: [undefined, 'priority', 'flex', 'ultrafast'] })).toBe(60_000 + 150_000 + 1)
		expect(upperBound(1000, 500, OPUS, { ...TEXT, tiers: [undefined, 'priority', 'flex', 'fast'] })).toBe(30_000 + 75_000 + 1)
		// No reach at all: every tier the model prices.
		expect(upperBound(1000, 500, ASTRA)).toBe(60_000 + 150_000 + 1)
		expect(upperBound(1000, 500, OPUS)).toBe(30_000 + 75_000 + 1)
		// Long context and fast mode at once: 250,000 × 60 + 100 × 225.
		expect(upperBound(250_000, 100, OPUS, { ...TEXT, tiers: [undefined, 'fast'] })).toBe(15_000_000 + 22_500 + 1)
	})
})

describe("Anthropic's US-only inference", () => {
	// Claude Opus 4.6 with its 1.1 multiplier for inference kept in the US, and fast mode.
	const OPUS_US: Price = { inputPerMtok: m(5), outputPerMtok: m(25), cacheReadPerMtok: m(0.5), prices: { fast_input_per_mtok: m(30), fast_output_per_mtok: m(150), us_inference_multiplier: m(1.1) } }

	it('should multiply every token price of a request run in the US, with one rounding, and nothing else', () => {
		// 1.1 × (1000×5 + 200×0.5 + 333×25) = 1.1 × 13,425 = 14,767.5 → 14,768
		expect(tokenCost(usage({ input: 1000, cacheRead: 200, output: 333, inferenceGeo: 'us' }), OPUS_US)).toBe(14_768)
		expect(tokenCost(usage({ input: 1000, cacheRead: 200, output: 333 }), OPUS_US)).toBe(13_425)
		// Stacked on fast mode: 1.1 × (1000×30 + 200×3 + 333×150)
		expect(tokenCost(usage({ input: 1000, cacheRead: 200, output: 333, tier: 'fast', inferenceGeo: 'us' }), OPUS_US)).toBe(88_605)
		// A per-request price and web searches are not tokens: 1.1 × 5,000 + 10,000 + 2 × 10,000.
		const extra: Price = { ...OPUS_US, perRequest: 10_000, prices: { ...OPUS_US.prices, per_web_search: 10_000 } }
		expect(tokenCost(usage({ input: 1000, output: 0, webSearches: 2, inferenceGeo: 'us' }), extra)).toBe(5500 + 10_000 + 20_000)
		// A model without the multiplier bills a US run at its prices.
		expect(tokenCost(usage({ input: 1000, output: 0, inferenceGeo: 'us' }), { inputPerMtok: m(5), outputPerMtok: m(25) })).toBe(5000)
		// Past doubles' exact range, the same single rounding: 1.1 × 10^12 × 5.
		expect(tokenCost(usage({ input: 1e12, output: 0, inferenceGeo: 'us' }), OPUS_US)).toBe(5.5e12)
	})

	it('should reserve every request of such a model at the multiplied prices, asked or not', () => {
		// ⌈5 × 1.1⌉ and ⌈25 × 1.1⌉ per token: 1000 × 5.5 + 500 × 27.5.
		expect(upperBound(1000, 500, OPUS_US, TEXT)).toBe(5500 + 13_750 + 1)
		expect(upperBound(1000, 500, OPUS_US, TEXT)).toBeGreaterThanOrEqual(tokenCost(usage({ input: 1000, output: 500, inferenceGeo: 'us' }), OPUS_US))
	})
})

describe('the bound of what a request can reach', () => {
	it('should reserve at the dearest tier unless the request is bound to one', () => {
		// Any tier (no service_tier, auto, priority, or converted): Priority's 3.5 / 14.
		expect(upperBound(1000, 500, GPT41)).toBe(3500 + 7000 + 1)
		expect(upperBound(1000, 500, GPT41, TEXT)).toBe(3500 + 7000 + 1)
		expect(upperBound(1000, 500, GPT41, { ...TEXT, tiers: ['flex'] })).toBe(1000 + 2000 + 1)
		expect(upperBound(1000, 500, GPT41, { ...TEXT, tiers: [undefined] })).toBe(2000 + 4000 + 1)
		expect(affordableOutput(3001, 1000, GPT41, { ...TEXT, tiers: ['flex'] })).toBe(500)
		expect(affordableOutput(3001, 1000, GPT41)).toBe(0)
	})

	it('should price audio and 1-hour writes only when the request can produce them, images always', () => {
		// Text in and out of an audio model: 1000×2.5 + 500×10.
		expect(upperBound(1000, 500, AUDIO, TEXT)).toBe(2500 + 5000 + 1)
		expect(upperBound(1000, 500, AUDIO, { ...TEXT, audioOutput: true })).toBe(2500 + 40_000 + 1)
		expect(upperBound(1000, 500, AUDIO, { ...TEXT, audioInput: true })).toBe(40_000 + 5000 + 1)
		// $0.08 after the input covers 7,750 text tokens, 968 audio ones.
		expect(affordableOutput(80_001, 1000, AUDIO, TEXT)).toBe(7750)
		expect(affordableOutput(80_001, 1000, AUDIO, { ...TEXT, audioOutput: true })).toBe(968)
		// 5-minute writes at $3.75 unless a 1-hour write is asked for ($6).
		expect(upperBound(1000, 100, CLAUDE, TEXT)).toBe(3750 + 1500 + 1)
		expect(upperBound(1000, 100, CLAUDE, { ...TEXT, cacheWriteLong: true })).toBe(6000 + 1500 + 1)
		expect(upperBound(10, 1000, IMAGE, TEXT)).toBe(3 + 30_000 + 1)
	})

	it('should cover the cost of any usage within its reach', () => {
		const cases: Array<[Price, Reach, Usage]> = [
			[GPT41, TEXT, usage({ input: 800, cacheRead: 200, output: 500, tier: 'priority' })],
			[GPT41, { ...TEXT, tiers: ['flex'] }, usage({ input: 1000, output: 500, tier: 'flex' })],
			[GPT41, { ...TEXT, tiers: [undefined] }, usage({ input: 1000, output: 500 })],
			[AUDIO, TEXT, usage({ input: 1000, output: 500 })],
			[AUDIO, { ...TEXT, audioInput: true, audioOutput: true }, usage({ input: 1000, audioInput: 1000, output: 500, audioOutput: 500 })],
			[CLAUDE, { ...TEXT, cacheWriteLong: true }, usage({ cacheWrite: 1000, cacheWriteLong: 1000, output: 100 })],
			[IMAGE, TEXT, usage({ input: 10, output: 1000, imageOutput: 1000 })],
		]
		for (const [p, reach, u] of cases) expect(upperBound(u.input + u.cacheRead + u.cacheWrite, u.output, p, reach)).toBeGreaterThanOrEqual(tokenCost(u, p))
	})
})
