/**
 * A conversation that moves between vendors, as coding agents let their users do: thinking from a vendor that does not
 * sign it (OpenAI-compatible, Gemini) reaches an Anthropic client as a thinking block with an empty signature, streamed
 * or not, and when the client sends it back to a Claude model the gateway leaves it out (Anthropic refuses the whole
 * request over it) — on the fast path and in count_tokens — while the Claude model's own signed thinking goes back
 * verbatim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { UNSIGNED_THINKING_TAG } from '../../../src/core/signatures'
import { unpackToolCallId } from '../../../src/core/tool-ids'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, THINKER } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const THINKING = { type: 'enabled', budget_tokens: 1024 } as const
type Block = Anthropic.ContentBlock
const thinkingOf = (content: Block[]) => content.filter((b) => b.type === 'thinking') as Anthropic.ThinkingBlock[]

describe('switching vendors mid-conversation (Anthropic client)', () => {
	for (const from of ['openai', 'gemini'] as const)
		for (const stream of [false, true])
			it(`should carry ${from}'s thinking unsigned${stream ? ' (streamed)' : ''}, and leave it out when the next turn goes to Claude`, async () => {
				const acct = await m.account()
				const first: Anthropic.MessageCreateParams = { model: THINKER[from], max_tokens: 2048, thinking: THINKING, messages: [{ role: 'user', content: 'Plan the trip' }] }
				const one = stream ? await acct.anthropic.messages.stream(first as Anthropic.MessageStreamParams).finalMessage() : ((await acct.anthropic.messages.create(first)) as Anthropic.Message)
				const foreign = thinkingOf(one.content)
				expect(foreign).toHaveLength(1)
				expect(foreign[0]!.thinking).toContain('Let me think')
				expect(foreign[0]!.signature).toBe(UNSIGNED_THINKING_TAG)

				const history: Anthropic.MessageParam[] = [first.messages[0]!, { role: 'assistant', content: one.content }, { role: 'user', content: 'And the budget?' }]
				const next = { model: MODEL.anthropic, max_tokens: 2048, thinking: THINKING, messages: history }
				const count = await acct.anthropic.messages.countTokens({ model: MODEL.anthropic, thinking: THINKING, messages: history })
				expect(count.input_tokens).toBeGreaterThan(0)
				const two = stream ? await acct.anthropic.messages.stream(next).finalMessage() : ((await acct.anthropic.messages.create(next)) as Anthropic.Message)
				expect(two.content.some((b) => b.type === 'text')).toBe(true)
				const sent = lastRequest(m.mocks.anthropic).body.messages as Array<{ role: string; content: Array<{ type: string }> | string }>
				expect(sent[1]!.content).toEqual(one.content.filter((b) => b.type !== 'thinking').map((b) => expect.objectContaining({ type: b.type })))

				// Claude's own signed thinking still goes back as it came.
				const signed = thinkingOf(two.content)
				expect(signed[0]!.signature).not.toBe('')
				await acct.anthropic.messages.create({ model: MODEL.anthropic, max_tokens: 2048, thinking: THINKING, messages: [...history, { role: 'assistant', content: two.content }, { role: 'user', content: 'Thanks' }] })
				const replayed = (lastRequest(m.mocks.anthropic).body.messages as Array<{ content: Block[] }>)[3]!.content
				expect(thinkingOf(replayed)).toEqual(signed)
			})
})

describe('switching vendors mid-conversation (OpenAI client)', () => {
	it("should give Gemini's tool calls, whose ids carry its thought signature, to an OpenAI model within its 40-character limit", async () => {
		const acct = await m.account()
		const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
		const ask: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'Weather in two cities #tools' }
		const one = await acct.openai.chat.completions.create({ model: MODEL.gemini, tools, messages: [ask] })
		const calls = one.choices[0]!.message.tool_calls!
		expect(calls.length).toBeGreaterThan(0)
		// The signature rides in the id, so the id is long.
		expect(Math.max(...calls.map((c) => c.id.length))).toBeGreaterThan(40)
		const history: OpenAI.ChatCompletionMessageParam[] = [ask, one.choices[0]!.message, ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'sunny' }))]
		const two = await acct.openai.chat.completions.create({ model: MODEL.openai, tools, messages: history })
		expect(two.choices[0]!.message.content).toContain('Tool results')
		const sent = lastRequest(m.mocks.openai).body.messages as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>
		const ids = sent[1]!.tool_calls!.map((c) => c.id)
		expect(ids.every((id) => id.length <= 40)).toBe(true)
		expect(sent.slice(2).map((t) => t.tool_call_id)).toEqual(ids)

		// Back to Gemini: the signatures are still in the client's ids, so they go back on the calls' parts.
		const before = m.mocks.gemini.requests.length
		await acct.openai.chat.completions.create({ model: MODEL.gemini, tools, messages: [...history, { role: 'assistant', content: two.choices[0]!.message.content }, { role: 'user', content: 'Thanks' }] })
		expect(m.mocks.gemini.requests.length).toBe(before + 1)
		const parts = (lastRequest(m.mocks.gemini).body.contents as Array<{ parts: Array<{ functionCall?: unknown; thoughtSignature?: string }> }>).flatMap((c) => c.parts)
		// Gemini signs the first of parallel calls; each call's part gets back what its id carried.
		expect(parts.filter((p) => p.functionCall).map((p) => p.thoughtSignature)).toEqual(calls.map((c) => unpackToolCallId(c.id).signature))
		expect(parts.some((p) => p.functionCall && p.thoughtSignature)).toBe(true)
	})
})
