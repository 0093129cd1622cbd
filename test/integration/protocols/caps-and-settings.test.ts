/**
 * Converted requests keep the caller's generation settings (QA conversion report, items 5, 7 and 11), through the
 * official SDKs, checking what each mock vendor received and what was billed:
 * - no hidden output cap: a client that set none gets the vendor's default, as on the same-protocol path, except
 *   where the vendor requires one (Anthropic), which gets the cap the reservation assumed;
 * - the caller's cap is a total: a thinking budget stays below it with room for an answer, and thinking is turned off
 *   rather than the cap raised (core/reasoning.ts);
 * - seed, penalties and log probabilities cross between chat and Gemini, and Gemini `candidateCount > 1` goes to a
 *   Gemini channel as written (other vendors: choices-converted.test.ts);
 * - values outside the caller's protocol's documented ranges get a local 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { countWords } from '../../mocks'
import { pieceLogprobs } from '../../mocks/shared/logprobs'
import { chat, messages } from './clients'
import { type Account, CAPPED, CAPPED_MAX, expectCharges, lastRequest, type Matrix, MODEL, PRICE, SETUP_MS, startMatrix, usageRows } from './harness'

/**
 * A model served over Anthropic's protocol whose limits the gateway does not know (another vendor's Anthropic-compatible
 * API): the matrix's Claude has documented limits (routing/model-limits.ts), so its default cap is its maximum.
 */
const COMPAT = 'claude-compat'
const COMPAT_UPSTREAM = 'kimi-k2'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		channels: (mocks) => [{ name: 'compat', type: 'anthropic', base_url: mocks.anthropic.url, api_key: 'up-anthropic', models: [COMPAT], model_map: { [COMPAT]: COMPAT_UPSTREAM } }],
	})
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
const answer = (text: string) => `Hello! You said: ${text}`
const thought = (text: string) => `Let me think about ${text}.`
const say = (text: string) => [{ role: 'user' as const, content: text }]

/** Every reservation of the account was settled or released: nothing is left in use on its leases. */
function expectNothingHeld(acct: Account) {
	const held = m.app.svc.ledger.leases().filter((l) => l.accountId === acct.accountId)
	expect(held.reduce((n, l) => n + l.inUse, 0)).toBe(0)
}

/** The request was refused before anything was billed or sent: no charge, the balance intact, nothing held. */
async function expectRefusedUnbilled(acct: Account) {
	const rows = await usageRows(m, acct.accountId)
	expect(rows.every((r) => r.cost === 0 && r.status === 400)).toBe(true)
	expect(await m.app.balance(acct.accountId)).toBe(acct.balance)
	expectNothingHeld(acct)
}

describe('output cap on converted requests', () => {
	it('should send Gemini and OpenAI no cap when the client set none, as the same-protocol path does', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.gemini, messages: say('no cap to gemini') }, false)
		expect(lastRequest(m.mocks.gemini).body.generationConfig?.maxOutputTokens).toBeUndefined()
		await chat(acct.openai, { model: MODEL.gemini, messages: say('no cap to gemini, streamed') }, true)
		expect(lastRequest(m.mocks.gemini).body.generationConfig?.maxOutputTokens).toBeUndefined()

		const r = await genai(acct).models.generateContent({ model: MODEL.openai, contents: 'no cap to openai' })
		expect(r.text).toBe(answer('no cap to openai'))
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.max_tokens, sent.max_completion_tokens]).toEqual([undefined, undefined])

		// The same request on a same-protocol channel (the fast path) for comparison.
		await chat(acct.openai, { model: MODEL.openai, messages: say('no cap, same protocol') }, false)
		expect(lastRequest(m.mocks.openai).body.max_tokens).toBeUndefined()

		await expectCharges(m, acct, [
			{ model: MODEL.gemini, input: 4, output: countWords(answer('no cap to gemini')) },
			{ model: MODEL.gemini, input: 5, output: countWords(answer('no cap to gemini, streamed')), stream: true },
			{ model: MODEL.openai, input: 4, output: countWords(answer('no cap to openai')) },
			{ model: MODEL.openai, input: 4, output: countWords(answer('no cap, same protocol')) },
		])
		expectNothingHeld(acct)
	})

	it('should charge an uncapped answer longer than the reserved 4096 tokens in full at settlement', async () => {
		// The mock echoes the prompt: 5000 words in, 5003 out, past the 4096 output tokens the reservation assumed.
		const acct = await m.account()
		const long = Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' ')
		const a = await chat(acct.openai, { model: MODEL.gemini, messages: say(long) }, false)
		expect(a.usage.output).toBe(5003)
		expect(lastRequest(m.mocks.gemini).body.generationConfig?.maxOutputTokens).toBeUndefined()
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 5000, output: 5003 }])
		expectNothingHeld(acct)
	})

	it('should never take the balance below zero when an uncapped answer outgrows its reservation', async () => {
		// $0.013 covers the reservation (~5000 input + 4096 output tokens: ~$0.01174) but not the answer ($0.0140075).
		const acct = await m.account(0.013)
		const long = Array.from({ length: 5000 }, () => 'hi').join(' ')
		await chat(acct.openai, { model: MODEL.gemini, messages: say(long) }, false)
		expect(lastRequest(m.mocks.gemini).body.generationConfig?.maxOutputTokens).toBeUndefined()
		const [row] = await usageRows(m, acct.accountId)
		expect([row!.input_tokens, row!.output_tokens]).toEqual([5000, 5003])
		expect(Math.round(row!.cost * 1e6)).toBe(13_000)
		expect(await m.app.balance(acct.accountId)).toBe(0)
		expectNothingHeld(acct)
	})

	it("should send Anthropic, which requires max_tokens, the cap reserved for: the default, or the model's maximum", async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: COMPAT, messages: say('default cap') }, false)
		expect(lastRequest(m.mocks.anthropic).body.max_tokens).toBe(4096)
		await chat(acct.openai, { model: CAPPED.anthropic, messages: say('model maximum') }, false)
		expect(lastRequest(m.mocks.anthropic).body.max_tokens).toBe(CAPPED_MAX)
		// Claude Sonnet 4.6's documented maximum output (platform.claude.com/docs/en/about-claude/models/overview).
		await chat(acct.openai, { model: MODEL.anthropic, messages: say('documented maximum') }, false)
		expect(lastRequest(m.mocks.anthropic).body.max_tokens).toBe(64_000)
		await expectCharges(m, acct, [
			{ model: COMPAT, input: 2, output: countWords(answer('default cap')) },
			{ model: CAPPED.anthropic, input: 2, output: countWords(answer('model maximum')) },
			{ model: MODEL.anthropic, input: 2, output: countWords(answer('documented maximum')) },
		])
	})

	it('should still send a cap the balance imposes on a client that set none, so the call cannot cost more than was reserved', async () => {
		// $0.0004 covers ~160 output tokens of gemini-m ($2.50 per million), far below the default 4096.
		const acct = await m.account(0.0004)
		await chat(acct.openai, { model: MODEL.gemini, messages: say('tight balance') }, false)
		const cap = lastRequest(m.mocks.gemini).body.generationConfig.maxOutputTokens as number
		expect(cap).toBeGreaterThanOrEqual(16)
		expect(cap * PRICE[MODEL.gemini]!.output).toBeLessThanOrEqual(400)
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 2, output: countWords(answer('tight balance')) }])
		expectNothingHeld(acct)
	})
})

describe('thinking budget under the caller’s cap', () => {
	it('should keep the effort’s budget and send no cap to Gemini when the client set none', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: MODEL.gemini, messages: say('think hard'), reasoning_effort: 'high' }, false)
		expect(a.text).toBe(answer('think hard'))
		const cfg = lastRequest(m.mocks.gemini).body.generationConfig
		expect(cfg.maxOutputTokens).toBeUndefined()
		expect(cfg.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 4096 })
		const output = countWords(thought('think hard')) + countWords(answer('think hard'))
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 2, output, reasoning: countWords(thought('think hard')) }])
	})

	it('should keep the thinking budget below a caller’s max_completion_tokens to Gemini, with room for the answer', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.gemini, messages: say('capped thinking'), reasoning_effort: 'high', max_completion_tokens: 1000 }, true)
		const cfg = lastRequest(m.mocks.gemini).body.generationConfig
		expect(cfg.maxOutputTokens).toBe(1000)
		expect(cfg.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 500 })
		const output = countWords(thought('capped thinking')) + countWords(answer('capped thinking'))
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 2, output, reasoning: countWords(thought('capped thinking')), stream: true }])
	})

	it('should turn thinking off for Claude rather than raise a cap too small for its 1024-token minimum', async () => {
		const acct = await m.account()
		const a = await chat(acct.openai, { model: MODEL.anthropic, messages: say('small cap'), reasoning_effort: 'high', max_completion_tokens: 1000 }, false)
		expect(a.reasoning).toBe('')
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.max_tokens).toBe(1000)
		expect(sent.thinking).toEqual({ type: 'disabled' })
		await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 2, output: countWords(answer('small cap')) }])
	})

	it('should give Claude a default cap with room for an answer above the budget when the client set none', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: COMPAT, messages: say('room to answer'), reasoning_effort: 'high' }, true)
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 })
		expect(sent.max_tokens).toBe(4096 + 4096)
		const output = countWords(thought('room to answer')) + countWords(answer('room to answer'))
		await expectCharges(m, acct, [{ model: COMPAT, input: 3, output, reasoning: countWords(thought('room to answer')), stream: true }])
		expectNothingHeld(acct)
	})

	it('should lower that default to what the balance covers and fit the budget under it, never past the reservation', async () => {
		// $0.06 covers ~4000 output tokens of claude-m ($15 per million): less than the 8192 a high effort assumes.
		const acct = await m.account(0.06)
		await chat(acct.openai, { model: MODEL.anthropic, messages: say('tight thinking'), reasoning_effort: 'high' }, false)
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.max_tokens).toBeLessThan(4096)
		expect(sent.max_tokens * PRICE[MODEL.anthropic]!.output).toBeLessThanOrEqual(60_000)
		expect(sent.thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
		expect(sent.thinking.budget_tokens).toBeLessThanOrEqual(sent.max_tokens / 2)
		const output = countWords(thought('tight thinking')) + countWords(answer('tight thinking'))
		await expectCharges(m, acct, [{ model: MODEL.anthropic, input: 2, output, reasoning: countWords(thought('tight thinking')) }])
		expectNothingHeld(acct)
	})

	it('should keep an Anthropic client’s own budget that fits its max_tokens when going to Gemini', async () => {
		const acct = await m.account()
		await messages(acct.anthropic, { model: MODEL.gemini, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: say('own budget') } as never, false)
		const cfg = lastRequest(m.mocks.gemini).body.generationConfig
		expect(cfg.maxOutputTokens).toBe(3000)
		expect(cfg.thinkingConfig.thinkingBudget).toBe(2048)
	})

	// Qwen Code 0.24 (`--auth-type anthropic`) fits its 32000 budget under max_tokens only for Claude model names; for
	// any other model it sends the budget whole with that model's own cap (gpt-4.1 16384, gemini-2.5-pro 8192).
	// Anthropic's "max_tokens must be greater than budget_tokens" is Claude's rule: other vendors get the budget fitted.
	const QWEN_THINKING = { type: 'enabled', budget_tokens: 32000 } as const
	for (const stream of [false, true])
		it(`should fit a thinking budget at or above max_tokens under the cap for Gemini, as Qwen Code sends it (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const a = await messages(acct.anthropic, { model: MODEL.gemini, max_tokens: 8192, thinking: QWEN_THINKING, messages: say('qwen budget') } as never, stream)
			expect(a.text).toBe(answer('qwen budget'))
			expect(a.reasoning).toBe(thought('qwen budget'))
			const cfg = lastRequest(m.mocks.gemini).body.generationConfig
			expect(cfg.maxOutputTokens).toBe(8192)
			expect(cfg.thinkingConfig.thinkingBudget).toBe(4096)
			const output = countWords(thought('qwen budget')) + countWords(answer('qwen budget'))
			await expectCharges(m, acct, [{ model: MODEL.gemini, input: 2, output, reasoning: countWords(thought('qwen budget')), stream }])
			expectNothingHeld(acct)
		})

	it('should answer a model that does not reason when the budget is above max_tokens, as Qwen Code sends it for GPT', async () => {
		const acct = await m.account()
		const a = await messages(acct.anthropic, { model: MODEL.openai, max_tokens: 16384, thinking: QWEN_THINKING, messages: say('qwen gpt') } as never, true)
		expect(a.text).toBe(answer('qwen gpt'))
		const sent = lastRequest(m.mocks.openai).body
		expect(sent.max_tokens).toBe(16384)
		expect('reasoning_effort' in sent).toBe(false)
		await expectCharges(m, acct, [{ model: MODEL.openai, input: 2, output: countWords(answer('qwen gpt')), stream: true }])
	})

	it("should leave Claude's own rule to Claude: a budget at max_tokens is Anthropic's 400, unbilled", async () => {
		const acct = await m.account()
		const err = await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 8192, thinking: { type: 'enabled', budget_tokens: 8192 }, messages: say('claude budget') })
			.catch((e: unknown) => e)
		expect(err).toBeInstanceOf(Anthropic.BadRequestError)
		expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('`max_tokens` must be greater than `thinking.budget_tokens`')
		await expectRefusedUnbilled(acct)
	})
})

describe('seed, penalties and log probabilities between chat and Gemini', () => {
	it('should send chat seed, penalties and logprobs to Gemini and return its log probabilities in the chat shape', async () => {
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({
			model: MODEL.gemini,
			messages: say('sampled'),
			seed: 7,
			presence_penalty: 0.5,
			frequency_penalty: -0.5,
			logprobs: true,
			top_logprobs: 2,
		})
		const cfg = lastRequest(m.mocks.gemini).body.generationConfig
		expect(cfg).toMatchObject({ seed: 7, presencePenalty: 0.5, frequencyPenalty: -0.5, responseLogprobs: true, logprobs: 2 })
		const bytes = (s: string) => [...new TextEncoder().encode(s)]
		expect(r.choices[0]!.logprobs?.content).toEqual(
			pieceLogprobs(answer('sampled'), 2).map((t) => ({
				token: t.token,
				logprob: t.logprob,
				bytes: bytes(t.token),
				top_logprobs: t.top.map((a) => ({ token: a.token, logprob: a.logprob, bytes: bytes(a.token) })),
			})),
		)
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 1, output: countWords(answer('sampled')) }])
	})

	it('should send Gemini seed, penalties and logprobs to OpenAI and return its log probabilities in the Gemini shape', async () => {
		const acct = await m.account()
		const r = await genai(acct).models.generateContent({
			model: MODEL.openai,
			contents: 'sampled too',
			config: { seed: 9, presencePenalty: 0.25, frequencyPenalty: 0.75, responseLogprobs: true, logprobs: 3 },
		})
		const sent = lastRequest(m.mocks.openai).body
		expect(sent).toMatchObject({ seed: 9, presence_penalty: 0.25, frequency_penalty: 0.75, logprobs: true, top_logprobs: 3 })
		const lp = pieceLogprobs(answer('sampled too'), 3)
		expect(r.candidates?.[0]?.logprobsResult).toEqual({
			chosenCandidates: lp.map((t) => ({ token: t.token, logProbability: t.logprob })),
			topCandidates: lp.map((t) => ({ candidates: t.top.map((a) => ({ token: a.token, logProbability: a.logprob })) })),
		})
		await expectCharges(m, acct, [{ model: MODEL.openai, input: 2, output: countWords(answer('sampled too')) }])
	})

	it('should pass candidateCount through to a Gemini channel, reserving for every candidate', async () => {
		const acct = await m.account()
		const r = await genai(acct).models.generateContent({ model: MODEL.gemini, contents: 'two on gemini', config: { candidateCount: 2 } })
		expect(r.candidates?.map((c) => [c.index, c.content?.parts?.[0]?.text])).toEqual([
			[0, answer('two on gemini')],
			[1, answer('two on gemini')],
		])
		expect(lastRequest(m.mocks.gemini).body.generationConfig.candidateCount).toBe(2)
		// Gemini counts every candidate's tokens in candidatesTokenCount: both are charged.
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 3, output: 2 * countWords(answer('two on gemini')) }])
	})

	it('should charge every streamed candidate on a Gemini channel', async () => {
		const acct = await m.account()
		const seen = new Set<number>()
		for await (const c of await genai(acct).models.generateContentStream({ model: MODEL.gemini, contents: 'two streamed', config: { candidateCount: 2 } })) for (const k of c.candidates ?? []) seen.add(k.index ?? 0)
		expect([...seen].sort()).toEqual([0, 1])
		await expectCharges(m, acct, [{ model: MODEL.gemini, input: 2, output: 2 * countWords(answer('two streamed')) }])
	})
})

describe('values outside the caller’s protocol ranges', () => {
	it('should refuse chat values OpenAI documents as out of range with a 400 naming the field, before any upstream call', async () => {
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ temperature: -1 }, 'temperature'],
			[{ temperature: 2.5 }, 'temperature'],
			[{ top_p: 1.5 }, 'top_p'],
			[{ presence_penalty: 3 }, 'presence_penalty'],
			[{ frequency_penalty: -2.5 }, 'frequency_penalty'],
			[{ logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
		]
		for (const [extra, param] of cases) {
			const acct = await m.account()
			const before = m.mocks.anthropic.requests.length
			const err = await acct.openai.chat.completions.create({ model: MODEL.anthropic, messages: say('out of range'), ...extra } as never).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param)
			expect(m.mocks.anthropic.requests.length).toBe(before)
			await expectRefusedUnbilled(acct)
		}
	})

	it('should refuse max_tokens 0 on /v1/messages with a 400 naming the field, as Anthropic does (it takes ≥ 1)', async () => {
		for (const model of [MODEL.anthropic, MODEL.openai]) {
			const acct = await m.account()
			const before = m.mocks.anthropic.requests.length + m.mocks.openai.requests.length
			const err = (await acct.anthropic.messages.create({ model, max_tokens: 0, messages: say('no room') }).catch((e: unknown) => e)) as { status?: number; message?: string }
			expect(err.status).toBe(400)
			expect(err.message).toContain('max_tokens')
			expect(m.mocks.anthropic.requests.length + m.mocks.openai.requests.length).toBe(before)
			await expectRefusedUnbilled(acct)
		}
	})

	it('should still clamp a temperature valid for OpenAI but above Claude’s range', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.anthropic, messages: say('hot'), temperature: 2 }, false)
		expect(lastRequest(m.mocks.anthropic).body.temperature).toBe(1)
	})

	it('should refuse Gemini values outside its documented ranges with a 400 naming the field', async () => {
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ maxOutputTokens: -1 }, 'maxOutputTokens'],
			[{ temperature: 3 }, 'temperature'],
			[{ responseLogprobs: true, logprobs: 25 }, 'logprobs'],
		]
		for (const [config, field] of cases) {
			const acct = await m.account()
			const before = m.mocks.openai.requests.length
			const err = (await genai(acct)
				.models.generateContent({ model: MODEL.openai, contents: 'out of range', config })
				.catch((e: unknown) => e)) as { status?: number; message?: string }
			expect(err.status).toBe(400)
			expect(err.message).toContain(`generationConfig.${field}`)
			expect(m.mocks.openai.requests.length).toBe(before)
			await expectRefusedUnbilled(acct)
		}
	})

	it('should refuse a system-only conversation for Claude and Gemini, naming messages, and still serve it on OpenAI', async () => {
		const system = [{ role: 'system' as const, content: 'You only have a system prompt.' }]
		for (const model of [MODEL.anthropic, MODEL.gemini]) {
			const acct = await m.account()
			const err = await acct.openai.chat.completions.create({ model, messages: system }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(OpenAI.BadRequestError)
			expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('messages')
			await expectRefusedUnbilled(acct)
		}
		const acct = await m.account()
		const r = await acct.openai.chat.completions.create({ model: MODEL.openai, messages: system })
		expect(r.choices[0]!.message.role).toBe('assistant')
	})

	it("should name the client's own field when a Responses or Gemini conversation has no message Claude or Gemini can take", async () => {
		for (const model of [MODEL.anthropic, MODEL.gemini]) {
			const vendor = model === MODEL.anthropic ? 'Anthropic' : 'Gemini'
			const acct = await m.account()
			for (const [input, besides] of [
				[[{ role: 'developer' as const, content: 'Be brief.' }], true],
				[[{ role: 'user' as const, content: '' }], false],
			] as const) {
				const err = (await acct.openai.responses.create({ model, input: [...input] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>
				expect(err).toBeInstanceOf(OpenAI.BadRequestError)
				expect(err.param).toBe('input')
				expect(err.message).toContain(`input: ${vendor} models need at least one user or assistant message with content, and this conversation has none${besides ? ' besides the system prompt' : ''}`)
				if (!besides) expect(err.message).not.toContain('system prompt')
			}
			await expectRefusedUnbilled(acct)
		}
		// A Gemini client's own model gets its body as it came (the vendor judges it); Claude gets a converted one.
		const acct = await m.account()
		const err = (await genai(acct)
			.models.generateContent({ model: MODEL.anthropic, contents: [{ role: 'user', parts: [{ text: '' }] }], config: { systemInstruction: 'Be brief.' } })
			.catch((e: unknown) => e)) as { status?: number; message?: string }
		expect(err.status).toBe(400)
		expect(err.message).toContain('contents: Anthropic models need at least one user or assistant message with content, and this conversation has none besides the system prompt')
		await expectRefusedUnbilled(acct)
	})
})
