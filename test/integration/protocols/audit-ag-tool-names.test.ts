/**
 * Function names Gemini accepts and other vendors refuse: Gemini allows dots and colons ("a-z, A-Z, 0-9, or contain
 * underscores, colons, dots, and dashes, with a maximum length of 64"; https://ai.google.dev/api/caching#FunctionDeclaration),
 * OpenAI and Anthropic only `^[a-zA-Z0-9_-]{1,64}$`, answering 400 otherwise. A `@google/genai` app declaring
 * `weather.get` (or an MCP-style `docs:search`) for a GPT or Claude model had its names sent as written; they now go
 * upstream in a portable form, consistently in the tools, the tool choice and the history, and come back to the
 * client as it wrote them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Content, FunctionCallingConfigMode, GoogleGenAI, type Tool, Type } from '@google/genai'
import { type Account, lastRequest, type Matrix, MODEL, PAIRS, SETUP_MS, startMatrix, type Upstream } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

const genai = (acct: Account) => new GoogleGenAI({ apiKey: acct.key, httpOptions: { baseUrl: m.app.url, apiVersion: 'v1beta' } })
const PORTABLE = /^[a-zA-Z0-9_-]{1,64}$/
const TOOLS: Tool[] = [
	{
		functionDeclarations: [
			{ name: 'weather.get', description: 'the weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } },
			{ name: 'docs:search', description: 'search the docs', parameters: { type: Type.OBJECT, properties: { query: { type: Type.STRING } } } },
		],
	},
]

/** Every tool name the vendor received: declared, forced and in the history. */
function upstreamNames(up: Upstream, b: Record<string, any>): { declared: string[]; used: string[]; forced?: string } {
	if (up === 'openai') {
		const used = (b.messages as any[]).flatMap((msg) => (msg.tool_calls ?? []).map((c: any) => c.function.name))
		return { declared: b.tools.map((t: any) => t.function.name), used, forced: b.tool_choice?.function?.name }
	}
	const used = (b.messages as any[]).flatMap((msg) => (Array.isArray(msg.content) ? msg.content : []).filter((p: any) => p.type === 'tool_use').map((p: any) => p.name))
	return { declared: b.tools.map((t: any) => t.name), used, forced: b.tool_choice?.name }
}

async function call(ai: GoogleGenAI, model: string, contents: Content[] | string, stream: boolean, force?: string) {
	const config = { tools: TOOLS, ...(force && { toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: [force] } } }) }
	const params = { model, contents, config }
	const chunks = stream ? [] : [await ai.models.generateContent(params)]
	if (stream) for await (const c of await ai.models.generateContentStream(params)) chunks.push(c)
	const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])
	return { parts, text: parts.map((p) => p.text ?? '').join(''), calls: parts.flatMap((p) => (p.functionCall ? [p.functionCall] : [])) }
}

describe('Gemini function names another vendor refuses', () => {
	for (const [up, stream] of PAIRS) {
		const mode = stream ? 'generateContentStream' : 'generateContent'
		it(`should send portable names and answer with the client's (${up} upstream, ${mode})`, async () => {
			const acct = await m.account()
			const ai = genai(acct)
			const first = await call(ai, MODEL[up], 'weather in two cities #tools', stream)
			expect(first.calls.map((c) => c.name)).toEqual(['weather.get', 'docs:search'])
			expect(first.calls.map((c) => c.args)).toEqual([{ city: 'Paris' }, { query: 'Tokyo' }])
			// Gemini takes the names as written (checked on the next turn).
			const sent = up === 'gemini' ? { declared: [] as string[] } : upstreamNames(up, lastRequest(m.mocks[up]).body)
			expect(sent.declared.every((n) => PORTABLE.test(n))).toBe(true)
			if (up !== 'gemini') expect(new Set(sent.declared).size).toBe(2)

			// The next turn: the calls and their results in the history, under the names the client knows.
			const history: Content[] = [
				{ role: 'user', parts: [{ text: 'weather in two cities #tools' }] },
				{ role: 'model', parts: first.parts },
				{ role: 'user', parts: first.calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { output: `found ${Object.values(c.args ?? {})[0]}` } } })) },
			]
			const second = await call(ai, MODEL[up], history, stream)
			expect(second.text).toBe('Tool results: found Paris; found Tokyo')
			const body = lastRequest(m.mocks[up]).body
			if (up === 'gemini') {
				expect(body.tools[0].functionDeclarations.map((d: any) => d.name)).toEqual(['weather.get', 'docs:search'])
				return
			}
			const again = upstreamNames(up, body)
			expect(again.declared).toEqual(sent.declared)
			expect(again.used).toEqual(sent.declared)
		})

		if (up !== 'gemini')
			it(`should force a tool by its portable name and answer with the client's (${up} upstream, ${mode})`, async () => {
				const acct = await m.account()
				const r = await call(genai(acct), MODEL[up], 'find the install guide', stream, 'docs:search')
				expect(r.calls.map((c) => c.name)).toEqual(['docs:search'])
				const sent = upstreamNames(up, lastRequest(m.mocks[up]).body)
				// The one allowed function alone is declared (the others are not the model's to call).
				expect(sent.declared).toEqual([sent.forced!])
				expect(sent.forced!).toMatch(PORTABLE)
			})
	}
})

/**
 * Anthropic takes tool names up to 128 characters, OpenAI and Gemini up to 64: Claude Code names MCP tools
 * `mcp__<server>__<tool>`, which can run past 64, and such a tool sent to a GPT or Gemini model was refused.
 */
describe('Anthropic tool names past 64 characters', () => {
	const LONG = `mcp__${'enterprise_knowledge_base_server'}__${'search_documents_by_semantic_similarity'}`
	const OTHER = `${LONG}_v2`
	for (const [up, stream] of PAIRS) {
		it(`should reach the vendor under a name it takes and come back as sent (${up} upstream, ${stream ? 'stream' : 'non-stream'})`, async () => {
			expect(LONG.length).toBeGreaterThan(64)
			const acct = await m.account()
			const tools = [LONG, OTHER].map((name) => ({ name, input_schema: { type: 'object' as const, properties: { query: { type: 'string' } } } }))
			const params = { model: MODEL[up], max_tokens: 200, tools, messages: [{ role: 'user' as const, content: 'look it up #tools' }] }
			const msg = stream ? await acct.anthropic.messages.stream(params).finalMessage() : await acct.anthropic.messages.create(params)
			const uses = msg.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []))
			expect(uses.map((u) => u.name)).toEqual([LONG, OTHER])
			expect(uses.map((u) => u.input)).toEqual([{ query: 'Paris' }, { query: 'Tokyo' }])
			const body = lastRequest(m.mocks[up]).body
			const sent: string[] = up === 'openai' ? body.tools.map((t: any) => t.function.name) : up === 'gemini' ? body.tools[0].functionDeclarations.map((d: any) => d.name) : body.tools.map((t: any) => t.name)
			if (up === 'anthropic') expect(sent).toEqual([LONG, OTHER])
			else {
				expect(sent.every((n) => n.length <= 64)).toBe(true)
				expect(new Set(sent).size).toBe(2)
			}
			// The next turn, with the calls and their results, answers from the results.
			const next = await acct.anthropic.messages.create({
				...params,
				messages: [
					...params.messages,
					{ role: 'assistant', content: msg.content.filter((b) => b.type === 'tool_use') },
					{ role: 'user', content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: `found ${(u.input as { query: string }).query}` })) },
				],
			})
			expect(next.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Tool results: found Paris; found Tokyo'])
		})
	}
})
