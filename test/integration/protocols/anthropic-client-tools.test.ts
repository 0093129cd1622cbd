/**
 * Anthropic-defined tools the client runs (bash, the text editors, memory, computer use: a versioned `type` and a
 * fixed `name`, no `input_schema`) through `/v1/messages` with the official `@anthropic-ai/sdk`, on a GPT model (chat
 * and Responses) and a Gemini model: the tool offered as a function of Anthropic's documented input, the vendor's
 * call given back as a `tool_use` of that name and input (streamed and not), the replayed call and its `tool_result`
 * sent as a call and its result, `tool_choice` naming the tool forcing it, the SDK's memory tool run by its own tool
 * runner, count_tokens counting the tool, a server tool beside them still refused (400), and Claude (the fast path)
 * getting the tools as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory'
import { messages } from './clients'
import { lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, UPSTREAM_MODEL } from './harness'

/** A GPT model on a channel with the Responses API, where a converted request with a web search goes (README, web search). */
const GPT_RESPONSES = 'gpt-resp'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [{ name: GPT_RESPONSES, input_per_mtok: 0.15, output_per_mtok: 0.6 }],
		channels: (mocks) => [
			{ name: 'openai-responses', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [GPT_RESPONSES], model_map: { [GPT_RESPONSES]: UPSTREAM_MODEL.openai }, settings: { responses_api: true } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

type Target = 'chat' | 'responses' | 'gemini'
/** A GPT model over chat completions and a Gemini model; the Responses API is taken with a web search (its own test). */
const TARGETS: Target[] = ['chat', 'gemini']
const MODEL_OF: Record<Target, string> = { chat: MODEL.openai, responses: GPT_RESPONSES, gemini: MODEL.gemini }
const mockOf = (t: Target) => m.mocks[t === 'gemini' ? 'gemini' : 'openai']

const EDITOR = { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' } as const
const BASH = { type: 'bash_20250124', name: 'bash' } as const
const COMPUTER = { type: 'computer_20250124', name: 'computer', display_width_px: 1280, display_height_px: 800 } as const

type Declared = { name: string; description?: string; schema: Record<string, any> }

/** The functions the vendor was offered, as name, description and JSON schema. */
function declared(t: Target): Declared[] {
	const body = lastRequest(mockOf(t)).body
	if (t === 'chat') return body.tools.map((x: any) => ({ name: x.function.name, description: x.function.description, schema: x.function.parameters }))
	if (t === 'responses') return body.tools.map((x: any) => ({ name: x.name, description: x.description, schema: x.parameters }))
	return body.tools.flatMap((x: any) => x.functionDeclarations ?? []).map((f: any) => ({ name: f.name, description: f.description, schema: f.parametersJsonSchema ?? f.parameters }))
}

/** The vendor's record of the conversation's calls and results: [name, arguments, result text]. */
function replayed(t: Target): { call: { name: string; args: unknown }; result: string } {
	const body = lastRequest(mockOf(t)).body
	if (t === 'chat') {
		const call = body.messages.find((x: any) => x.tool_calls)!.tool_calls[0].function
		return { call: { name: call.name, args: JSON.parse(call.arguments) }, result: body.messages.find((x: any) => x.role === 'tool').content }
	}
	if (t === 'responses') {
		const call = body.input.find((x: any) => x.type === 'function_call')
		return { call: { name: call.name, args: JSON.parse(call.arguments) }, result: body.input.find((x: any) => x.type === 'function_call_output').output }
	}
	const parts = body.contents.flatMap((c: any) => c.parts)
	const call = parts.find((p: any) => p.functionCall).functionCall
	const response = parts.find((p: any) => p.functionResponse).functionResponse
	return { call: { name: call.name, args: call.args }, result: JSON.stringify(response.response) }
}

describe('Anthropic client tools on other vendors', () => {
	for (const t of TARGETS)
		for (const stream of [false, true])
			it(`should run the text editor: offered as a function, called, answered (${t}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const ask = '#call str_replace_based_edit_tool {"command":"view","path":"/repo/primes.py"}'
				const tools = [EDITOR] as Anthropic.Messages.ToolUnion[]
				const first = await messages(acct.anthropic, { model: MODEL_OF[t], max_tokens: 200, tools, messages: [{ role: 'user', content: ask }] }, stream)

				const fn = declared(t).find((d) => d.name === EDITOR.name)
				expect(fn).toBeDefined()
				expect(fn!.description).toContain('view')
				expect(fn!.schema.properties.command.enum).toEqual(['view', 'create', 'str_replace', 'insert'])
				expect(Object.keys(fn!.schema.properties)).toEqual(expect.arrayContaining(['path', 'file_text', 'old_str', 'new_str', 'insert_line', 'insert_text', 'view_range']))
				expect(fn!.schema.required).toEqual(['command', 'path'])

				expect(first.stop).toBe('tool_use')
				expect(first.calls).toHaveLength(1)
				expect(first.calls[0]).toMatchObject({ name: EDITOR.name, args: { command: 'view', path: '/repo/primes.py' } })
				expect(first.calls[0]!.id).toBeTruthy()

				const result = { type: 'tool_result' as const, tool_use_id: first.calls[0]!.id, content: '1: def is_prime(n):' }
				const second = await messages(acct.anthropic, { model: MODEL_OF[t], max_tokens: 200, tools, messages: [{ role: 'user', content: ask }, first.replay, { role: 'user', content: [result] }] }, stream)
				expect(second.text).toBe('Tool results: 1: def is_prime(n):')
				expect(second.stop).toBe('end_turn')
				const sent = replayed(t)
				expect(sent.call).toEqual({ name: EDITOR.name, args: { command: 'view', path: '/repo/primes.py' } })
				expect(sent.result).toContain('1: def is_prime(n):')
			})

	for (const stream of [false, true])
		it(`should run the text editor beside a web search over the Responses API (${stream ? 'stream' : 'non-stream'})`, async () => {
			const acct = await m.account()
			const tools = [EDITOR, { type: 'web_search_20250305', name: 'web_search' }] as Anthropic.Messages.ToolUnion[]
			const ask = '#call str_replace_based_edit_tool {"command":"create","path":"/repo/a.md","file_text":"# A"}'
			const first = await messages(acct.anthropic, { model: GPT_RESPONSES, max_tokens: 200, tools, messages: [{ role: 'user', content: ask }] }, stream)
			expect(lastRequest(m.mocks.openai).path).toEndWith('/responses')
			expect(declared('responses').find((d) => d.name === EDITOR.name)?.schema.required).toEqual(['command', 'path'])
			expect(first.calls).toEqual([{ id: expect.any(String), name: EDITOR.name, args: { command: 'create', path: '/repo/a.md', file_text: '# A' } }])
			const result = { type: 'tool_result' as const, tool_use_id: first.calls[0]!.id, content: 'File created' }
			const second = await messages(acct.anthropic, { model: GPT_RESPONSES, max_tokens: 200, tools, messages: [{ role: 'user', content: ask }, first.replay, { role: 'user', content: [result] }] }, stream)
			expect(second.text).toBe('Tool results: File created')
			expect(replayed('responses')).toEqual({ call: { name: EDITOR.name, args: { command: 'create', path: '/repo/a.md', file_text: '# A' } }, result: 'File created' })
		})

	for (const t of TARGETS)
		it(`should force bash when tool_choice names it (${t})`, async () => {
			const acct = await m.account()
			const r = await acct.anthropic.messages.create({ model: MODEL_OF[t], max_tokens: 100, tools: [BASH], tool_choice: { type: 'tool', name: 'bash' }, messages: [{ role: 'user', content: 'list the files' }] })
			const use = r.content.find((b) => b.type === 'tool_use') as Anthropic.Messages.ToolUseBlock
			expect(use).toMatchObject({ type: 'tool_use', name: 'bash', input: { command: 'list the files' } })
			const body = lastRequest(mockOf(t)).body
			if (t === 'chat') expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'bash' } })
			else expect(body.toolConfig.functionCallingConfig).toEqual({ mode: 'ANY', allowedFunctionNames: ['bash'] })
			const fn = declared(t).find((d) => d.name === 'bash')!
			// `command` may be left out only to restart the session (bash tool docs): nothing is required.
			expect(fn.schema.required).toBeUndefined()
			expect(Object.keys(fn.schema.properties)).toEqual(['command', 'restart'])
		})

	for (const t of TARGETS)
		it(`should tell the model the screen size of the computer tool and give its action back (${t})`, async () => {
			const acct = await m.account()
			// Computer use is a beta: the SDK's beta client sends it with its `anthropic-beta` header.
			const r = await acct.anthropic.beta.messages.create({
				model: MODEL_OF[t],
				max_tokens: 100,
				betas: ['computer-use-2025-01-24'],
				tools: [COMPUTER],
				messages: [{ role: 'user', content: '#call computer {"action":"left_click","coordinate":[640,400]}' }],
			})
			expect(r.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'computer', input: { action: 'left_click', coordinate: [640, 400] } })
			const fn = declared(t).find((d) => d.name === 'computer')!
			expect(fn.description).toContain('1280x800')
			expect(fn.schema.properties.action.enum).toContain('triple_click')
			expect(fn.schema.properties.action.enum).not.toContain('zoom')
		})

	for (const t of TARGETS)
		for (const stream of [false, true])
			it(`should run the SDK's memory tool through its tool runner (${t}, ${stream ? 'stream' : 'non-stream'})`, async () => {
				const acct = await m.account()
				const seen: unknown[] = []
				const memory = betaMemoryTool({
					view: (c) => (seen.push(c), 'Directory: /memories\n- notes.md'),
					create: (c) => (seen.push(c), 'created'),
					str_replace: (c) => (seen.push(c), 'replaced'),
					insert: (c) => (seen.push(c), 'inserted'),
					delete: (c) => (seen.push(c), 'deleted'),
					rename: (c) => (seen.push(c), 'renamed'),
				})
				const runner = acct.anthropic.beta.messages.toolRunner({
					model: MODEL_OF[t],
					max_tokens: 200,
					stream,
					tools: [memory],
					messages: [{ role: 'user', content: '#call memory {"command":"view","path":"/memories"}' }],
				})
				const final = await runner.runUntilDone()
				expect(seen).toEqual([{ command: 'view', path: '/memories' }])
				expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Tool results: Directory: /memories\n- notes.md' })])
				const fn = declared(t).find((d) => d.name === 'memory')!
				expect(fn.schema.properties.command.enum).toEqual(['view', 'create', 'str_replace', 'insert', 'delete', 'rename'])
			})

	it('should count the tool for a GPT model (estimated: more tokens with it)', async () => {
		const acct = await m.account()
		const msgs: Anthropic.Messages.MessageParam[] = [{ role: 'user', content: 'fix the bug' }]
		const without = await acct.anthropic.messages.countTokens({ model: MODEL.openai, messages: msgs })
		const withEditor = await acct.anthropic.messages.countTokens({ model: MODEL.openai, messages: msgs, tools: [EDITOR] })
		expect(withEditor.input_tokens).toBeGreaterThan(without.input_tokens + 50)
	})

	it('should have Gemini count the tool for a Gemini model, as the function it is offered', async () => {
		const acct = await m.account()
		const { response } = await acct.anthropic.messages.countTokens({ model: MODEL.gemini, messages: [{ role: 'user', content: 'fix the bug' }], tools: [EDITOR] }).withResponse()
		expect(response.headers.get('x-switchboard-counted-by')).toBe('gemini')
		const req = lastRequest(m.mocks.gemini)
		expect(req.path).toEndWith(':countTokens')
		expect(req.body.generateContentRequest.tools.flatMap((t: any) => t.functionDeclarations).map((f: any) => f.name)).toEqual([EDITOR.name])
	})

	for (const t of TARGETS)
		it(`should still refuse a server tool beside them, naming it, rather than drop it (${t})`, async () => {
			const acct = await m.account()
			const before = mockOf(t).requests.length
			const tools = [EDITOR, { type: 'web_fetch_20250910', name: 'web_fetch' }] as Anthropic.Messages.ToolUnion[]
			const err = await acct.anthropic.messages.create({ model: MODEL_OF[t], max_tokens: 50, tools, messages: [{ role: 'user', content: 'read it' }] }).catch((e: unknown) => e)
			expect(err).toBeInstanceOf(Anthropic.BadRequestError)
			expect((err as Error).message).toContain("tools.1: server tool web_fetch_20250910 is only available on Anthropic's API")
			expect(mockOf(t).requests.length).toBe(before)
		})

	it('should send the tools to Claude as written (fast path)', async () => {
		const acct = await m.account()
		const tools = [EDITOR, BASH, { name: 'weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }, COMPUTER]
		await acct.anthropic.beta.messages.create({ model: MODEL.anthropic, max_tokens: 50, betas: ['computer-use-2025-01-24'], tools, messages: [{ role: 'user', content: 'hi' }] })
		expect(lastRequest(m.mocks.anthropic).body.tools).toEqual(tools)
	})
})
