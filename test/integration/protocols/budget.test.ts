/**
 * Output caps and money (issue 3): a cap above the model's `max_output_tokens` is lowered upstream, in the field the
 * vendor and model take; when the balance or the key's spend limit cannot cover the cap the cap is lowered to what
 * they cover; only when they cannot cover a minimal answer is the request refused with 402 (OpenAI code
 * insufficient_quota / Anthropic billing_error), before anything reaches a vendor (WIRE-NOTES #14, #15).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { chat, messages, PROTOCOLS } from './clients'
import { type Account, CAPPED, CAPPED_MAX, expectCharges, lastRequest, type Matrix, MODEL, PRICE, SETUP_MS, startMatrix, THINKER, type Upstream, UPSTREAMS } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

/** The output cap as the vendor received it, and which field carried it. */
function upstreamCap(up: Upstream, b: Record<string, any>): Record<string, unknown> {
	if (up === 'openai') return { max_tokens: b.max_tokens, max_completion_tokens: b.max_completion_tokens }
	if (up === 'anthropic') return { max_tokens: b.max_tokens }
	return { maxOutputTokens: b.generationConfig?.maxOutputTokens }
}

/** The cap in the field each capped model takes (the OpenAI one is a reasoning model: max_completion_tokens). */
const capField = (up: Upstream, cap: number): Record<string, unknown> =>
	up === 'openai' ? { max_tokens: undefined, max_completion_tokens: cap } : up === 'anthropic' ? { max_tokens: cap } : { maxOutputTokens: cap }

const capOf = (up: Upstream, b: Record<string, any>): number => Object.values(upstreamCap(up, b)).find((v) => typeof v === 'number') as number

function askWithCap(proto: 'chat' | 'messages', acct: Account, model: string, max: number | undefined, extra: Record<string, unknown> = {}) {
	if (proto === 'chat') return chat(acct.openai, { model, messages: [{ role: 'user', content: 'short answer' }], ...(max && { max_completion_tokens: max }), ...extra }, false)
	// The Anthropic SDK refuses large non-streamed caps ("Streaming is required…"), as a coding agent streams anyway.
	return messages(acct.anthropic, { model, max_tokens: max ?? 1024, messages: [{ role: 'user', content: 'short answer' }], ...extra } as never, (max ?? 0) > 8192)
}

describe("model's max_output_tokens", () => {
	for (const proto of PROTOCOLS)
		for (const up of UPSTREAMS) {
			it(`should lower a 32000 cap to the model's ${CAPPED_MAX} upstream (${proto} → ${up})`, async () => {
				const acct = await m.account()
				const a = await askWithCap(proto, acct, CAPPED[up], 32000)
				expect(a.text).toBe('Hello! You said: short answer')
				expect(upstreamCap(up, lastRequest(m.mocks[up]).body)).toEqual(capField(up, CAPPED_MAX))
				await expectCharges(m, acct, [{ model: CAPPED[up], input: 2, output: 5 }])
			})
		}

	it("should send the configured maximum as max_completion_tokens to a reasoning model when the client set no cap", async () => {
		const acct = await m.account()
		await askWithCap('chat', acct, CAPPED.openai, undefined)
		expect(upstreamCap('openai', lastRequest(m.mocks.openai).body)).toEqual({ max_tokens: undefined, max_completion_tokens: CAPPED_MAX })
	})

	// Qwen Code 0.24 sends `max_tokens` to every model on its openai auth, gpt-5 included, which OpenAI refuses with
	// "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
	for (const stream of [false, true])
		it(`should send a client's max_tokens to a reasoning model as max_completion_tokens (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await chat(acct.openai, { model: THINKER.openai, max_tokens: 4000, reasoning_effort: 'high', messages: [{ role: 'user', content: 'short answer' }] }, stream)
			expect(a.text).toBe('Hello! You said: short answer')
			expect(upstreamCap('openai', lastRequest(m.mocks.openai).body)).toEqual({ max_tokens: undefined, max_completion_tokens: 4000 })
			const reasoning = countWords('Let me think about short answer.')
			await expectCharges(m, acct, [{ model: THINKER.openai, input: 2, output: 5 + reasoning, reasoning, stream }])
		})

	it('should keep the thinking budget below a lowered max_tokens (Anthropic fast path)', async () => {
		const acct = await m.account()
		const a = await askWithCap('messages', acct, CAPPED.anthropic, 32000, { thinking: { type: 'enabled', budget_tokens: 31999 } })
		expect(a.text).toBe('Hello! You said: short answer')
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.max_tokens).toBe(CAPPED_MAX)
		expect(sent.thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
		expect(sent.thinking.budget_tokens).toBeLessThan(CAPPED_MAX)
	})
})

/** Balances that cover roughly 100–160 output tokens of each base model, far below the 1000 asked for. */
const TIGHT: Record<Upstream, number> = { openai: 0.0001, anthropic: 0.002, gemini: 0.0004 }

describe('balance', () => {
	for (const proto of PROTOCOLS)
		for (const up of UPSTREAMS) {
			it(`should lower the cap to what the balance covers (${proto} → ${up})`, async () => {
				const acct = await m.account(TIGHT[up])
				const a = await askWithCap(proto, acct, MODEL[up], 1000)
				expect(a.text).toBe('Hello! You said: short answer')
				const cap = capOf(up, lastRequest(m.mocks[up]).body)
				const perToken = PRICE[MODEL[up]]!.output
				expect(cap).toBeGreaterThanOrEqual(16)
				expect(cap).toBeLessThan(1000)
				// The cap's worth of output fits in the balance, and one token more than the cap plus a few would not.
				expect(cap * perToken).toBeLessThanOrEqual(TIGHT[up] * 1e6)
				expect((cap + 8) * perToken).toBeGreaterThan(TIGHT[up] * 1e6 - 10 * PRICE[MODEL[up]]!.input)
				await expectCharges(m, acct, [{ model: MODEL[up], input: countWords('short answer'), output: 5 }])
			})
		}

	it('should lower the cap to what the key spend limit covers', async () => {
		const acct = await m.account(10, { spend_limit: 0.002 })
		await askWithCap('chat', acct, MODEL.anthropic, 1000)
		const cap = capOf('anthropic', lastRequest(m.mocks.anthropic).body)
		expect(cap).toBeGreaterThanOrEqual(16)
		expect(cap * 15).toBeLessThanOrEqual(2000)
	})

	it('should refuse with 402 insufficient_quota (OpenAI shape) when the balance cannot cover a minimal answer', async () => {
		const acct = await m.account(0.0002)
		const before = m.mocks.anthropic.requests.length
		const err = await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		const e = err as InstanceType<typeof OpenAI.APIError>
		expect(e.status).toBe(402)
		expect(e.code).toBe('insufficient_quota')
		expect(m.mocks.anthropic.requests.length).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(0.0002)
	})

	it('should refuse with 402 billing_error (Anthropic shape) when the balance cannot cover a minimal answer', async () => {
		const acct = await m.account(0.0002)
		const before = m.mocks.openai.requests.length
		const err = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.APIError)
		const e = err as InstanceType<typeof Anthropic.APIError>
		expect(e.status).toBe(402)
		expect(e.error).toMatchObject({ type: 'error', error: { type: 'billing_error' } })
		expect(m.mocks.openai.requests.length).toBe(before)
		expect(await m.app.balance(acct.accountId)).toBe(0.0002)
	})

	it('should refuse with 402 when the key spend limit cannot cover a minimal answer, whatever the balance', async () => {
		const acct = await m.account(10, { spend_limit: 0.0002 })
		const err = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
		expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(402)
		expect((err as InstanceType<typeof Anthropic.APIError>).message).toContain('spend limit')
		expect(await m.app.balance(acct.accountId)).toBe(10)
	})
})
