/**
 * A conversation that goes Gemini 3 → Claude → Gemini 3 through real clients, with thinking on (QA report item 2).
 * Gemini 3 signs the text part of an answer without function calls; the client gets that signature as a thinking
 * signature with an origin tag (core/signatures.ts). Claude's turn must not get it: the Anthropic mock, like the API,
 * refuses a thinking block whose signature it did not issue (count_tokens too). Gemini's next turn must get it back,
 * untagged, on the answer's text part: the Gemini mock refuses its text signature anywhere else or wrapped in other
 * bytes. Claude's own signatures go up byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import type Anthropic from '@anthropic-ai/sdk'
import { generateText, type ModelMessage, streamText } from 'ai'
import type OpenAI from 'openai'
import { isForeignSignature, UNSIGNED_THINKING_TAG, untagSignature } from '../../../src/core/signatures'
import { textSignatureFor, thinkingSignature } from '../../mocks'
import { chat, messages } from './clients'
import { lastRequest, type Matrix, MODEL, SETUP_MS, GEMINI_3, startMatrixWithGemini3 } from './harness'

// The SDK warns on stderr about model names it does not know (ours are aliases).
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithGemini3()
}, SETUP_MS)
afterAll(() => m.close())

const THINKING = { type: 'enabled', budget_tokens: 1024 } as const
const ASK = 'Plan the trip'
const ANSWER = `Hello! You said: ${ASK}`

type Block = { type: string; signature?: string }

/** The thinking blocks the Anthropic mock received, all turns. */
const anthropicThinking = () =>
	(lastRequest(m.mocks.anthropic).body.messages as Array<{ content: Block[] | string }>).flatMap((x) => (Array.isArray(x.content) ? x.content.filter((b) => b.type === 'thinking') : []))

/** Gemini's answer turn as the Gemini mock got it back: contents[1] of the last request. */
const geminiTurn = () => (lastRequest(m.mocks.gemini).body.contents as Array<{ role: string; parts: unknown[] }>)[1]

/** The signatures a client was shown, as tagged Gemini ones (besides the gateway's mark on unsigned thinking); Gemini signed the answer text. */
function expectGeminiSigned(signatures: string[]) {
	const shown = signatures.filter((s) => s && s !== UNSIGNED_THINKING_TAG)
	expect(shown).toHaveLength(1)
	expect(untagSignature(shown[0]!)).toEqual({ origin: 'gemini-text', signature: textSignatureFor(ANSWER) })
}

describe('Gemini 3 → Claude → Gemini 3 with thinking', () => {
	for (const stream of [false, true]) {
		const how = stream ? ' (streamed)' : ''

		it(`should keep Gemini's text signature from Claude and give it back to Gemini on its part: Anthropic SDK${how}`, async () => {
			const acct = await m.account()
			const ask: Anthropic.MessageParam = { role: 'user', content: ASK }
			const one = await messages(acct.anthropic, { model: GEMINI_3, max_tokens: 2048, thinking: THINKING, messages: [ask] }, stream)
			expect(one.text).toBe(ANSWER)
			expectGeminiSigned(one.signatures)

			const history: Anthropic.MessageParam[] = [ask, one.replay, { role: 'user', content: 'And the budget?' }]
			const count = await acct.anthropic.messages.countTokens({ model: MODEL.anthropic, thinking: THINKING, messages: history })
			expect(count.input_tokens).toBeGreaterThan(0)
			expect(anthropicThinking()).toEqual([])
			const two = await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 2048, thinking: THINKING, messages: history }, stream)
			expect(two.text).toBe('Hello! You said: And the budget?')
			expect(anthropicThinking()).toEqual([])
			expect(lastRequest(m.mocks.anthropic).body.messages[1].content).toEqual([{ type: 'text', text: ANSWER }])

			// Claude's own signature went to the client as Anthropic made it.
			const claudeSignature = thinkingSignature('Let me think about And the budget?.')
			expect(two.signatures).toEqual([claudeSignature])
			const back: Anthropic.MessageParam[] = [...history, two.replay, { role: 'user', content: 'Thanks' }]
			await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 2048, thinking: THINKING, messages: back }, stream)
			expect(anthropicThinking().map((b) => b.signature)).toEqual([claudeSignature])

			const three = await messages(acct.anthropic, { model: GEMINI_3, max_tokens: 2048, thinking: THINKING, messages: back }, stream)
			expect(three.text).toBe('Hello! You said: Thanks')
			expect(geminiTurn()).toEqual({ role: 'model', parts: [{ text: ANSWER, thoughtSignature: textSignatureFor(ANSWER) }] })
		})

		it(`should keep Gemini's text signature from Claude and give it back to Gemini on its part: OpenAI chat SDK${how}`, async () => {
			const acct = await m.account()
			const ask: OpenAI.ChatCompletionMessageParam = { role: 'user', content: ASK }
			const one = await chat(acct.openai, { model: GEMINI_3, reasoning_effort: 'low', messages: [ask] }, stream)
			expect(one.text).toBe(ANSWER)
			expectGeminiSigned(one.signatures)

			const history: OpenAI.ChatCompletionMessageParam[] = [ask, one.replay, { role: 'user', content: 'And the budget?' }]
			const two = await chat(acct.openai, { model: MODEL.anthropic, reasoning_effort: 'low', messages: history }, stream)
			expect(two.text).toBe('Hello! You said: And the budget?')
			expect(anthropicThinking()).toEqual([])

			const three = await chat(acct.openai, { model: GEMINI_3, reasoning_effort: 'low', messages: [...history, two.replay, { role: 'user', content: 'Thanks' }] }, stream)
			expect(three.text).toBe('Hello! You said: Thanks')
			expect(geminiTurn()).toEqual({ role: 'model', parts: [{ text: ANSWER, thoughtSignature: textSignatureFor(ANSWER) }] })
		})

		it(`should keep Gemini's text signature from Claude and give it back to Gemini on its part: Vercel AI SDK (@ai-sdk/anthropic)${how}`, async () => {
			const acct = await m.account()
			const provider = createAnthropic({ apiKey: acct.key, baseURL: `${m.app.url}/v1` })
			const providerOptions = { anthropic: { thinking: { type: 'enabled' as const, budgetTokens: 1024 } } }
			const turn = async (model: string, msgs: ModelMessage[]) => {
				const opts = { model: provider(model), messages: msgs, maxOutputTokens: 4000, providerOptions }
				if (!stream) {
					const r = await generateText(opts)
					return { text: r.text, messages: r.response.messages }
				}
				let failure: unknown
				const s = streamText({ ...opts, onError: ({ error }) => void (failure = error) })
				await s.consumeStream()
				if (failure) throw failure
				return { text: await s.text, messages: (await s.response).messages }
			}
			const ask: ModelMessage = { role: 'user', content: ASK }
			const one = await turn(GEMINI_3, [ask])
			expect(one.text).toBe(ANSWER)
			const history: ModelMessage[] = [ask, ...one.messages, { role: 'user', content: 'And the budget?' }]
			const two = await turn(MODEL.anthropic, history)
			expect(two.text).toBe('Hello! You said: And the budget?')
			expect(anthropicThinking().filter((b) => isForeignSignature(b.signature ?? ''))).toEqual([])

			const three = await turn(GEMINI_3, [...history, ...two.messages, { role: 'user', content: 'Thanks' }])
			expect(three.text).toBe('Hello! You said: Thanks')
			expect(geminiTurn()).toEqual({ role: 'model', parts: [{ text: ANSWER, thoughtSignature: textSignatureFor(ANSWER) }] })
		})
	}
})

describe('a Gemini tool turn, then its results to Claude with thinking on', () => {
	it('should turn thinking off for that request (the tool turn lost its thinking), on the fast path and in count_tokens', async () => {
		const acct = await m.account()
		const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]
		const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in two cities #tools' }
		const one = await messages(acct.anthropic, { model: GEMINI_3, max_tokens: 2048, thinking: THINKING, tools, messages: [ask] }, false)
		expect(one.calls).toHaveLength(2)
		const history: Anthropic.MessageParam[] = [ask, one.replay, { role: 'user', content: one.calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: 'sunny' })) }]
		const count = await acct.anthropic.messages.countTokens({ model: MODEL.anthropic, thinking: THINKING, tools, messages: history })
		expect(count.input_tokens).toBeGreaterThan(0)
		expect(lastRequest(m.mocks.anthropic).body.thinking).toEqual({ type: 'disabled' })
		const two = await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 2048, thinking: THINKING, tools, messages: history }, false)
		expect(two.text).toBe('Tool results: sunny; sunny')
		expect(lastRequest(m.mocks.anthropic).body.thinking).toEqual({ type: 'disabled' })
		expect(lastRequest(m.mocks.anthropic).body.messages[1].content.map((b: Block) => b.type)).toEqual(['tool_use', 'tool_use'])
	})
})
