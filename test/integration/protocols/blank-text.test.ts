/**
 * Whitespace in an OpenAI chat conversation sent to Claude. OpenAI takes any text; Anthropic refuses a message whose
 * text is only whitespace ("messages: text content blocks must contain non-whitespace text") and a final assistant
 * message (a prefill) ending in whitespace ("messages: final assistant content cannot end with trailing whitespace").
 * Clients send both: an assistant turn of `"\n\n"` beside its tool calls (the text a model wrote before calling),
 * a tool returning `"\n"`, a user pressing enter on an empty line, a prefill such as `"The answer is "`
 * (anthropics/claude-code#23369, home-assistant/core#175637, LibreChat-AI/agents#124, aaif-goose/goose#5967).
 * Through the gateway such a conversation must get its answer from Claude as from OpenAI and Gemini.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { continuation } from '../../mocks/shared/scenario'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'
import { checkChatChunks } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming
const CASES: Array<[Upstream, boolean]> = (['openai', 'anthropic', 'gemini'] as Upstream[]).flatMap((u) => [[u, false] as [Upstream, boolean], [u, true] as [Upstream, boolean]])

const WEATHER: OpenAI.Chat.Completions.ChatCompletionTool = {
	type: 'function',
	function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}

/** The answer's text and finish reason, streamed (chunks checked) or not. */
async function ask(client: OpenAI, params: Params, stream: boolean): Promise<[string, string | null]> {
	if (!stream) {
		const r = await client.chat.completions.create(params)
		return [r.choices[0]!.message.content ?? '', r.choices[0]!.finish_reason]
	}
	const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
	for await (const c of await client.chat.completions.create({ ...params, stream: true })) chunks.push(c)
	checkChatChunks(chunks, params.model, false)
	return [chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), chunks.map((c) => c.choices[0]?.finish_reason).find((f) => f) ?? null]
}

describe('whitespace-only text in the conversation', () => {
	for (const [up, stream] of CASES)
		it(`should answer a tool turn whose assistant text and tool result are only whitespace (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
				{ role: 'user', content: 'weather in Paris' },
				{ role: 'assistant', content: '\n\n', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
				{ role: 'tool', tool_call_id: 'call_1', content: '\n' },
				{ role: 'assistant', content: [{ type: 'text', text: ' ' }], tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] },
				{ role: 'tool', tool_call_id: 'call_2', content: 'sunny' },
			]
			expect(await ask(acct.openai, { model: MODEL[up], messages, tools: [WEATHER] }, stream)).toEqual(['Tool results: sunny', 'stop'])
		})

	for (const [up, stream] of CASES)
		it(`should answer after a user message of only whitespace (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
				{ role: 'user', content: 'hi' },
				{ role: 'assistant', content: 'Hi! What can I do?' },
				{ role: 'user', content: ' \n' },
				{ role: 'assistant', content: 'Did you mean to say something?' },
				{ role: 'user', content: 'hello there' },
			]
			expect(await ask(acct.openai, { model: MODEL[up], messages }, stream)).toEqual(['Hello! You said: hello there', 'stop'])
		})
})

describe('a prefill ending in whitespace', () => {
	for (const [up, stream] of CASES)
		it(`should continue the prefill, sent without its trailing whitespace to Claude (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
				{ role: 'user', content: 'say it' },
				{ role: 'assistant', content: 'The answer is \n' },
			]
			// OpenAI answers afresh after it; Claude continues it as sent, and Gemini a trailing model turn as written.
			const answer = { openai: 'Hello! You said: say it', anthropic: continuation('The answer is'), gemini: continuation('The answer is \n') }[up]
			expect(await ask(acct.openai, { model: MODEL[up], messages }, stream)).toEqual([answer, 'stop'])
			if (up === 'anthropic') expect(lastRequest(m.mocks.anthropic).body.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'The answer is' }] })
		})
})
