/**
 * OpenAI's client-run typed tools over `/v1/responses` on a Claude and a Gemini model (converted), through the
 * official `openai` SDK and the Agents SDK's `shellTool` / `applyPatchTool`: `shell` (local environment),
 * `apply_patch` and `local_shell` offered as functions of their calls' documented fields, the vendor's calls given
 * back as `shell_call` / `apply_patch_call` / `local_shell_call` items (streamed with their item events, and a shell
 * call's `shell_call_command.*` events), replayed calls and outputs sent back as calls and results, forced
 * `tool_choice`, and the tools that cannot be converted (a container shell, computer use) refused with a 400 naming
 * them. On an OpenAI model the body goes as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Agent, applyPatchTool, run, setDefaultOpenAIClient, setTracingDisabled, shellTool, OpenAIResponsesModel } from '@openai/agents'
import OpenAI from 'openai'
import type { ResponseStreamEvent } from 'openai/resources/responses/responses'
import { label, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, type Upstream } from './harness'
import { checkResponsesEvents } from './wire-checks'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
	setTracingDisabled(true)
}, SETUP_MS)
afterAll(() => m.close())

type Response = OpenAI.Responses.Response
type Item = Record<string, any>

const TOOLS = [{ type: 'shell', environment: { type: 'local' } }, { type: 'apply_patch' }] as OpenAI.Responses.Tool[]
const CONVERTED: Upstream[] = ['anthropic', 'gemini']

async function client(): Promise<OpenAI> {
	const acct = await m.account()
	return new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0 })
}

/** One turn, streamed through the SDK's stream helper (events checked and returned) or not. */
async function turn(c: OpenAI, params: Item, stream: boolean): Promise<{ r: Response; events: ResponseStreamEvent[] }> {
	if (!stream) return { r: await c.responses.create(params as OpenAI.Responses.ResponseCreateParamsNonStreaming), events: [] }
	const s = c.responses.stream(params as OpenAI.Responses.ResponseCreateParamsStreaming)
	const events: ResponseStreamEvent[] = []
	s.on('event', (e) => events.push(e))
	const r = await s.finalResponse()
	checkResponsesEvents(events, { oneAtATime: true, final: r })
	return { r, events }
}

/** The vendor's declaration of a function by name. */
function declaration(up: Upstream, name: string): Item | undefined {
	const body = lastRequest(m.mocks[up]).body
	if (up === 'anthropic') return body.tools.find((t: Item) => t.name === name)
	return body.tools.flatMap((t: Item) => t.functionDeclarations ?? []).find((f: Item) => f.name === name)
}

/** The calls the vendor was sent back in the history, as name and arguments. */
function replayedCalls(up: Upstream): Array<{ name: string; args: Item }> {
	const body = lastRequest(m.mocks[up]).body
	if (up === 'anthropic') return body.messages.flatMap((msg: Item) => (Array.isArray(msg.content) ? msg.content : []).filter((b: Item) => b.type === 'tool_use').map((b: Item) => ({ name: b.name, args: b.input })))
	return body.contents.flatMap((c: Item) => c.parts.filter((p: Item) => p.functionCall).map((p: Item) => ({ name: p.functionCall.name, args: p.functionCall.args })))
}

const text = (r: Response) => r.output_text

describe('shell and apply_patch on a converted model', () => {
	for (const up of CONVERTED)
		for (const stream of [false, true])
			it(`should give back a shell call as a shell_call item (${label(up, stream)})`, async () => {
				const c = await client()
				const { r, events } = await turn(c, { model: MODEL[up], tools: TOOLS, input: '#call shell {"commands":["ls -la","cat README.md"],"timeout_ms":5000}' }, stream)
				expect(r.output.some((o) => o.type === 'function_call')).toBe(false)
				const calls = r.output.filter((o) => o.type === 'shell_call') as OpenAI.Responses.ResponseFunctionShellToolCall[]
				expect(calls).toHaveLength(1)
				expect(calls[0]).toMatchObject({ type: 'shell_call', status: 'completed', action: { commands: ['ls -la', 'cat README.md'], timeout_ms: 5000, max_output_length: null }, environment: { type: 'local' } })
				expect(typeof calls[0]!.call_id).toBe('string')
				expect(calls[0]).not.toHaveProperty('name')
				expect(calls[0]).not.toHaveProperty('arguments')
				// Offered as a function of the call's documented fields.
				expect(declaration(up, 'shell')?.description).toContain('shell commands')
				if (up === 'anthropic') expect(declaration(up, 'shell')!.input_schema.required).toEqual(['commands'])
				expect(declaration(up, 'apply_patch')).toBeDefined()
				if (!stream) return
				const types = events.map((e) => e.type)
				expect(types.some((t) => t.startsWith('response.function_call_arguments'))).toBe(false)
				const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'shell_call') as Item
				expect(added.item).toMatchObject({ type: 'shell_call', status: 'in_progress', call_id: calls[0]!.call_id, action: { commands: ['ls -la', 'cat README.md'] } })
				const commands = events.filter((e) => e.type.startsWith('response.shell_call_command.')) as Item[]
				expect(commands.map((e) => [e.type, e.command_index])).toEqual([
					['response.shell_call_command.added', 0],
					['response.shell_call_command.delta', 0],
					['response.shell_call_command.done', 0],
					['response.shell_call_command.added', 1],
					['response.shell_call_command.delta', 1],
					['response.shell_call_command.done', 1],
				])
				expect(commands.filter((e) => e.type === 'response.shell_call_command.done').map((e) => e.command)).toEqual(['ls -la', 'cat README.md'])
				expect(commands.every((e) => e.output_index === added.output_index)).toBe(true)
			})

	for (const up of CONVERTED)
		for (const stream of [false, true])
			it(`should give back an apply_patch call as an apply_patch_call item (${label(up, stream)})`, async () => {
				const c = await client()
				const diff = '@@ def greet():\n-print("Hi")\n+print("Hello, wörld")'
				const input = `#call apply_patch ${JSON.stringify({ type: 'update_file', path: 'src/app.py', diff })}`
				const { r, events } = await turn(c, { model: MODEL[up], tools: TOOLS, input }, stream)
				const calls = r.output.filter((o) => o.type === 'apply_patch_call') as OpenAI.Responses.ResponseApplyPatchToolCall[]
				expect(calls).toHaveLength(1)
				expect(calls[0]).toMatchObject({ type: 'apply_patch_call', status: 'completed', operation: { type: 'update_file', path: 'src/app.py', diff } })
				expect(r.output.some((o) => o.type === 'function_call')).toBe(false)
				if (stream) expect(events.some((e) => e.type.startsWith('response.function_call_arguments'))).toBe(false)
			})

	for (const up of CONVERTED)
		it(`should send replayed shell and apply_patch calls and outputs back as calls and results (${up})`, async () => {
			const c = await client()
			const input = [
				{ role: 'user', content: 'fix it' },
				{ type: 'shell_call', call_id: 'call_sh1', status: 'completed', action: { commands: ['cat a.txt'], timeout_ms: 1000, max_output_length: null } },
				{ type: 'shell_call_output', call_id: 'call_sh1', output: [{ stdout: 'hello', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] },
				{ type: 'apply_patch_call', call_id: 'call_ap1', status: 'completed', operation: { type: 'delete_file', path: 'old.txt' } },
				{ type: 'apply_patch_call_output', call_id: 'call_ap1', status: 'failed', output: 'no such file' },
			]
			const r = await c.responses.create({ model: MODEL[up], tools: TOOLS, input } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
			expect(replayedCalls(up)).toEqual([
				{ name: 'shell', args: { commands: ['cat a.txt'], timeout_ms: 1000 } },
				{ name: 'apply_patch', args: { type: 'delete_file', path: 'old.txt' } },
			])
			// Both results went to the vendor (the mock answers with the last).
			expect(JSON.stringify(lastRequest(m.mocks[up]).body)).toContain(JSON.stringify('[{"stdout":"hello","stderr":"","outcome":{"type":"exit","exit_code":0}}]').slice(1, -1))
			expect(text(r)).toBe('Tool results: failed: no such file')
		})

	for (const up of CONVERTED)
		it(`should continue a kept answer's shell call by previous_response_id with its shell_call_output (${up})`, async () => {
			const c = await client()
			const first = await c.responses.create({ model: MODEL[up], tools: TOOLS, input: '#call shell {"commands":["pwd"]}' })
			const call = first.output.find((o) => o.type === 'shell_call') as OpenAI.Responses.ResponseFunctionShellToolCall
			const output = [{ stdout: '/home/dev', stderr: '', outcome: { type: 'exit' as const, exit_code: 0 } }]
			const next = await c.responses.create({ model: MODEL[up], tools: TOOLS, previous_response_id: first.id, input: [{ type: 'shell_call_output', call_id: call.call_id, output }] })
			expect(replayedCalls(up)).toEqual([{ name: 'shell', args: { commands: ['pwd'] } }])
			expect(text(next)).toBe(`Tool results: ${JSON.stringify(output)}`)
		})

	for (const up of CONVERTED)
		it(`should force apply_patch with tool_choice {type: "apply_patch"} (${up})`, async () => {
			const c = await client()
			await c.responses.create({ model: MODEL[up], tools: TOOLS, tool_choice: { type: 'apply_patch' }, input: 'hi' })
			const body = lastRequest(m.mocks[up]).body
			if (up === 'anthropic') expect(body.tool_choice).toMatchObject({ type: 'tool', name: 'apply_patch' })
			else expect(body.toolConfig.functionCallingConfig).toMatchObject({ mode: 'ANY', allowedFunctionNames: ['apply_patch'] })
		})
})

describe('local_shell on a converted model', () => {
	for (const up of CONVERTED)
		for (const stream of [false, true])
			it(`should give back a local_shell_call and take its output back (${label(up, stream)})`, async () => {
				const c = await client()
				const tools = [{ type: 'local_shell' }] as OpenAI.Responses.Tool[]
				const { r } = await turn(c, { model: MODEL[up], tools, input: '#call local_shell {"command":["ls","-l"],"working_directory":"/tmp"}' }, stream)
				const call = r.output.find((o) => o.type === 'local_shell_call') as Item
				expect(call).toMatchObject({ type: 'local_shell_call', status: 'completed', action: { type: 'exec', command: ['ls', '-l'], env: {}, working_directory: '/tmp', timeout_ms: null, user: null } })
				const next = await c.responses.create({
					model: MODEL[up],
					tools,
					input: [{ role: 'user', content: 'list' }, call, { type: 'local_shell_call_output', id: call.call_id, output: '{"output":"a.txt","metadata":{"exit_code":0}}' }],
				} as OpenAI.Responses.ResponseCreateParamsNonStreaming)
				expect(replayedCalls(up)).toEqual([{ name: 'local_shell', args: { command: ['ls', '-l'], working_directory: '/tmp' } }])
				expect(text(next)).toContain('a.txt')
			})

	for (const up of CONVERTED)
		it(`should take a replayed local_shell_call answered by a function_call_output, as Codex CLI replays one (${up})`, async () => {
			const c = await client()
			const call = { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_ls1', status: 'completed', action: { type: 'exec', command: ['ls'], timeout_ms: null, working_directory: null, env: null, user: null } }
			const r = await c.responses.create({
				model: MODEL[up],
				tools: [{ type: 'local_shell' }],
				input: [{ role: 'user', content: 'list' }, call, { type: 'function_call_output', call_id: 'call_ls1', output: 'a b' }],
			} as OpenAI.Responses.ResponseCreateParamsNonStreaming)
			expect(replayedCalls(up)).toEqual([{ name: 'local_shell', args: { command: ['ls'] } }])
			expect(text(r)).toBe('Tool results: a b')
		})
})

describe('typed tools that cannot be converted', () => {
	for (const up of CONVERTED) {
		it(`should refuse computer_use_preview with a 400 naming it (${up})`, async () => {
			const c = await client()
			const tools = [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }] as OpenAI.Responses.Tool[]
			const e = (await c.responses.create({ model: MODEL[up], tools, input: 'hi' }).catch((x) => x)) as InstanceType<typeof OpenAI.APIError>
			expect(e.status).toBe(400)
			expect(e.message).toContain("tools[0] of type 'computer_use_preview' (computer use) is only available on OpenAI models")
		})
		it(`should refuse a shell in OpenAI's container with a 400 naming it (${up})`, async () => {
			const c = await client()
			const tools = [{ type: 'shell', environment: { type: 'container_auto' } }] as OpenAI.Responses.Tool[]
			const e = (await c.responses.create({ model: MODEL[up], tools, input: 'hi' }).catch((x) => x)) as InstanceType<typeof OpenAI.APIError>
			expect(e.status).toBe(400)
			expect(e.message).toContain("runs in OpenAI's container")
		})
	}

	it('should send typed tools to an OpenAI model as written', async () => {
		const c = await client()
		await c.responses.create({ model: MODEL.openai, tools: TOOLS, tool_choice: { type: 'shell' }, input: 'hi' })
		const body = lastRequest(m.mocks.openai).body
		expect(body.tools).toEqual(TOOLS)
		expect(body.tool_choice).toEqual({ type: 'shell' })
	})
})

describe('Agents SDK shellTool and applyPatchTool on a converted model', () => {
	for (const up of CONVERTED)
		for (const stream of [false, true])
			it(`should run the shell and the editor from the typed calls (${label(up, stream)})`, async () => {
				const c = await client()
				setDefaultOpenAIClient(c)
				const ran: string[][] = []
				const patched: string[] = []
				const shell = shellTool({ shell: { run: async (action) => (ran.push(action.commands), { output: [{ stdout: 'two files', stderr: '', outcome: { type: 'exit', exitCode: 0 } }] }) } })
				const editor = applyPatchTool({
					editor: {
						createFile: async (op) => void patched.push(`create ${op.path}`),
						updateFile: async (op) => void patched.push(`update ${op.path}`),
						deleteFile: async (op) => void patched.push(`delete ${op.path}`),
					},
				})
				const agent = new Agent({ name: 'dev', model: new OpenAIResponsesModel(c, MODEL[up]), tools: [shell, editor] })
				const input = '#call shell {"commands":["ls"]}'
				let result
				if (stream) {
					result = await run(agent, input, { stream: true })
					const items: string[] = []
					for await (const e of result) if (e.type === 'run_item_stream_event') items.push(e.name)
					await result.completed
					expect(items).toContain('tool_called')
				} else result = await run(agent, input)
				expect(ran).toEqual([['ls']])
				expect(result.finalOutput).toContain('two files')
				const patch = await run(agent, '#call apply_patch {"type":"create_file","path":"n.txt","diff":"+new"}')
				expect(patched).toEqual(['create n.txt'])
				expect(patch.finalOutput).toContain('completed')
			})
})
