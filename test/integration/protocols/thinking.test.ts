/**
 * Issue 3 matrix, thinking / reasoning: OpenAI `reasoning_effort` and Anthropic `thinking` reach each vendor in its
 * own terms; the reasoning comes back (`reasoning_content` + signed `reasoning_details`, or signed thinking blocks);
 * reasoning tokens are billed as output and reported apart; and on the next turn (a tool round trip, where the
 * vendors are strictest) the thinking and its signature reach the same vendor intact — the mocks refuse a replayed
 * thinking block whose signature does not match, a tool-use turn that does not start with its thinking block, and a
 * Gemini function call without its thought signature (WIRE-NOTES #6, #7, wire §13, §18).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { UNSIGNED_THINKING_TAG } from '../../../src/core/signatures'
import { countWords, thinkingSignature, thoughtSignatureFor } from '../../mocks'
import { type Answer, chat, messages, type Protocol, PROTOCOLS } from './clients'
import { type Account, expectCharges, label, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, THINKER, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const TOOLS_CHAT = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
const TOOLS_MSG = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }]

/** Reasoning settings per client protocol: effort `low` (1024 tokens) or a 2048-token budget (`medium`). */
const THINK: Record<Protocol, Record<string, unknown>> = {
	chat: { reasoning_effort: 'low' },
	messages: { thinking: { type: 'enabled', budget_tokens: 2048 } },
}

/** How the reasoning request must look at each vendor. */
function expectThinkingConfig(proto: Protocol, up: Upstream, body: Record<string, any>) {
	if (up === 'openai') expect(body.reasoning_effort).toBe(proto === 'chat' ? 'low' : 'medium')
	if (up === 'anthropic') {
		expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: proto === 'chat' ? 1024 : 2048 })
		expect(body.max_tokens).toBeGreaterThan(body.thinking.budget_tokens)
	}
	if (up === 'gemini') expect(body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: proto === 'chat' ? 1024 : 2048 })
}

function ask(proto: Protocol, acct: Account, up: Upstream, stream: boolean, history: any[], tools: boolean): Promise<Answer> {
	const model = THINKER[up]
	if (proto === 'chat') return chat(acct.openai, { model, messages: history, ...THINK.chat, ...(tools && { tools: TOOLS_CHAT }) }, stream)
	return messages(acct.anthropic, { model, max_tokens: 4096, messages: history, ...THINK.messages, ...(tools && { tools: TOOLS_MSG }) } as never, stream)
}

const toolResults = (proto: Protocol, a: Answer, results: string[]) =>
	proto === 'chat'
		? a.calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: results[i] }))
		: [{ role: 'user', content: a.calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: results[i] })) }]

for (const proto of PROTOCOLS) {
	describe(`${proto} thinking`, () => {
		for (const [up, stream] of PAIRS) {
			it(`should return the reasoning and bill it as output (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const user = 'why is the sky blue'
				const a = await ask(proto, acct, up, stream, [{ role: 'user', content: user }], false)
				const thinking = `Let me think about ${user}.`
				const text = `Hello! You said: ${user}`
				expect(a.reasoning).toBe(thinking)
				expect(a.text).toBe(text)
				// Only Anthropic signs thinking; the others' reasoning carries no signature to replay (Anthropic clients get the
				// gateway's mark for unsigned thinking, as they need a signature to send thinking back).
				expect(a.signatures).toEqual(up === 'anthropic' ? [thinkingSignature(thinking)] : proto === 'messages' ? [UNSIGNED_THINKING_TAG] : [])
				const output = countWords(thinking) + countWords(text)
				expect(a.usage).toMatchObject({ input: countWords(user), output })
				if (proto === 'chat') expect(a.usage.reasoning).toBe(countWords(thinking))
				expectThinkingConfig(proto, up, lastRequest(m.mocks[up]).body)
				await expectCharges(m, acct, [{ model: THINKER[up], input: countWords(user), output, reasoning: countWords(thinking), stream }])
			})

			it(`should replay thinking and its signature to the vendor on the tool-result turn (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const user = 'weather please #tools'
				const first = await ask(proto, acct, up, stream, [{ role: 'user', content: user }], true)
				const thinking = `Let me think about ${user}.`
				expect(first.reasoning).toBe(thinking)
				expect(first.calls.map((c) => [c.name, c.args])).toEqual([
					['get_weather', { city: 'Paris' }],
					['get_weather', { city: 'Tokyo' }],
				])
				if (proto === 'messages') expect(first.replay.content[0].type).toBe('thinking')

				const history = [{ role: 'user', content: user }, first.replay, ...toolResults(proto, first, ['rain', 'sun'])]
				const second = await ask(proto, acct, up, stream, history, true)
				expect(second.text).toBe('Tool results: rain; sun')
				expect(second.reasoning).toBe(thinking)

				const body = lastRequest(m.mocks[up]).body
				if (up === 'anthropic') {
					// The mock already refused a wrong signature or a turn not led by thinking; check the bytes too.
					const assistant = body.messages.find((x: any) => x.role === 'assistant')
					expect(assistant.content[0]).toEqual({ type: 'thinking', thinking, signature: thinkingSignature(thinking) })
				} else if (up === 'openai') {
					// DeepSeek-style reasoners want reasoning_content back on tool turns (QuantumNous/new-api#4543).
					const assistant = body.messages.find((x: any) => x.role === 'assistant')
					expect(assistant.reasoning_content).toBe(thinking)
				} else {
					const calls = body.contents.flatMap((c: any) => c.parts).filter((p: any) => p.functionCall)
					expect(calls[0].thoughtSignature).toBe(thoughtSignatureFor('get_weather', { city: 'Paris' }))
				}
				expectThinkingConfig(proto, up, body)
				const results = countWords('rain') + countWords('sun')
				const out2 = countWords(thinking) + countWords('Tool results: rain; sun')
				await expectCharges(m, acct, [
					{ model: THINKER[up], input: countWords(user), output: countWords(thinking) + 4, reasoning: countWords(thinking), stream },
					{ model: THINKER[up], input: countWords(user) + results, output: out2, reasoning: countWords(thinking), stream },
				])
			})
		}
	})
}

// Qwen Code 0.24 (`--auth-type openai`, `reasoning: {effort}` in its settings) sends OpenRouter's `reasoning` object
// (https://openrouter.ai/docs/use-cases/reasoning-tokens) rather than `reasoning_effort` for models it does not take
// for OpenAI's: Claude and Gemini must think as asked, not answer as if nothing had been said.
describe('chat thinking asked with OpenRouter’s reasoning object', () => {
	const THINKING: Record<'anthropic' | 'gemini', (body: Record<string, any>) => unknown> = {
		anthropic: (body) => body.thinking,
		gemini: (body) => body.generationConfig.thinkingConfig,
	}
	const WANT = { anthropic: { type: 'enabled', budget_tokens: 4096 }, gemini: { includeThoughts: true, thinkingBudget: 4096 } }
	for (const up of ['anthropic', 'gemini'] as const)
		for (const stream of [false, true])
			it(`should turn reasoning.effort into thinking (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const user = 'think hard'
				const a = await chat(acct.openai, { model: MODEL[up], max_tokens: 64000, reasoning: { effort: 'high' }, messages: [{ role: 'user', content: user }] } as never, stream)
				expect(THINKING[up](lastRequest(m.mocks[up]).body)).toEqual(WANT[up])
				const thinking = `Let me think about ${user}.`
				expect(a.reasoning).toBe(thinking)
				expect(a.text).toBe(`Hello! You said: ${user}`)
				await expectCharges(m, acct, [{ model: MODEL[up], input: 2, output: countWords(thinking) + countWords(a.text), reasoning: countWords(thinking), stream }])
			})

	it('should take reasoning.max_tokens as the budget and reasoning.enabled false as no thinking', async () => {
		const acct = await m.account()
		await chat(acct.openai, { model: MODEL.anthropic, max_tokens: 8000, reasoning: { max_tokens: 2000 }, messages: [{ role: 'user', content: 'budgeted' }] } as never, false)
		expect(lastRequest(m.mocks.anthropic).body.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 })
		await chat(acct.openai, { model: MODEL.gemini, reasoning: { enabled: false }, messages: [{ role: 'user', content: 'no thinking' }] } as never, false)
		// Gemini 2.5 Flash thinks by default: off is a budget of 0.
		expect(lastRequest(m.mocks.gemini).body.generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 0 })
	})
})

describe("a coding agent's thinking budget on Gemini 2.5", () => {
	it('should hold a budget past the model’s documented maximum to it (Claude Code asks 31999 of a 2.5 Flash)', async () => {
		const acct = await m.account()
		const a = await messages(acct.anthropic, { model: MODEL.gemini, max_tokens: 64000, thinking: { type: 'enabled', budget_tokens: 31999 }, messages: [{ role: 'user', content: 'think a lot' }] } as never, true)
		expect(a.text).toBe('Hello! You said: think a lot')
		expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 24576 })
	})
})
