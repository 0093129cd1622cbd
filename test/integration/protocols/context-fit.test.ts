/**
 * A converted request to Claude whose cap the gateway chooses fits the context window (src/relay/output-limit.ts).
 * Anthropic refuses a prompt whose tokens plus `max_tokens` exceed the window ("input length and `max_tokens` exceed
 * context limit: … > 200000"), which OpenAI and Gemini never do for a cap their clients did not name: a long
 * conversation from the openai SDK or the Vercel AI SDK, sent the model's 64,000-token maximum, would be refused. The
 * mock enforces the rule, counting words; the conversation is words the o200k count sees one token each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { GoogleGenAI } from '@google/genai'
import { generateText, type ModelMessage, streamText } from 'ai'
import type OpenAI from 'openai'
import { countWords } from '../../mocks'
import { chat } from './clients'
import { type Account, lastRequest, type Matrix, SETUP_MS, startMatrix } from './harness'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

/** Claude Sonnet 4.5: 200,000 tokens of context, 64,000 of output (documented); no limit configured. */
const LONG = 'claude-window'
const WINDOW = 200_000
const LONG_MAX = 64_000
/** The same model with an operator's `max_output_tokens`. */
const CAPPED = 'claude-window-capped'
const CAPPED_MAX = 16_384

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [
			{ name: 'ch-window', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [LONG, CAPPED], model_map: { [LONG]: 'claude-sonnet-4-5', [CAPPED]: 'claude-sonnet-4-5' } },
		],
		models: [
			{ name: LONG, input_per_mtok: 3, output_per_mtok: 15 },
			{ name: CAPPED, input_per_mtok: 3, output_per_mtok: 15, max_output_tokens: CAPPED_MAX },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

/** A conversation of `turns` long user turns (5,000 words each) answered briefly, then a short question. */
function conversation(turns: number, last = 'summarise'): OpenAI.Chat.Completions.ChatCompletionMessageParam[] {
	const page = 'hello '.repeat(5_000).trim()
	const out: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = []
	for (let i = 0; i < turns; i++) out.push({ role: 'user', content: page }, { role: 'assistant', content: 'noted' })
	out.push({ role: 'user', content: last })
	return out
}
/** The mock's count of a conversation's input. */
const wordsOf = (msgs: OpenAI.Chat.Completions.ChatCompletionMessageParam[]) => msgs.reduce((n, x) => n + countWords(String(x.content)), 0)
const answer = (text: string) => `Hello! You said: ${text}`
const sent = () => lastRequest(m.mocks.anthropic).body

/** The cap sent fits the window as the vendor counts (the mock answered), below the maximum, and no lower than needed. */
function expectFitted(input: number, max: number) {
	const cap = sent().max_tokens as number
	expect(input + cap).toBeLessThanOrEqual(WINDOW)
	expect(cap).toBeLessThan(max)
	// The estimate's safety margin leaves the answer most of the room: more than a default answer's 4,096 tokens.
	expect(cap).toBeGreaterThan(8_000)
	return cap
}

describe('a long converted request to Claude naming no cap', () => {
	// 30 turns of 5,000 words: 150,000 tokens, so the model's 64,000 maximum would exceed the 200,000 window.
	const msgs = conversation(30)
	const input = wordsOf(msgs)

	it('should be sent a cap fitted to the context window, and answered (openai SDK)', async () => {
		const acct = await m.account()
		for (const stream of [false, true]) {
			const a = await chat(acct.openai, { model: LONG, messages: msgs }, stream)
			expect(a.text).toBe(answer('summarise'))
			expect(a.usage.input).toBe(input)
			expectFitted(input, LONG_MAX)
		}
	})

	it('should hold what it sends: the usage row is charged as the mock counted', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: LONG, messages: msgs }, false)
		const output = countWords(answer('summarise'))
		expect(Math.round((await m.app.balance(acct.accountId)) * 1e6)).toBe(10_000_000 - (input * 3 + output * 15))
	})

	it('should be answered through the Vercel AI SDK (generateText and streamText)', async () => {
		const acct = await m.account()
		const model = createOpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1` }).chat(LONG)
		const g = await generateText({ model, messages: msgs as ModelMessage[] })
		expect(g.text).toBe(answer('summarise'))
		expectFitted(input, LONG_MAX)
		const s = streamText({ model, messages: msgs as ModelMessage[] })
		expect(await s.text).toBe(answer('summarise'))
		expect((await s.totalUsage).inputTokens).toBe(input)
		expectFitted(input, LONG_MAX)
	})

	it('should keep the thinking budget below the fitted cap (reasoning_effort, and an explicit Gemini budget above it)', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: LONG, messages: msgs, reasoning_effort: 'high' } as Parameters<typeof chat>[1], false)
		expect(a.text).toBe(answer('summarise'))
		const cap = expectFitted(input, LONG_MAX)
		expect(sent().thinking).toEqual({ type: 'enabled', budget_tokens: 4096 })
		expect(cap).toBeGreaterThan(4096)
		// A Gemini client's 40,000-token budget does not fit under the fitted cap: thinking gets half of it (core/reasoning.ts).
		const genai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const contents = msgs.map((x) => ({ role: x.role === 'assistant' ? 'model' : 'user', parts: [{ text: String(x.content) }] }))
		const r = await genai.models.generateContent({ model: LONG, contents, config: { thinkingConfig: { thinkingBudget: 40_000 } } })
		expect(r.text).toContain(answer('summarise'))
		const fitted = expectFitted(input, LONG_MAX)
		expect(sent().thinking).toEqual({ type: 'enabled', budget_tokens: Math.floor(fitted / 2) })
	})

	it("should fit an operator's max_output_tokens too", async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: CAPPED, messages: msgs }, false)
		expect(a.text).toBe(answer('summarise'))
		expectFitted(input, CAPPED_MAX)
	})

	it('should fit a converted cap lowered to the maximum (100,000 from an OpenAI client)', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: LONG, messages: msgs, max_tokens: 100_000 }, false)
		expect(a.text).toBe(answer('summarise'))
		expectFitted(input, LONG_MAX)
	})
})

describe('what the gateway leaves alone', () => {
	it('should send a short request the full maximum', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: LONG, messages: conversation(1) }, false)
		expect(a.text).toBe(answer('summarise'))
		expect(sent().max_tokens).toBe(LONG_MAX)
	})

	it("should send a client's own cap as named, and pass the vendor's 400 on when it does not fit", async () => {
		const acct = await m.account()
		const msgs = conversation(30)
		const e = await acct.openai.chat.completions.create({ model: LONG, messages: msgs, max_tokens: 60_000 }).catch((x) => x)
		expect(e.status).toBe(400)
		expect(e.message).toContain(`input length and \`max_tokens\` exceed context limit: ${wordsOf(msgs)} + 60000 > ${WINDOW}`)
		expect(sent().max_tokens).toBe(60_000)
	})

	it('should send a floor when the input leaves almost no room, the vendor judging it', async () => {
		const acct = await m.account()
		// 39 turns: 195,000 words, 5,000 under the window: the estimate's margin leaves nothing, so 4,096 goes and fits.
		const msgs = conversation(39)
		const a = await chat(acct.openai, { model: LONG, messages: msgs }, false)
		expect(a.text).toBe(answer('summarise'))
		expect(sent().max_tokens).toBe(4096)
		// 2,000 more words: the input alone fits, but not with the floor, and Anthropic's own 400 is the answer.
		const over = conversation(39, `${'hello '.repeat(2_000)}summarise`)
		const e = await acct.openai.chat.completions.create({ model: LONG, messages: over }).catch((x) => x)
		expect(e.status).toBe(400)
		expect(e.message).toContain(`input length and \`max_tokens\` exceed context limit: ${wordsOf(over)} + 4096 > ${WINDOW}`)
	})
})
