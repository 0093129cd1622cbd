/**
 * Output caps and money (issue 3): a cap above the model's `max_output_tokens` is refused with the 400 its vendor
 * gives, in the caller's shape, before anything is reserved or sent; when the balance or the key's spend limit cannot cover the cap the cap is lowered to what
 * they cover; only when they cannot cover a minimal answer is the request refused with 402 (OpenAI code
 * insufficient_quota / Anthropic billing_error), before anything reaches a vendor (WIRE-NOTES #14, #15).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { chat, messages, PROTOCOLS } from './clients'
import { type Account, CAPPED, CAPPED_MAX, expectCharges, lastRequest, type Matrix, MODEL, PRICE, SETUP_MS, startMatrix, type Upstream, UPSTREAMS } from './harness'

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
			it(`should refuse a 32000 cap above the model's ${CAPPED_MAX} with the vendor's 400, before any call or charge (${proto} → ${up})`, async () => {
				const acct = await m.account()
				const before = m.mocks[up].requests.length
				const params = { model: CAPPED[up], messages: [{ role: 'user' as const, content: 'short answer' }] }
				if (proto === 'chat') {
					const err = await acct.openai.chat.completions.create({ ...params, max_completion_tokens: 32000 }).catch((e: unknown) => e)
					expect(err).toBeInstanceOf(OpenAI.BadRequestError)
					const e = err as InstanceType<typeof OpenAI.BadRequestError>
					expect(e.param).toBe('max_completion_tokens')
					expect(e.message).toBe(`400 max_completion_tokens is too large: 32000. This model supports at most ${CAPPED_MAX} completion tokens, whereas you provided 32000.`)
					expect(e.type).toBe('invalid_request_error')
				} else {
					// Streamed: the SDK refuses a large non-streamed cap itself, as a coding agent streams anyway.
					const err = await acct.anthropic.messages.create({ ...params, max_tokens: 32000, stream: true }).catch((e: unknown) => e)
					expect(err).toBeInstanceOf(Anthropic.BadRequestError)
					expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
						type: 'error',
						error: { type: 'invalid_request_error', message: `max_tokens: 32000 > ${CAPPED_MAX}, which is the maximum allowed number of output tokens for ${CAPPED[up]}` },
					})
				}
				expect(m.mocks[up].requests.length).toBe(before)
				expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
				await expectCharges(m, acct, [])
			})
		}

	it("should take a cap equal to the model's maximum", async () => {
		const acct = await m.account()
		const a = await askWithCap('chat', acct, CAPPED.anthropic, CAPPED_MAX)
		expect(a.text).toBe('Hello! You said: short answer')
		expect(lastRequest(m.mocks.anthropic).body.max_tokens).toBe(CAPPED_MAX)
	})

	it("should send the configured maximum as max_completion_tokens to a reasoning model when the client set no cap", async () => {
		const acct = await m.account()
		await askWithCap('chat', acct, CAPPED.openai, undefined)
		expect(upstreamCap('openai', lastRequest(m.mocks.openai).body)).toEqual({ max_tokens: undefined, max_completion_tokens: CAPPED_MAX })
	})

	it('should keep the thinking budget below a max_tokens the balance lowered (Anthropic fast path)', async () => {
		// $0.08 covers ~5,000 output tokens at $15 per million: far below the 16000 asked for.
		const acct = await m.account(0.08)
		const a = await askWithCap('messages', acct, CAPPED.anthropic, 16000, { thinking: { type: 'enabled', budget_tokens: 15999 } })
		expect(a.text).toBe('Hello! You said: short answer')
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.max_tokens).toBeLessThan(6000)
		expect(sent.thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
		expect(sent.thinking.budget_tokens).toBeLessThan(sent.max_tokens)
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
