/**
 * Token kinds vendors price apart (src/billing/pricing.ts): audio input and output, image output, 1-hour cache writes
 * and the long-context tier each cost their own price when the model lists one, and what they cost before when it
 * does not; the reservation's bound stays above any charge its request can reach. Expected micro-USD by hand.
 */
import { describe, expect, it } from 'bun:test'
import { LONG_CONTEXT_TOKENS, type Price, affordableOutput, tokenCost, upperBound } from '../../../src/billing/pricing'
import { type Usage, emptyUsage } from '../../../src/core/ir'

/** micro-USD per Mtok from USD per Mtok. */
const m = (usd: number) => Math.round(usd * 1e6)
const usage = (u: Partial<Usage>): Usage => ({ ...emptyUsage(), ...u })

// gpt-4o-audio-preview: text $2.50 / $10, audio $40 / $80 per 1M tokens.
const AUDIO: Price = { inputPerMtok: m(2.5), outputPerMtok: m(10), prices: { audio_input_per_mtok: m(40), audio_output_per_mtok: m(80) } }
// Claude Sonnet: $3 input, $15 output, cache read $0.30, 5-minute write $3.75, 1-hour write $6; above 200k $6 / $22.50.
const CLAUDE: Price = {
	inputPerMtok: m(3),
	outputPerMtok: m(15),
	cacheReadPerMtok: m(0.3),
	cacheWritePerMtok: m(3.75),
	prices: { cache_write_1h_per_mtok: m(6), input_above_200k_per_mtok: m(6), output_above_200k_per_mtok: m(22.5) },
}
// gpt-6.2-sol: $2 input, $0.10 cached, $2.50 cache writes, $10 output; over 272k input $4 / $15 (twice and 1.5 times).
const GPT: Price = { inputPerMtok: m(2), outputPerMtok: m(10), cacheReadPerMtok: m(0.1), cacheWritePerMtok: m(2.5), prices: { input_above_272k_per_mtok: m(4), output_above_272k_per_mtok: m(15) } }
// gemini-2.5-flash-image: $0.30 input, $2.50 text output, $30 image output.
const IMAGE: Price = { inputPerMtok: m(0.3), outputPerMtok: m(2.5), prices: { image_output_per_mtok: m(30) } }

describe('tokenCost of token kinds priced apart', () => {
	it('should bill audio input and output tokens at the audio prices and the rest at the text prices', () => {
		// 1,000 prompt tokens of which 800 audio; 500 answer tokens of which 400 audio:
		// 200×2.5 + 800×40 + 100×10 + 400×80 = 500 + 32,000 + 1,000 + 32,000 = 65,500
		expect(tokenCost(usage({ input: 1000, audioInput: 800, output: 500, audioOutput: 400 }), AUDIO)).toBe(65_500)
	})

	it('should bill 1-hour cache writes at their price and 5-minute ones at the cache-write price', () => {
		// 100 input ×3 + 1,000 read ×0.3 + 2,000 writes (1,500 of them 1h): 500×3.75 + 1,500×6 + 10 output ×15
		expect(tokenCost(usage({ input: 100, cacheRead: 1000, cacheWrite: 2000, cacheWriteLong: 1500, output: 10 }), CLAUDE)).toBe(300 + 300 + 1875 + 9000 + 150)
	})

	it("should bill OpenAI's 12-hour cache writes at their price and 30-minute ones at the cache-write price", () => {
		// A GPT-5.6-class model: $2 input, $0.20 cached, 30-minute writes $2.50 (1.25×), 12-hour ones $4, $12 output.
		const gpt: Price = { inputPerMtok: m(2), outputPerMtok: m(12), cacheReadPerMtok: m(0.2), cacheWritePerMtok: m(2.5), prices: { cache_write_12h_per_mtok: m(4) } }
		// 100 ×2 + 1,000 reads ×0.2 + 2,000 writes (1,500 of them 12h): 500×2.5 + 1,500×4 + 10 ×12
		expect(tokenCost(usage({ input: 100, cacheRead: 1000, cacheWrite: 2000, cacheWriteLong: 1500, output: 10 }), gpt)).toBe(200 + 200 + 1250 + 6000 + 120)
		// Without a 12-hour price every write costs the cache-write price.
		expect(tokenCost(usage({ input: 100, cacheWrite: 2000, cacheWriteLong: 1500, output: 10 }), { ...gpt, prices: {} })).toBe(200 + 5000 + 120)
	})

	it('should bill cached audio at its price, at the cache-read price when the model lists none, and bound a request by it', () => {
		// gemini-2.5-flash: $0.30 input, $0.03 cached text, $1 audio, $0.10 cached audio, $2.50 output.
		const flash: Price = { inputPerMtok: m(0.3), outputPerMtok: m(2.5), cacheReadPerMtok: m(0.03), prices: { audio_input_per_mtok: m(1), audio_cache_read_per_mtok: m(0.1) } }
		// 100 input ×0.3 + 10,000 reads (8,000 audio): 2,000×0.03 + 8,000×0.1 + 10 output ×2.5 = 30 + 60 + 800 + 25
		const u = usage({ input: 100, cacheRead: 10_000, audioCacheRead: 8000, output: 10 })
		expect(tokenCost(u, flash)).toBe(915)
		const { audio_cache_read_per_mtok: _, ...unpriced } = flash.prices!
		expect(tokenCost(u, { ...flash, prices: unpriced })).toBe(30 + 300 + 25)
		expect(upperBound(10_100, 10, { ...flash, prices: { audio_cache_read_per_mtok: m(5) } })).toBeGreaterThanOrEqual(tokenCost(u, { ...flash, prices: { audio_cache_read_per_mtok: m(5) } }))
	})

	it('should bill image output tokens at the image price', () => {
		// 10 input ×0.3 + 1,290 image ×30 + 10 text ×2.5 = 3 + 38,700 + 25
		expect(tokenCost(usage({ input: 10, output: 1300, imageOutput: 1290 }), IMAGE)).toBe(38_728)
	})

	it('should bill input image tokens at the image input price, never more of them than the uncached input', () => {
		// gpt-image-1: text $5, image input $10, output $40. 3 text + 388 image input tokens, 272 output:
		// 3×5 + 388×10 + 272×40 = 15 + 3,880 + 10,880
		const GPT_IMAGE: Price = { inputPerMtok: m(5), outputPerMtok: m(40), prices: { image_input_per_mtok: m(10) } }
		expect(tokenCost(usage({ input: 391, imageInput: 388, output: 272 }), GPT_IMAGE)).toBe(14_775)
		// A report of more image tokens than input tokens bills the input, all of it as image tokens.
		expect(tokenCost(usage({ input: 10, imageInput: 50 }), GPT_IMAGE)).toBe(100)
		// The bound prices every input token at the image input price, the dearer one.
		expect(upperBound(391, 272, GPT_IMAGE)).toBeGreaterThanOrEqual(tokenCost(usage({ input: 391, imageInput: 391, output: 272 }), GPT_IMAGE))
	})

	it('should bill every token of a prompt over 200k at the long-context prices, cache prices scaled with the input price', () => {
		// 150,001 input + 50,000 read + 1,000 writes (all 1h) = 201,001 prompt tokens: all doubled, output at 22.50.
		const u = usage({ input: 150_001, cacheRead: 50_000, cacheWrite: 1000, cacheWriteLong: 1000, output: 1000 })
		expect(tokenCost(u, CLAUDE)).toBe(150_001 * 6 + 50_000 * 0.6 + 1000 * 12 + 1000 * 22.5)
		// One token fewer is the standard tier: the threshold is "more than 200k".
		const at = usage({ input: LONG_CONTEXT_TOKENS - 51_000, cacheRead: 50_000, cacheWrite: 1000, cacheWriteLong: 1000, output: 1000 })
		expect(tokenCost(at, CLAUDE)).toBe(149_000 * 3 + 50_000 * 0.3 + 1000 * 6 + 1000 * 15)
	})

	it("should bill a prompt over OpenAI's 272k at its long-context prices, and one between 200k and 272k at the standard ones", () => {
		// 222,001 input + 50,000 cached = 272,001 input tokens as OpenAI counts them: input and cache doubled, output ×1.5.
		expect(tokenCost(usage({ input: 222_001, cacheRead: 50_000, output: 1000 }), GPT)).toBe(222_001 * 4 + 50_000 * 0.2 + 1000 * 15)
		expect(tokenCost(usage({ input: 222_000, cacheRead: 50_000, output: 1000 }), GPT)).toBe(222_000 * 2 + 50_000 * 0.1 + 1000 * 10)
		expect(tokenCost(usage({ input: 250_000, output: 1000 }), GPT)).toBe(250_000 * 2 + 1000 * 10)
		// The bound of such a prompt: every input token at the doubled cache-write price (5), the output at 15.
		expect(upperBound(300_000, 1000, GPT)).toBe(300_000 * 5 + 15_000 + 1)
		// A model priced at both thresholds pays the longer one's prices past it, the shorter one's between.
		const both: Price = { ...GPT, prices: { ...GPT.prices, input_above_200k_per_mtok: m(3), output_above_200k_per_mtok: m(12) } }
		expect(tokenCost(usage({ input: 250_000, output: 1000 }), both)).toBe(250_000 * 3 + 1000 * 12)
		expect(tokenCost(usage({ input: 300_000, output: 1000 }), both)).toBe(300_000 * 4 + 1000 * 15)
	})

	it('should cost what it cost before when the model lists none of these prices', () => {
		const plain: Price = { inputPerMtok: m(3), outputPerMtok: m(15), cacheWritePerMtok: m(3.75) }
		const u = usage({ input: 300_000, cacheWrite: 1000, cacheWriteLong: 1000, audioInput: 100, output: 900, audioOutput: 50, imageOutput: 50, imageInput: 100 })
		expect(tokenCost(u, plain)).toBe(300_000 * 3 + 1000 * 3.75 + 900 * 15)
	})

	it('should never bill a sub-count beyond its total', () => {
		// A report claiming more audio than output is read as all output audio, not as extra tokens.
		expect(tokenCost(usage({ input: 0, output: 10, audioOutput: 50, imageOutput: 50 }), AUDIO)).toBe(800)
	})
})

describe('the reservation bound of token kinds priced apart', () => {
	it('should reserve input and output at the dearest kind the model prices', () => {
		// 1,000 input at 40 + 500 output at 80 + 1
		expect(upperBound(1000, 500, AUDIO)).toBe(40_000 + 40_000 + 1)
		expect(upperBound(10, 1000, IMAGE)).toBe(3 + 30_000 + 1)
		// 1-hour writes are Claude's dearest input below 200k
		expect(upperBound(1000, 100, CLAUDE)).toBe(6000 + 1500 + 1)
	})

	it('should reserve a prompt over 200k at the long-context prices', () => {
		// 250,000 input at the doubled 1-hour write price (12) + 1,000 output at 22.50
		expect(upperBound(250_000, 1000, CLAUDE)).toBe(3_000_000 + 22_500 + 1)
	})

	it('should cover the cost of any usage its request can reach', () => {
		const cases: Array<[Price, Usage]> = [
			[AUDIO, usage({ input: 1000, audioInput: 1000, output: 500, audioOutput: 500 })],
			[CLAUDE, usage({ input: 10, cacheWrite: 240_000, cacheWriteLong: 240_000, output: 1000 })],
			[IMAGE, usage({ input: 10, output: 1000, imageOutput: 1000 })],
		]
		for (const [p, u] of cases) expect(upperBound(u.input + u.cacheRead + u.cacheWrite, u.output, p)).toBeGreaterThanOrEqual(tokenCost(u, p))
	})

	it('should lower the affordable output cap to the dearest output price', () => {
		// 80,001 micro-USD after 1,000 input tokens at 40 (40,000) and the 1 of rounding: 40,000 left at 80 per token
		expect(affordableOutput(80_001, 1000, AUDIO)).toBe(500)
	})
})
