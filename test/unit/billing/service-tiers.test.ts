/**
 * OpenAI's processing tiers (src/billing/pricing.ts): a request served at `priority` or `flex` costs that tier's input
 * and output prices when the model lists them (cached input scaled as the input price is), the standard prices
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

const TEXT: Reach = { audioInput: false, audioOutput: false, cacheWrite1h: false }

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
		expect(upperBound(1000, 100, CLAUDE, { ...TEXT, cacheWrite1h: true })).toBe(6000 + 1500 + 1)
		expect(upperBound(10, 1000, IMAGE, TEXT)).toBe(3 + 30_000 + 1)
	})

	it('should cover the cost of any usage within its reach', () => {
		const cases: Array<[Price, Reach, Usage]> = [
			[GPT41, TEXT, usage({ input: 800, cacheRead: 200, output: 500, tier: 'priority' })],
			[GPT41, { ...TEXT, tiers: ['flex'] }, usage({ input: 1000, output: 500, tier: 'flex' })],
			[GPT41, { ...TEXT, tiers: [undefined] }, usage({ input: 1000, output: 500 })],
			[AUDIO, TEXT, usage({ input: 1000, output: 500 })],
			[AUDIO, { ...TEXT, audioInput: true, audioOutput: true }, usage({ input: 1000, audioInput: 1000, output: 500, audioOutput: 500 })],
			[CLAUDE, { ...TEXT, cacheWrite1h: true }, usage({ cacheWrite: 1000, cacheWrite1h: 1000, output: 100 })],
			[IMAGE, TEXT, usage({ input: 10, output: 1000, imageOutput: 1000 })],
		]
		for (const [p, reach, u] of cases) expect(upperBound(u.input + u.cacheRead + u.cacheWrite, u.output, p, reach)).toBeGreaterThanOrEqual(tokenCost(u, p))
	})
})
