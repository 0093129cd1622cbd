/**
 * Reasoning no vendor signed (DeepSeek's `reasoning_content`), through an agent's tool loop on the Anthropic SDK, as
 * Claude Code runs one: it reaches the client as a thinking block carrying the gateway's unsigned mark, goes back to
 * DeepSeek as DeepSeek's thinking-mode docs ask (https://api-docs.deepseek.com/guides/thinking_mode: the reasoning of
 * a span that called tools "must be fully passed back to the API in all subsequent requests", that of a span that did
 * not is left out of the context), and never reaches Claude when the conversation moves there (Anthropic refuses a
 * thinking block whose signature it did not make).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { UNSIGNED_THINKING_TAG } from '../../../src/core/signatures'
import { messages } from './clients'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

/** A gateway model served by DeepSeek's OpenAI-compatible API (the OpenAI mock answers `deepseek-*` as DeepSeek does). */
const DEEPSEEK = 'deepseek-m'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [{ name: DEEPSEEK, input_per_mtok: 0.28, output_per_mtok: 0.42 }],
		channels: (mocks) => [{ name: 'deepseek', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [DEEPSEEK], model_map: { [DEEPSEEK]: 'deepseek-v4-flash' } }],
	})
}, SETUP_MS)
afterAll(() => m.close())

const THINKING = { type: 'enabled', budget_tokens: 1024 } as const
const TOOLS: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]
type Wire = { role: string; content?: unknown; reasoning_content?: string; tool_calls?: unknown[] }
const sentToDeepSeek = () => lastRequest(m.mocks.openai).body.messages as Wire[]
const thinkingOf = (content: Anthropic.ContentBlockParam[]) => content.filter((b): b is Anthropic.ThinkingBlockParam => b.type === 'thinking')

describe("DeepSeek's reasoning in a Claude Code tool loop", () => {
	for (const stream of [false, true])
		it(`should mark it unsigned, pass back the tool span's reasoning to DeepSeek and leave out the rest (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in two cities #tools' }
			const params = (history: Anthropic.MessageParam[]) => ({ model: DEEPSEEK, max_tokens: 4096, thinking: THINKING, tools: TOOLS, messages: history })

			// 1. Thinking, then two calls: the thinking block carries the unsigned mark, not an empty signature.
			const one = await messages(acct.anthropic, params([ask]), stream)
			expect(one.calls).toHaveLength(2)
			const thought = thinkingOf(one.replay.content as Anthropic.ContentBlockParam[])
			expect(thought.map((b) => [b.thinking, b.signature])).toEqual([['Let me think about Weather in two cities #tools.', UNSIGNED_THINKING_TAG]])

			// 2. The results: the tool-calling turn goes back with its reasoning (DeepSeek's 400 otherwise).
			const results: Anthropic.MessageParam = { role: 'user', content: one.calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: 'sunny' })) }
			const loop = [ask, one.replay, results]
			const two = await messages(acct.anthropic, params(loop), stream)
			expect(two.text).toBe('Tool results: sunny; sunny')
			expect(sentToDeepSeek().filter((w) => w.role === 'assistant').map((w) => w.reasoning_content)).toEqual([thought[0]!.thinking])

			// 3. A new question without tools, then another: the tool span's reasoning still goes back, the plain answer's not.
			const three = await messages(acct.anthropic, params([...loop, two.replay, { role: 'user', content: 'Thanks, and in one word?' }]), stream)
			const four = await messages(acct.anthropic, params([...loop, two.replay, { role: 'user', content: 'Thanks, and in one word?' }, three.replay, { role: 'user', content: 'Bye' }]), stream)
			expect(four.text).toBe('Hello! You said: Bye')
			const sent = sentToDeepSeek().filter((w) => w.role === 'assistant')
			expect(sent.map((w) => [w.tool_calls?.length ?? 0, w.reasoning_content])).toEqual([
				[2, 'Let me think about Weather in two cities #tools.'],
				[0, 'Let me think about Weather in two cities #tools.'],
				[0, undefined],
			])
		})

	for (const stream of [false, true])
		it(`should send none of it to Claude when the loop moves there with thinking on, and Claude answers (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in two cities #tools' }
			const one = await messages(acct.anthropic, { model: DEEPSEEK, max_tokens: 4096, thinking: THINKING, tools: TOOLS, messages: [ask] }, stream)
			const results: Anthropic.MessageParam = { role: 'user', content: one.calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: 'sunny' })) }
			const claude = await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 4096, thinking: THINKING, tools: TOOLS, messages: [ask, one.replay, results] }, stream)
			expect(claude.text).toBe('Tool results: sunny; sunny')
			const body = lastRequest(m.mocks.anthropic).body as { thinking?: unknown; messages: Array<{ content: Array<{ type: string }> }> }
			expect(body.messages[1]!.content.map((b) => b.type)).toEqual(['tool_use', 'tool_use'])
			// The tool turn lost its thinking, which Anthropic requires with thinking on: thinking is off for this request.
			expect(body.thinking).toEqual({ type: 'disabled' })

			// The next question goes to Claude with thinking on again, DeepSeek's reasoning still left out.
			const next = await messages(acct.anthropic, { model: MODEL.anthropic, max_tokens: 4096, thinking: THINKING, tools: TOOLS, messages: [ask, one.replay, results, claude.replay, { role: 'user', content: 'Thanks' }] }, stream)
			expect(next.text).toBe('Hello! You said: Thanks')
			const again = lastRequest(m.mocks.anthropic).body as { thinking?: { type: string }; messages: Array<{ content: Array<{ type: string; signature?: string }> }> }
			expect(again.thinking?.type).toBe('enabled')
			expect(again.messages.flatMap((msg) => (Array.isArray(msg.content) ? msg.content : [])).filter((b) => b.type === 'thinking' && b.signature === UNSIGNED_THINKING_TAG)).toEqual([])
		})
})
