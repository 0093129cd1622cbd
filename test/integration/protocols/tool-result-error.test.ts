/**
 * A failed tool call told to another vendor. Anthropic marks it `is_error: true` on the `tool_result`; Gemini's
 * `functionResponse.response` takes "output" for the function's output and "error" for error details
 * (https://googleapis.github.io/js-genai/classes/types.FunctionResponse.html); OpenAI chat's `role: "tool"` message
 * has no such field (content and `tool_call_id` only). The flag was dropped toward OpenAI, so the model read a failed
 * call as a result like any other: there it now leads the content as a line of its own, the tool's text kept after it
 * as it was (what other gateways settled on: sgl-project/sglang#32610, brightwave-inc/tidebreak#1308).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Content, GoogleGenAI } from '@google/genai'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const TOOL = { name: 'read_file', description: 'Read a file', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } }
const FAILED = 'ENOENT: no such file or directory, open "a.txt"'

/** An Anthropic conversation whose last turn answers two calls, the first of which failed. */
const anthropicHistory = [
	{ role: 'user' as const, content: 'read two files' },
	{
		role: 'assistant' as const,
		content: [
			{ type: 'tool_use' as const, id: 'toolu_01A', name: 'read_file', input: { path: 'a.txt' } },
			{ type: 'tool_use' as const, id: 'toolu_01B', name: 'read_file', input: { path: 'b.txt' } },
		],
	},
	{
		role: 'user' as const,
		content: [
			{ type: 'tool_result' as const, tool_use_id: 'toolu_01A', content: FAILED, is_error: true },
			{ type: 'tool_result' as const, tool_use_id: 'toolu_01B', content: 'hello' },
		],
	},
]

describe('a tool result marked as an error, from an Anthropic client', () => {
	for (const stream of [false, true]) {
		it(`should reach Gemini as functionResponse.response.error (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.gemini, max_tokens: 256, tools: [TOOL], messages: anthropicHistory }
			if (stream) await acct.anthropic.messages.stream(params).finalMessage()
			else await acct.anthropic.messages.create(params)
			const parts = (lastRequest(m.mocks.gemini).body.contents as Content[]).flatMap((c) => c.parts ?? [])
			expect(parts.flatMap((p) => (p.functionResponse ? [p.functionResponse.response] : []))).toEqual([{ error: FAILED }, { result: 'hello' }])
		})

		it(`should reach OpenAI with the failure stated ahead of the tool's text, kept whole (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const params = { model: MODEL.openai, max_tokens: 256, tools: [TOOL], messages: anthropicHistory }
			if (stream) await acct.anthropic.messages.stream(params).finalMessage()
			else await acct.anthropic.messages.create(params)
			const tools = (lastRequest(m.mocks.openai).body.messages as Array<{ role: string; content: string }>).filter((x) => x.role === 'tool')
			expect(tools.map((t) => t.content)).toEqual([`Error: the tool call failed.\n${FAILED}`, 'hello'])
		})
	}
})

describe('a Gemini functionResponse with an error key', () => {
	it('should reach Claude as a tool_result with is_error: true, its text intact', async () => {
		const acct = await m.account()
		const ai = new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
		const contents: Content[] = [
			{ role: 'user', parts: [{ text: 'read two files' }] },
			{ role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'a.txt' } } }, { functionCall: { name: 'read_file', args: { path: 'b.txt' } } }] },
			{ role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { error: FAILED } } }, { functionResponse: { name: 'read_file', response: { output: 'hello' } } }] },
		]
		const tools = [{ functionDeclarations: [{ name: 'read_file', parametersJsonSchema: TOOL.input_schema }] }]
		await ai.models.generateContent({ model: MODEL.anthropic, contents, config: { tools } })
		const messages = lastRequest(m.mocks.anthropic).body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>
		const results = messages.at(-1)!.content.filter((b) => b.type === 'tool_result')
		expect(results.map((r) => [r.is_error ?? false, JSON.stringify(r.content)])).toEqual([
			[true, JSON.stringify([{ type: 'text', text: FAILED }])],
			[false, JSON.stringify([{ type: 'text', text: 'hello' }])],
		])
	})
})
