/**
 * An upstream 429 that ends the failover (QA operator report item 6): the caller gets 429 in its own protocol's shape,
 * told apart from its own key's rate limit (OpenAI code `upstream_rate_limited`; Anthropic `rate_limit_error`;
 * Gemini RESOURCE_EXHAUSTED), in the gateway's words (the vendor's name the gateway's organization or project), with
 * `retry-after` when the vendor said how long (`retry-after`, `retry-after-ms`, Gemini's RetryInfo): the official SDKs
 * retry a 429 after it. Through the official SDKs, against the mock vendors' documented 429s.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { MOCK_ORG as ANTHROPIC_ORG } from '../../mocks/anthropic/errors'
import { MOCK_PROJECT, MOCK_RETRY_DELAY_S } from '../../mocks/gemini/errors'
import { MOCK_ORG as OPENAI_ORG } from '../../mocks/openai/errors'
import { CLIENT_NAMES, type ClientName, errorClients } from './error-clients'
import { FAILOVER, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream, UPSTREAMS, usageRows } from './harness'
import { watchLateness } from '../../helpers/lateness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())
beforeEach(() => {
	for (const u of UPSTREAMS) m.mocks[u].reset()
	// A 429 counts toward a channel's breaker: every case starts from healthy channels.
	for (const model of [...Object.values(MODEL), FAILOVER]) for (const c of m.app.svc.catalog.channelsFor(model)) m.app.svc.health.success(c.id)
})

/** What no caller may read: the vendor accounts the mocks' 429s name. */
const ACCOUNT_DETAILS = [OPENAI_ORG, ANTHROPIC_ORG, MOCK_PROJECT, 'Rate limit reached for', 'exceed the rate limit for your organization', 'You exceeded your current quota']

/** Each vendor's 429 as the mock sends it: OpenAI with `retry-after-ms`, Anthropic with `retry-after`, Gemini with RetryInfo in its body. */
const RATE_LIMITED: Record<Upstream, { fault: NonNullable<Matrix['mocks']['openai']['fault']>; retryAfter: string }> = {
	openai: { fault: { kind: 'status', status: 429, retryAfterMs: 2_500 }, retryAfter: '3' },
	anthropic: { fault: { kind: 'status', status: 429, retryAfter: 12 }, retryAfter: '12' },
	gemini: { fault: { kind: 'status', status: 429 }, retryAfter: String(MOCK_RETRY_DELAY_S) },
}

const genai = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

function expectGatewayWords(message: string) {
	expect(message).toContain('upstream provider is rate limiting')
	for (const said of ACCOUNT_DETAILS) expect(message).not.toContain(said)
}

describe('an upstream 429 that ends the failover', () => {
	for (const up of UPSTREAMS) {
		it(`should reach an OpenAI SDK caller as RateLimitError upstream_rate_limited with retry-after (${up} upstream)`, async () => {
			const acct = await m.account()
			m.mocks[up].fault = RATE_LIMITED[up].fault
			const err = (await acct.openai.chat.completions.create({ model: MODEL[up], messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
			expect(err).toBeInstanceOf(OpenAI.RateLimitError)
			expect(err.status).toBe(429)
			expect(err.code).toBe('upstream_rate_limited')
			expect(err.type).toBe('rate_limit_error')
			expect(err.headers?.get('retry-after')).toBe(RATE_LIMITED[up].retryAfter)
			expectGatewayWords(err.message)
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.status, r.cost])).toEqual([[429, 0]])
		})

		it(`should reach an Anthropic SDK caller as RateLimitError rate_limit_error with retry-after, streaming (${up} upstream)`, async () => {
			const acct = await m.account()
			m.mocks[up].fault = RATE_LIMITED[up].fault
			const err = (await acct.anthropic.messages
				.create({ model: MODEL[up], max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] })
				.catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>
			expect(err).toBeInstanceOf(Anthropic.RateLimitError)
			expect(err.status).toBe(429)
			expect((err.error as { error?: { type?: string } }).error?.type).toBe('rate_limit_error')
			expect(err.headers?.get('retry-after')).toBe(RATE_LIMITED[up].retryAfter)
			expectGatewayWords(err.message)
		})

		it(`should reach a Gemini SDK caller as 429 RESOURCE_EXHAUSTED in the gateway's words (${up} upstream)`, async () => {
			const acct = await m.account()
			m.mocks[up].fault = RATE_LIMITED[up].fault
			const err = (await genai(acct.key)
				.models.generateContent({ model: MODEL[up], contents: 'hi' })
				.catch((e: unknown) => e)) as { status?: number; message: string }
			expect(err.status).toBe(429)
			expect(err.message).toContain('RESOURCE_EXHAUSTED')
			expectGatewayWords(err.message)
			const raw = await fetch(`${m.app.url}/v1beta/models/${MODEL[up]}:generateContent`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'x-goog-api-key': acct.key },
				body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
			})
			expect(raw.status).toBe(429)
			expect(raw.headers.get('retry-after')).toBe(RATE_LIMITED[up].retryAfter)
		})
	}

	it('should answer the last channel’s 429 when an earlier one failed otherwise, with its RetryInfo as retry-after', async () => {
		const acct = await m.account()
		m.mocks.openai.fault = { kind: 'status', status: 500 }
		m.mocks.gemini.fault = RATE_LIMITED.gemini.fault
		const err = (await acct.openai.chat.completions.create({ model: FAILOVER, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
		expect(m.mocks.openai.requests).toHaveLength(1)
		expect(m.mocks.gemini.requests).toHaveLength(1)
		expect(err).toBeInstanceOf(OpenAI.RateLimitError)
		expect(err.code).toBe('upstream_rate_limited')
		expect(err.headers?.get('retry-after')).toBe(String(MOCK_RETRY_DELAY_S))
		expectGatewayWords(err.message)
	})

	it('should let the OpenAI SDK retry after the retry-after it was given, and then answer', async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'status', status: 429, retryAfter: 1 }
		const client = new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 1 })
		const started = performance.now()
		const r = await client.chat.completions.create({ model: MODEL.openai, messages: [{ role: 'user', content: 'again' }] })
		expect(r.choices[0]!.message.content).toBe('Hello! You said: again')
		expect(performance.now() - started).toBeGreaterThanOrEqual(950)
		expect(m.mocks.openai.requests).toHaveLength(2)
	})

	it('should send the exact wait as retry-after-ms, which the OpenAI SDK waits rather than the whole second of retry-after', async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'status', status: 429, retryAfterMs: 300 }
		const client = new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 1 })
		const lateness = watchLateness()
		const r = await client.chat.completions.create({ model: MODEL.openai, messages: [{ role: 'user', content: 'soon' }] })
		expect(r.choices[0]!.message.content).toBe('Hello! You said: soon')
		expect(m.mocks.openai.requests).toHaveLength(2)
		// The SDK's retry went after 300 ms, not after the `retry-after: 1` it would otherwise round to.
		const waited = m.mocks.openai.requests[1]!.at - m.mocks.openai.requests[0]!.at
		expect(waited).toBeGreaterThanOrEqual(290)
		expect(waited).toBeLessThan(900 + lateness.stop())
	})

	it('should send the exact wait as retry-after-ms, which the Anthropic SDK waits rather than the whole second of retry-after', async () => {
		const acct = await m.account()
		m.mocks.anthropic.faultOnce = { kind: 'status', status: 429, retryAfterMs: 300 }
		const client = new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 1 })
		const lateness = watchLateness()
		await client.messages.create({ model: MODEL.anthropic, max_tokens: 50, messages: [{ role: 'user', content: 'soon' }] })
		expect(m.mocks.anthropic.requests).toHaveLength(2)
		const waited = m.mocks.anthropic.requests[1]!.at - m.mocks.anthropic.requests[0]!.at
		expect(waited).toBeGreaterThanOrEqual(290)
		expect(waited).toBeLessThan(900 + lateness.stop())
	})

	for (const [path, headers, body] of [
		['/v1/chat/completions', {}, { model: MODEL.openai, messages: [{ role: 'user', content: 'hi' }] }],
		['/v1/messages', { 'anthropic-version': '2023-06-01' }, { model: MODEL.openai, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }],
		[`/v1beta/models/${MODEL.openai}:generateContent`, {}, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
		['/v1/responses', {}, { model: MODEL.openai, input: 'hi' }],
	] as const)
		it(`should answer ${path} an upstream 429 with retry-after and the exact retry-after-ms`, async () => {
			const acct = await m.account()
			m.mocks.openai.fault = RATE_LIMITED.openai.fault
			const r = await fetch(`${m.app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.key}`, 'x-api-key': acct.key, 'x-goog-api-key': acct.key, ...headers }, body: JSON.stringify(body) })
			expect(r.status).toBe(429)
			expect(r.headers.get('retry-after')).toBe('3')
			expect(r.headers.get('retry-after-ms')).toBe('2500')
		})

	it('should keep the caller’s own key limit apart: 429 rate_limit_exceeded in the gateway’s words', async () => {
		const acct = await m.account()
		const { body: tok } = await m.app.admin('/api/tokens', { body: { account_id: acct.accountId, name: 'rpm', rpm_limit: 1 } })
		const client = new OpenAI({ apiKey: tok.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
		await client.chat.completions.create({ model: MODEL.openai, messages: [{ role: 'user', content: 'one' }] })
		const err = (await client.chat.completions.create({ model: MODEL.openai, messages: [{ role: 'user', content: 'two' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>
		expect(err).toBeInstanceOf(OpenAI.RateLimitError)
		expect(err.code).toBe('rate_limit_exceeded')
		expect(err.message).toContain('Request rate limit reached')
		// The key's own limiter decides in whole seconds: retry-after-ms says the same wait.
		expect(Number(err.headers?.get('retry-after-ms'))).toBe(Number(err.headers?.get('retry-after')) * 1000)
	})
})

/**
 * A rate limit sent as the first event of a 200 stream (Anthropic `event: error` rate_limit_error, Gemini
 * `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`, OpenAI `data: {"error":{"code":"rate_limit_exceeded"}}`):
 * nothing was sent to the caller yet, so it gets the same 429 as for the HTTP-level one (it was a 502).
 */
describe('a stream that opens with a rate limit', () => {
	const SEEN: Record<ClientName, { status: number; type: string }> = {
		openai: { status: 429, type: 'rate_limit_error' },
		anthropic: { status: 429, type: 'rate_limit_error' },
		gemini: { status: 429, type: 'RESOURCE_EXHAUSTED' },
	}
	for (const up of UPSTREAMS)
		for (const client of CLIENT_NAMES)
			it(`should reach a ${client} caller as 429 uncharged when the ${up} stream opens with a rate limit`, async () => {
				const acct = await m.account()
				m.mocks[up].fault = { kind: 'midstream', afterChunks: 0, status: 429 }
				expect(await errorClients(m.app.url)[client](acct, MODEL[up], true)).toEqual(SEEN[client])
				const rows = await usageRows(m, acct.accountId)
				expect(rows.map((r) => [r.status, r.cost])).toEqual([[429, 0]])
			})

	it('should fail over to the next channel when the first stream opens with a rate limit', async () => {
		const acct = await m.account()
		m.mocks.openai.faultOnce = { kind: 'midstream', afterChunks: 0, status: 429 }
		const s = await acct.openai.chat.completions.create({ model: FAILOVER, stream: true, messages: [{ role: 'user', content: 'again' }] })
		let text = ''
		for await (const c of s) text += c.choices[0]?.delta.content ?? ''
		expect(text).toBe('Hello! You said: again')
		expect(m.mocks.openai.requests).toHaveLength(1)
		expect(m.mocks.gemini.requests).toHaveLength(1)
	})
})
