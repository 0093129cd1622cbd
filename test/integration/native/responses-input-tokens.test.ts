/**
 * POST /v1/responses/input_tokens through the official `openai` SDK (`client.responses.inputTokens.count`), for a
 * model of every vendor: OpenAI counts its own, Anthropic and Gemini count theirs through the machinery behind
 * `/v1/messages/count_tokens`, and nothing is billed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { APIError } from 'openai'
import { lastRequest, SETUP_MS, startNative, usageRows, openaiAccount, type Native } from './setup'

let n: Native

beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)

afterAll(async () => {
	await n.close()
})

const client = () => openaiAccount(n.app)

const body = { instructions: 'Be brief.', input: [{ role: 'user' as const, content: 'count these few words please' }] }

describe('POST /v1/responses/input_tokens', () => {
	it("should forward an OpenAI model's count to its channel, under the upstream name", async () => {
		const a = await client()
		const counted = await a.openai.responses.inputTokens.count({ model: 'gpt-alias', ...body })
		expect(counted.object).toBe('response.input_tokens')
		const sent = lastRequest(n.openai)
		expect(sent.path).toBe('/v1/responses/input_tokens')
		expect(sent.body).toMatchObject({ model: 'gpt-4o-mini', instructions: 'Be brief.' })
		// The mock counts every word of the request's text: "Be brief." and the five words.
		expect(counted.input_tokens).toBe(7)
		expect(await usageRows(n.app, a.accountId)).toEqual([])
	})

	it("should count a Claude model's input with Anthropic's counter", async () => {
		const a = await client()
		const before = n.anthropic.requests.length
		const counted = await a.openai.responses.inputTokens.count({ model: 'claude-sonnet-5', ...body })
		expect(n.anthropic.requests.length).toBe(before + 1)
		const sent = lastRequest(n.anthropic)
		expect(sent.path).toBe('/v1/messages/count_tokens')
		expect(sent.body).toMatchObject({ model: 'claude-sonnet-5', system: 'Be brief.' })
		expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: expect.any(Number) })
		expect(counted.input_tokens).toBeGreaterThan(0)
		expect(await usageRows(n.app, a.accountId)).toEqual([])
	})

	it("should count a Gemini model's input with Gemini's countTokens", async () => {
		const a = await client()
		const counted = await a.openai.responses.inputTokens.count({ model: 'gemini-2.5-flash', ...body })
		expect(lastRequest(n.gemini).path).toContain(':countTokens')
		expect(counted.input_tokens).toBeGreaterThan(0)
	})

	it("should refuse a continuation of another account's response, and an unknown model", async () => {
		const a = await client()
		const b = await client()
		const first = await a.openai.responses.create({ model: 'gpt-4o-mini', input: 'count continuation of account a' })
		const err = await b.openai.responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'x', previous_response_id: first.id }).then(
			() => undefined,
			(e: unknown) => e as APIError,
		)
		expect(err?.status).toBe(400)
		expect(err?.error).toMatchObject({ code: 'previous_response_not_found' })
		const unknown = await a.openai.responses.inputTokens.count({ model: 'no-such-model', input: 'x' }).then(
			() => undefined,
			(e: unknown) => e as APIError,
		)
		expect(unknown?.status).toBe(404)
	})
})
