/**
 * Tool names on `/v1/responses` converted to Claude and Gemini, through the `openai` SDK's `responses.create` and the
 * Vercel AI SDK's `.responses()` provider. Each vendor refuses some names another takes: Anthropic custom tools
 * `^[a-zA-Z0-9_-]{1,64}$` (https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use), Gemini
 * function names "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots,
 * colons and dashes, with a maximum length of 64" (https://ai.google.dev/api/caching#FunctionDeclaration). They go to
 * the vendor under names it takes, in the tools, the tool choice and the history, and the answer's calls come back
 * under the client's names. A Gemini name starting with a digit (`7zip_extract`) was sent as written: Gemini's 400.
 * The input token count (`/v1/responses/input_tokens`) sends the same request to the vendor's counter, which refuses
 * the same names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createOpenAI } from '@ai-sdk/openai'
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai'
import OpenAI from 'openai'
import { type Native, SETUP_MS, startNative } from './setup'

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

let n: Native
beforeAll(async () => {
	n = await startNative()
}, SETUP_MS)
afterAll(() => n.close())

/** 80 characters (a Claude Code MCP tool): Anthropic's API takes up to 128, Gemini and OpenAI 64. */
const LONG = 'mcp__claude_ai_company_knowledge_base_server__search_documents_by_keyword_phrase'
/** Per vendor: two names its API refuses, which a Responses client may use (the gateway does not refuse them). */
const CASES = {
	'claude-sonnet-5': { up: 'anthropic', names: ['weather.get', LONG] },
	'gemini-2.5-flash': { up: 'gemini', names: ['7zip_extract', LONG] },
} as const
const TAKES = { anthropic: /^[a-zA-Z0-9_-]{1,64}$/, gemini: /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/ }

const fn = (name: string, key: string): OpenAI.Responses.FunctionTool => ({ type: 'function', name, strict: false, parameters: { type: 'object', properties: { [key]: { type: 'string' } } } })

type Up = (typeof CASES)[keyof typeof CASES]['up']
/** The function names in the vendor's last request: declared, forced and called in the history. */
function sentNames(up: Up): { declared: string[]; used: string[]; forced?: string } {
	const b = n[up].requests.at(-1)!.body as Record<string, any>
	if (up === 'anthropic') {
		const used = (b.messages as any[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []).filter((p: any) => p.type === 'tool_use').map((p: any) => p.name))
		return { declared: b.tools.map((t: any) => t.name), used, forced: b.tool_choice?.name }
	}
	const parts = (b.contents as any[]).flatMap((c) => c.parts)
	const used = parts.flatMap((p) => [p.functionCall?.name, p.functionResponse?.name].filter(Boolean))
	return { declared: b.tools[0].functionDeclarations.map((d: any) => d.name), used, forced: b.toolConfig?.functionCallingConfig?.allowedFunctionNames?.[0] }
}

describe('tool names a vendor refuses, on /v1/responses converted', () => {
	for (const [model, { up, names }] of Object.entries(CASES))
		for (const stream of [false, true])
			it(`should send ${up} names it takes and answer with the client's (openai responses.create, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const a = await n.app.account(10)
				const openai = new OpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1`, maxRetries: 0 })
				const tools = [fn(names[0], 'city'), fn(names[1], 'query')]
				const ask = async (input: OpenAI.Responses.ResponseInput, toolChoice?: OpenAI.Responses.ToolChoiceFunction): Promise<OpenAI.Responses.Response> => {
					const params = { model, input, tools, store: false, ...(toolChoice && { tool_choice: toolChoice }) }
					return stream ? await openai.responses.stream(params).finalResponse() : await openai.responses.create(params)
				}
				const question: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'weather in two cities #tools' }]
				const first = await ask(question)
				const calls = first.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')
				expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
					[names[0], { city: 'Paris' }],
					[names[1], { query: 'Tokyo' }],
				])
				const sent = sentNames(up)
				expect(sent.declared.every((x) => TAKES[up].test(x))).toBe(true)
				expect(new Set(sent.declared).size).toBe(2)

				// Next turn: the calls and their outputs in the history, and a tool forced by the client's name.
				const history: OpenAI.Responses.ResponseInput = [
					...question,
					...calls.map((c) => ({ type: 'function_call' as const, call_id: c.call_id, name: c.name, arguments: c.arguments })),
					...calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `found ${Object.values(JSON.parse(c.arguments))[0]}` })),
				]
				const second = await ask(history, { type: 'function', name: names[1] })
				// The mocks answer tool results with text (test/mocks/README.md), a forced tool notwithstanding.
				expect(second.output_text).toBe('Tool results: found Paris; found Tokyo')
				const again = sentNames(up)
				expect(again.declared).toEqual(sent.declared)
				expect(again.used.every((x) => sent.declared.includes(x))).toBe(true)
				expect(again.used.length).toBeGreaterThanOrEqual(2)
				expect(again.forced).toBe(sent.declared[1])
			})

	for (const [model, { names }] of Object.entries(CASES))
		for (const stream of [false, true])
			it(`should run a tool loop of the Vercel AI SDK .responses() with such names (${model}, ${stream ? 'streamText' : 'generateText'})`, async () => {
				const a = await n.app.account(10)
				const provider = createOpenAI({ apiKey: a.key, baseURL: `${n.app.url}/v1` })
				const run = (key: string) => async (x: Record<string, string>) => `sunny in ${x[key]}`
				const tools = {
					[names[0]]: tool({ inputSchema: jsonSchema<Record<string, string>>({ type: 'object', properties: { city: { type: 'string' } } }), execute: run('city') }),
					[names[1]]: tool({ inputSchema: jsonSchema<Record<string, string>>({ type: 'object', properties: { query: { type: 'string' } } }), execute: run('query') }),
				}
				const params = { model: provider.responses(model), prompt: 'weather in two cities #tools', tools, stopWhen: stepCountIs(3) }
				const r = stream ? streamText(params) : await generateText(params)
				expect(await r.text).toBe('Tool results: sunny in Paris; sunny in Tokyo')
				const steps = await r.steps
				expect(steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([[names[0], names[1]], []])
			})

	for (const model of Object.keys(CASES))
		it(`should count the input tokens of such a request (${model}, /v1/responses/input_tokens)`, async () => {
			const { names } = CASES[model as keyof typeof CASES]
			const a = await n.app.account(10)
			const res = await fetch(`${n.app.url}/v1/responses/input_tokens`, {
				method: 'POST',
				headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
				body: JSON.stringify({ model, input: 'weather in two cities', tools: [fn(names[0], 'city'), fn(names[1], 'query')] }),
			})
			expect(res.status).toBe(200)
			const body = (await res.json()) as { object: string; input_tokens: number }
			expect(body.object).toBe('response.input_tokens')
			expect(body.input_tokens).toBeGreaterThan(0)
		})
})
