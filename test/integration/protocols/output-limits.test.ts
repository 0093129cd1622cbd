/**
 * The models' known maximum output where requests meet it (src/relay/output-limit.ts): a converted request to
 * Anthropic that names no cap is sent the model's maximum (vendor-documented: Claude Sonnet 4.5 writes up to 64,000
 * tokens) rather than 4,096, within what the balance affords; a cap above the maximum is refused with the 400 the
 * caller's vendor gives, before any upstream call or charge, when the request goes to that vendor in its own
 * protocol, and lowered to the maximum when converted for another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { ApiError, GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { chat } from './clients'
import { type Account, expectCharges, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

/** Served by the Anthropic mock as claude-sonnet-4-5 (64,000 output tokens, 200,000 context), with no limit configured. */
const LONG = 'claude-long'
const LONG_MAX = 64_000

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [{ name: 'ch-long', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [LONG], model_map: { [LONG]: 'claude-sonnet-4-5' } }],
		models: [{ name: LONG, input_per_mtok: 3, output_per_mtok: 15 }],
	})
}, SETUP_MS)
afterAll(() => m.close())

const say = (text: string) => [{ role: 'user' as const, content: text }]
const answer = (text: string) => `Hello! You said: ${text}`
const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })

/** The one usage row of a LONG answer to `text` ($3 / $15 per million, the mock counting words) and the balance it left. */
async function expectLongCharge(acct: Account, text: string) {
	const rows = await usageRows(m, acct.accountId)
	const input = countWords(text)
	const output = countWords(answer(text))
	expect(rows.map((r) => [r.model, r.input_tokens, r.output_tokens, Math.round(r.cost * 1e6)])).toEqual([[LONG, input, output, input * 3 + output * 15]])
	expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(Math.round(acct.balance * 1e6) - rows.reduce((n, r) => n + Math.round(r.cost * 1e6), 0))
}

describe('a converted request to Anthropic without a cap', () => {
	it("should be sent the model's documented maximum rather than 4,096 (openai SDK)", async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: LONG, messages: say('long answer') }, false)
		expect(a.text).toBe(answer('long answer'))
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.model).toBe('claude-sonnet-4-5')
		expect(sent.max_tokens).toBe(LONG_MAX)
		await expectLongCharge(acct, 'long answer')
	})

	it("should be sent the model's maximum from @google/genai, with the thinking budget under it", async () => {
		const acct = await m.account()
		const r = await genai(acct).models.generateContent({ model: LONG, contents: 'think long', config: { thinkingConfig: { thinkingBudget: 8000 } } })
		expect(r.text).toContain(answer('think long'))
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.max_tokens).toBe(LONG_MAX)
		expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 })
	})

	it('should be sent only what a small balance affords, never overspending it', async () => {
		// $0.50 covers ~33,000 output tokens at $15 per million: well above 4,096, below the 64,000 the model allows.
		const acct = await m.account(0.5)
		const a = await chat(acct.openai, { model: LONG, messages: say('tight') }, false)
		expect(a.text).toBe(answer('tight'))
		const cap = lastRequest(m.mocks.anthropic).body.max_tokens as number
		expect(cap).toBeGreaterThan(33_000)
		expect(cap).toBeLessThan(LONG_MAX)
		expect(cap * 15).toBeLessThanOrEqual(500_000)
		await expectLongCharge(acct, 'tight')
	})
})

describe("a cap above the model's documented maximum", () => {
	const untouched = async (acct: Account, before: Record<'openai' | 'anthropic' | 'gemini', number>) => {
		for (const up of ['openai', 'anthropic', 'gemini'] as const) expect(m.mocks[up].requests.length).toBe(before[up])
		await expectCharges(m, acct, [])
	}
	const counts = () => ({ openai: m.mocks.openai.requests.length, anthropic: m.mocks.anthropic.requests.length, gemini: m.mocks.gemini.requests.length })

	it("should be refused in OpenAI's words for the openai SDK (chat max_tokens, gpt-4o-mini: 16,384)", async () => {
		const acct = await m.account()
		const before = counts()
		const err = await acct.openai.chat.completions.create({ model: MODEL.openai, messages: say('x'), max_tokens: 20000 }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		const e = err as InstanceType<typeof OpenAI.BadRequestError>
		expect(e.message).toBe('400 max_tokens is too large: 20000. This model supports at most 16384 completion tokens, whereas you provided 20000.')
		expect(e.param).toBe('max_tokens')
		await untouched(acct, before)
	})

	it('should be refused for the Responses API (max_output_tokens)', async () => {
		const acct = await m.account()
		const before = counts()
		const err = await acct.openai.responses.create({ model: MODEL.openai, input: 'x', max_output_tokens: 20000 }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(OpenAI.BadRequestError)
		expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('max_output_tokens')
		await untouched(acct, before)
	})

	it("should be refused in Anthropic's words for the anthropic SDK (claude-sonnet-4-5: 64,000)", async () => {
		const acct = await m.account()
		const before = counts()
		const err = await acct.anthropic.messages.create({ model: LONG, max_tokens: 100_000, messages: say('x'), stream: true }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
			type: 'error',
			error: { type: 'invalid_request_error', message: `max_tokens: 100000 > ${LONG_MAX}, which is the maximum allowed number of output tokens for ${LONG}` },
		})
		await untouched(acct, before)
	})

	it("should be lowered to the maximum on a request converted for another vendor (Claude Code's 32000 to gpt-4o-mini, 100000 from OpenAI to Claude)", async () => {
		const acct = await m.account()
		const s = await acct.anthropic.messages.create({ model: MODEL.openai, max_tokens: 32_000, messages: say('converted'), stream: true })
		for await (const _ of s);
		expect(lastRequest(m.mocks.openai).body.max_tokens).toBe(16_384)
		const a = await chat(acct.openai, { model: LONG, messages: say('converted'), max_tokens: 100_000 }, false)
		expect(a.text).toBe(answer('converted'))
		expect(lastRequest(m.mocks.anthropic).body.max_tokens).toBe(LONG_MAX)
	})

	it("should be refused in Gemini's words for @google/genai (maxOutputTokens, gemini-2.5-flash: 65,536)", async () => {
		const acct = await m.account()
		const before = counts()
		const err = await genai(acct).models.generateContent({ model: MODEL.gemini, contents: 'x', config: { maxOutputTokens: 100_000 } }).catch((e: unknown) => e)
		expect(err).toBeInstanceOf(ApiError)
		expect((err as ApiError).status).toBe(400)
		const body = JSON.parse((err as ApiError).message.slice((err as ApiError).message.indexOf('{'))) as { error: { status: string; message: string } }
		expect(body.error).toMatchObject({
			status: 'INVALID_ARGUMENT',
			message: 'Unable to submit request because it has a maxOutputTokens value of 100000 but the supported range is from 1 (inclusive) to 65537 (exclusive). Update the value and try again.',
		})
		await untouched(acct, before)
	})

	it('should take a cap at the maximum', async () => {
		const acct = await m.account()
		const r = await genai(acct).models.generateContent({ model: MODEL.gemini, contents: 'at the limit', config: { maxOutputTokens: 65_536 } })
		expect(r.text).toBe(answer('at the limit'))
		expect(lastRequest(m.mocks.gemini).body.generationConfig.maxOutputTokens).toBe(65_536)
	})
})
