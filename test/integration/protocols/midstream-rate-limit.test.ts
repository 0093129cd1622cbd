/**
 * A rate limit an upstream reports inside a stream that already carried text (OpenAI `data: {"error": {code:
 * "rate_limit_exceeded"}}`, Gemini `data: {"error": {code: 429, status: "RESOURCE_EXHAUSTED"}}`, Anthropic
 * `event: error` `rate_limit_error`). Before any content it is answered 429 `upstream_rate_limited` in the gateway's own
 * words (relay/stream.ts); after content it went out as an `api_error` / `server_error` carrying the vendor's text,
 * which names the gateway's vendor account (OpenAI's organization, Google's project number). A converted stream now
 * ends with the caller's rate-limit error type and the same words as the 429.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const LONG = 'please tell me a long story about the sea and the stars tonight'
const SAID = 'the upstream provider is rate limiting requests for this model; retry after a short wait'
/** What each mock's rate-limit text names of the vendor account. */
const ACCOUNT = /org-MockOrg|projects\/\d+|5b0c9d2e/

/** The error an SDK threw for the stream, and the text it had received before it. */
async function anthropicStream(acct: Awaited<ReturnType<Matrix['account']>>, up: Upstream) {
	let text = ''
	const s = acct.anthropic.messages.stream({ model: MODEL[up], max_tokens: 100, messages: [{ role: 'user', content: LONG }] })
	s.on('text', (t) => (text += t))
	const err = (await s.finalMessage().catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
	return { err, text }
}

async function chatStream(acct: Awaited<ReturnType<Matrix['account']>>, up: Upstream) {
	let text = ''
	const s = await acct.openai.chat.completions.create({ model: MODEL[up], stream: true, messages: [{ role: 'user', content: LONG }] })
	const err = await (async () => {
		for await (const c of s) text += c.choices[0]?.delta.content ?? ''
	})().catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>)
	return { err: err as InstanceType<typeof OpenAI.APIError>, text }
}

describe('a rate limit in the middle of a converted stream', () => {
	for (const up of ['openai', 'gemini'] as const)
		it(`should end an Anthropic client's stream with rate_limit_error in the gateway's words (${up} upstream)`, async () => {
			const acct = await m.account()
			m.mocks[up].faultOnce = { kind: 'midstream', afterChunks: 3, status: 429 }
			const { err, text } = await anthropicStream(acct, up)
			expect(text).toStartWith('Hello!')
			expect(err).toBeInstanceOf(Anthropic.APIError)
			expect(err.error).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: SAID } })
			expect(JSON.stringify(err.error)).not.toMatch(ACCOUNT)
			const [row] = await usageRows(m, acct.accountId)
			expect(row!.end_reason).toBe('error')
		})

	for (const up of ['anthropic', 'gemini'] as const)
		it(`should end an OpenAI client's stream with rate_limit_error in the gateway's words (${up} upstream)`, async () => {
			const acct = await m.account()
			// Anthropic's first frames (message_start, content_block_start, ping) carry no text yet.
			m.mocks[up].faultOnce = { kind: 'midstream', afterChunks: up === 'anthropic' ? 5 : 3, status: 429 }
			const { err, text } = await chatStream(acct, up)
			expect(text).toStartWith('Hello!')
			expect(err).toBeInstanceOf(OpenAI.APIError)
			expect(err.error).toMatchObject({ type: 'rate_limit_error', message: SAID })
			expect(JSON.stringify(err.error)).not.toMatch(ACCOUNT)
		})
})

describe('a rate limit in the middle of a stream relayed as it came (fast path)', () => {
	it("should end an Anthropic client's stream from Claude with rate_limit_error in the gateway's words", async () => {
		const acct = await m.account()
		m.mocks.anthropic.faultOnce = { kind: 'midstream', afterChunks: 5, status: 429 }
		const { err, text } = await anthropicStream(acct, 'anthropic')
		expect(text).toStartWith('Hello!')
		expect(err).toBeInstanceOf(Anthropic.APIError)
		expect(err.error).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: SAID } })
		expect(JSON.stringify(err.error)).not.toMatch(ACCOUNT)
		const [row] = await usageRows(m, acct.accountId)
		expect(row!.end_reason).toBe('error')
	})

	it("should end an OpenAI client's stream from OpenAI with rate_limit_error in the gateway's words", async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 3, status: 429 }
		const { err, text } = await chatStream(acct, 'openai')
		expect(text).toStartWith('Hello!')
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(err.error).toMatchObject({ type: 'rate_limit_error', message: SAID })
		expect(JSON.stringify(err.error)).not.toMatch(ACCOUNT)
	})
})

describe('a rate limit as the first event of a Responses stream relayed as it came (fast path)', () => {
	it("should answer 429 upstream_rate_limited in the gateway's words, not a 502 quoting the vendor's organization", async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 1, status: 429 }
		const err = (await acct.openai.responses
			.create({ model: MODEL.openai, stream: true, input: LONG }, { maxRetries: 0 })
			.then(async (s) => {
				for await (const _ of s);
			})
			.catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
		expect(err).toBeInstanceOf(OpenAI.RateLimitError)
		expect(err.code).toBe('upstream_rate_limited')
		expect(err.message).toContain(SAID)
		expect(JSON.stringify(err.error)).not.toMatch(ACCOUNT)
		const [row] = await usageRows(m, acct.accountId)
		expect(row?.status).toBe(429)
	})
})
