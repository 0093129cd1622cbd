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
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { continuation } from '../../mocks/shared/scenario'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'
import { checkChatChunks } from './wire-checks'

/** Served by `blankFirst`, an OpenAI-compatible vendor whose model writes `"\n\n"` before its tool call. */
const BLANK_FIRST = 'blank-first-m'

let m: Matrix
let blankFirst: ReturnType<typeof Bun.serve>
beforeAll(async () => {
	blankFirst = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: blankBeforeCall })
	m = await startMatrix({
		channels: () => [{ name: 'ch-blank-first', type: 'openai', base_url: `http://127.0.0.1:${blankFirst.port}/v1`, api_key: 'up-blank', models: [BLANK_FIRST] }],
		models: [{ name: BLANK_FIRST, input_per_mtok: 1, output_per_mtok: 1 }],
	})
}, SETUP_MS)
afterAll(async () => {
	await m.close()
	await blankFirst.stop(true)
})

/**
 * Chat completions as Qwen- and DeepSeek-style models on OpenAI-compatible servers answer a tool request: the content
 * `"\n\n"` and a call of `get_weather`, whole or streamed (content first, then the call, then the usage chunk).
 */
async function blankBeforeCall(req: Request): Promise<Response> {
	const body = (await req.json()) as { model: string; stream?: boolean }
	const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
	const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }
	const base = { id: 'chatcmpl-blank', created: 1, model: body.model }
	if (!body.stream) return Response.json({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: '\n\n', tool_calls: [call] }, finish_reason: 'tool_calls' }], usage })
	const chunk = (choices: unknown[], extra: object = {}) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`
	const frames = [
		chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
		chunk([{ index: 0, delta: { content: '\n\n' }, finish_reason: null }]),
		chunk([{ index: 0, delta: { tool_calls: [{ index: 0, ...call }] }, finish_reason: null }]),
		chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
		chunk([], { usage }),
		'data: [DONE]\n\n',
	]
	return new Response(frames.join(''), { headers: { 'content-type': 'text/event-stream' } })
}

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

describe("an Anthropic client's conversation sent on to Claude", () => {
	const WEATHER: Anthropic.Tool = { name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }
	const THINKING = { type: 'enabled', budget_tokens: 1024 } as const

	for (const stream of [false, true])
		it(`should take the next turn after an OpenAI-compatible model's "\\n\\n" before its tool call, leaving the blank text out${stream ? ' (streamed, thinking on)' : ''}`, async () => {
			const acct = await m.account()
			const ask: Anthropic.MessageParam = { role: 'user', content: 'weather in Paris?' }
			const first: Anthropic.MessageCreateParamsNonStreaming = { model: BLANK_FIRST, max_tokens: 100, tools: [WEATHER], messages: [ask] }
			const one = stream ? await acct.anthropic.messages.stream(first).finalMessage() : await acct.anthropic.messages.create(first)
			// The answer is the model's, whitespace and all (a stream cannot know the text will come to nothing).
			expect(one.content).toEqual([expect.objectContaining({ type: 'text', text: '\n\n' }), expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } })])
			const use = one.content[1] as Anthropic.ToolUseBlock
			const history: Anthropic.MessageParam[] = [ask, { role: 'assistant', content: one.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }]

			// Anthropic refuses whitespace-only text ("text content blocks must contain non-whitespace text"), in counts too.
			const thinking = stream ? { thinking: THINKING } : {}
			const count = await acct.anthropic.messages.countTokens({ model: MODEL.anthropic, tools: [WEATHER], messages: history, ...thinking })
			expect(count.input_tokens).toBeGreaterThan(0)
			const next: Anthropic.MessageCreateParamsNonStreaming = { model: MODEL.anthropic, max_tokens: 2048, tools: [WEATHER], messages: history, ...thinking }
			const two = stream ? await acct.anthropic.messages.stream(next).finalMessage() : await acct.anthropic.messages.create(next)
			expect(two.content.filter((b) => b.type === 'text').map((b) => (b as Anthropic.TextBlock).text)).toEqual(['Tool results: sunny'])
			const sent = lastRequest(m.mocks.anthropic).body
			expect(sent.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: use.id, name: 'get_weather', input: { city: 'Paris' } }] })
			// With thinking on, the tool turn being continued has no thinking to start with: off for this turn, as converted.
			if (stream) expect(sent.thinking).toEqual({ type: 'disabled' })
		})

	it('should send a conversation with nothing to leave out as the client wrote it, byte for byte', async () => {
		const acct = await m.account()
		const params = { model: MODEL.anthropic, max_tokens: 100, messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: ' hi ' }] }, { role: 'assistant' as const, content: 'Hello!' }, { role: 'user' as const, content: 'x' }] }
		await acct.anthropic.messages.create(params)
		expect(lastRequest(m.mocks.anthropic).text).toBe(JSON.stringify({ ...params, model: 'claude-sonnet-4-6' }))
	})
})
