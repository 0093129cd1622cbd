/**
 * Tools settings with a Gemini model as an OpenAI client sends them. A `tool_choice` with no tools (`'auto'` is what
 * many clients always send, often with `tools: []`) must not become a `toolConfig`, which Gemini refuses without
 * function declarations ("Function calling config is set without function_declarations").
 *
 * `parallel_tool_calls: false` with a Gemini model, as an `openai` SDK user sends it
 * (https://platform.openai.com/docs/api-reference/chat/create#chat-create-parallel_tool_calls: "Whether to enable
 * parallel function calling"; off, the model calls at most one tool per turn). Claude takes it as
 * `disable_parallel_tool_use`; Gemini's API has no such switch (`toolConfig.functionCallingConfig` is `mode` and
 * `allowedFunctionNames`, https://ai.google.dev/api/caching#FunctionCallingConfig) and may answer several
 * functionCall parts at once, as the mock does for `#tools`. The client that turned parallel calls off gets the first
 * call only, streamed or not, on chat completions and on the Responses API, and the next turn works with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type OpenAI from 'openai'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'
import { checkChatChunks } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Up = 'anthropic' | 'gemini'
const BOTH: Array<[Up, boolean]> = (['anthropic', 'gemini'] as Up[]).flatMap((u) => [[u, false] as [Up, boolean], [u, true] as [Up, boolean]])
type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk
type Message = OpenAI.Chat.Completions.ChatCompletionMessage

const WEATHER: OpenAI.Chat.Completions.ChatCompletionTool = {
	type: 'function',
	function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}

/** The assistant message of a chat answer, streamed (chunks checked, then accumulated) or not. */
async function answer(client: OpenAI, params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, stream: boolean): Promise<{ message: Message; finish: string | null }> {
	if (!stream) {
		const r = await client.chat.completions.create(params)
		return { message: r.choices[0]!.message, finish: r.choices[0]!.finish_reason }
	}
	const s = await client.chat.completions.create({ ...params, stream: true })
	const chunks: Chunk[] = []
	for await (const c of s) chunks.push(c)
	checkChatChunks(chunks, params.model, false)
	const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = []
	for (const c of chunks)
		for (const tc of c.choices[0]?.delta.tool_calls ?? []) {
			if (tc.id) calls[tc.index] = { id: tc.id, type: 'function', function: { name: tc.function?.name ?? '', arguments: '' } }
			calls[tc.index]!.function.arguments += tc.function?.arguments ?? ''
		}
	const finish = chunks.map((c) => c.choices[0]?.finish_reason).find((f) => f) ?? null
	return { message: { role: 'assistant', content: null, refusal: null, tool_calls: calls }, finish }
}

describe('parallel_tool_calls: false on chat completions', () => {
	for (const [up, stream] of BOTH)
		it(`should give one tool call, then answer from its result next turn (${label(up, stream)})`, async () => {
			const acct = await m.account()
			const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in two cities #tools' }]
			const first = await answer(acct.openai, { model: MODEL[up], messages, tools: [WEATHER], parallel_tool_calls: false }, stream)
			expect(first.finish).toBe('tool_calls')
			const calls = first.message.tool_calls ?? []
			expect(calls.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : c.type))).toEqual([['weather', { city: 'Paris' }]])
			const call = calls[0]!
			messages.push({ role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: call.id, content: 'sunny' })
			const second = await answer(acct.openai, { model: MODEL[up], messages, tools: [WEATHER], parallel_tool_calls: false }, stream)
			expect([second.finish, second.message.content ?? '']).toEqual(['stop', stream ? '' : 'Tool results: sunny'])
		})

	for (const stream of [false, true])
		it(`should still give a Gemini model's parallel calls when they are not turned off (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const r = await answer(acct.openai, { model: MODEL.gemini, messages: [{ role: 'user', content: 'weather in two cities #tools' }], tools: [WEATHER] }, stream)
			expect(r.message.tool_calls?.length).toBe(2)
		})

	it("should stream tool-call deltas of index 0 only, asking Gemini for nothing it lacks", async () => {
		const acct = await m.account()
		const s = await acct.openai.chat.completions.create({ model: MODEL.gemini, messages: [{ role: 'user', content: 'weather #tools' }], tools: [WEATHER], parallel_tool_calls: false, stream: true })
		const chunks: Chunk[] = []
		for await (const c of s) chunks.push(c)
		const indexes = chunks.flatMap((c) => (c.choices[0]?.delta.tool_calls ?? []).map((t) => t.index))
		expect(new Set(indexes)).toEqual(new Set([0]))
		expect(lastRequest(m.mocks.gemini).body.toolConfig).toBeUndefined()
	})
})

describe('parallel_tool_calls: false on the Responses API', () => {
	const weather = { type: 'function' as const, name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }
	for (const stream of [false, true])
		it(`should give one function_call item (gemini upstream, ${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.gemini, input: 'weather in two cities #tools', tools: [weather], parallel_tool_calls: false }
			const r = stream ? await acct.openai.responses.stream(params).finalResponse() : await acct.openai.responses.create(params)
			const calls = r.output.flatMap((o) => (o.type === 'function_call' ? [[o.name, JSON.parse(o.arguments)]] : []))
			expect(calls).toEqual([['weather', { city: 'Paris' }]])
			expect(r.parallel_tool_calls).toBe(false)
		})
})

describe('tool_choice without tools', () => {
	for (const [up, stream] of BOTH)
		for (const [label_, extra] of [
			["'auto' and tools: []", { tools: [], tool_choice: 'auto' }],
			["'none' and no tools", { tool_choice: 'none' }],
		] as const)
			it(`should answer ${label_} as a plain request (${label(up, stream)})`, async () => {
				const acct = await m.account()
				const r = await answer(acct.openai, { model: MODEL[up], messages: [{ role: 'user', content: 'plain question' }], ...extra } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, stream)
				expect(r.finish).toBe('stop')
				if (!stream) expect(r.message.content).toBe('Hello! You said: plain question')
				if (up === 'gemini') expect(lastRequest(m.mocks.gemini).body.toolConfig).toBeUndefined()
			})
})
