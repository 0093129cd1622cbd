/**
 * opencode 1.18 pointed at the gateway as an OpenAI-compatible provider (`"npm": "@ai-sdk/openai-compatible"` with
 * `options.baseURL` in opencode.json): the request shape it sends, as seen on the wire, through the official `openai`
 * SDK. That provider knows no model, so it sends `max_tokens` (32000, opencode's output cap) to every one, reasoning
 * models included, with `reasoning_effort` from the `--variant`, and `cache_control` on the system message and the
 * last turns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { countWords } from '../../mocks'
import { expectCharges, lastRequest, type Matrix, SETUP_MS, startMatrix, THINKER, THINKER_UPSTREAM } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const SYSTEM = 'You are opencode, an agent - please keep going until the user’s query is completely resolved.'
const ASK = 'What is two plus two?'
const READ = {
	type: 'function' as const,
	function: {
		name: 'read',
		description: 'Read a file or directory from the local filesystem.',
		parameters: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'], additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' },
	},
}

/** opencode's main-agent turn, as @ai-sdk/openai-compatible writes it. */
const body = (model: string) => ({
	model,
	max_tokens: 32000,
	reasoning_effort: 'high',
	messages: [
		{ role: 'system', content: SYSTEM, cache_control: { type: 'ephemeral' } },
		{ role: 'user', content: ASK, cache_control: { type: 'ephemeral' } },
	],
	tools: [READ],
	tool_choice: 'auto',
	stream: true,
	stream_options: { include_usage: true },
})

describe('opencode through /v1/chat/completions (@ai-sdk/openai-compatible)', () => {
	it("should send an OpenAI reasoning model its cap as max_completion_tokens (it refuses opencode's max_tokens)", async () => {
		const acct = await m.account()
		const stream = await acct.openai.chat.completions.create(body(THINKER.openai) as never)
		let text = ''
		let reasoning = ''
		for await (const c of stream as unknown as AsyncIterable<any>) {
			text += c.choices[0]?.delta?.content ?? ''
			reasoning += c.choices[0]?.delta?.reasoning_content ?? ''
		}
		expect(text).toBe(`Hello! You said: ${ASK}`)
		expect(reasoning).toBe(`Let me think about ${ASK}.`)
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.model, sent.max_completion_tokens, 'max_tokens' in sent, sent.reasoning_effort]).toEqual([THINKER_UPSTREAM, 32000, false, 'high'])
		const think = countWords(reasoning)
		await expectCharges(m, acct, [{ model: THINKER.openai, input: countWords(SYSTEM) + countWords(ASK), output: think + countWords(text), reasoning: think, stream: true }])
	})
})
