/**
 * The models' known maximum output where requests meet it (src/relay/output-limit.ts): a converted request to
 * Anthropic that names no cap is sent the model's maximum (vendor-documented: Claude Sonnet 4.5 writes up to 64,000
 * tokens) rather than 4,096, within what the balance affords; a cap above the maximum is lowered to it when the
 * request is converted for another vendor, and left to the vendor to judge when the request reaches it in its own
 * protocol.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { countWords } from '../../mocks'
import { chat } from './clients'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'

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
	const counts = () => ({ openai: m.mocks.openai.requests.length, anthropic: m.mocks.anthropic.requests.length, gemini: m.mocks.gemini.requests.length })

	it('should reach the vendor unchanged when the request goes to it in its own protocol (it judges the cap, beta headers included)', async () => {
		const acct = await m.account()
		const before = counts()
		// Claude 3.7 Sonnet writes up to 128,000 tokens with anthropic-beta output-128k-2025-02-19, which no built-in
		// figure knows: the vendor, not the gateway, says whether a cap is too large.
		const s = await acct.anthropic.messages.create({ model: LONG, max_tokens: 100_000, messages: say('native'), stream: true }, { headers: { 'anthropic-beta': 'output-128k-2025-02-19' } })
		for await (const _ of s);
		expect(m.mocks.anthropic.requests.length).toBe(before.anthropic + 1)
		expect(lastRequest(m.mocks.anthropic).body.max_tokens).toBe(100_000)
		await genai(acct).models.generateContent({ model: MODEL.gemini, contents: 'native', config: { maxOutputTokens: 100_000 } })
		expect(lastRequest(m.mocks.gemini).body.generationConfig.maxOutputTokens).toBe(100_000)
		await acct.openai.chat.completions.create({ model: MODEL.openai, messages: say('native'), max_tokens: 20_000 })
		expect(lastRequest(m.mocks.openai).body.max_tokens).toBe(20_000)
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

	it('should take a cap at the maximum', async () => {
		const acct = await m.account()
		const r = await genai(acct).models.generateContent({ model: MODEL.gemini, contents: 'at the limit', config: { maxOutputTokens: 65_536 } })
		expect(r.text).toBe(answer('at the limit'))
		expect(lastRequest(m.mocks.gemini).body.generationConfig.maxOutputTokens).toBe(65_536)
	})
})
