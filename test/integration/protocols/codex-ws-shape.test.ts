/**
 * Codex CLI 0.171.0 over the Responses API's WebSocket mode (GET /v1/responses), as it ran against the gateway:
 * `codex exec --json` with a custom provider (`wire_api = "responses"`, `supports_websockets = true`), recorded by a
 * WebSocket tap between the CLI and the gateway. Per connection it sends a warm-up (`generate: false`, only the base
 * instructions as input), then the turn continuing it by `previous_response_id` (`store: false`, the rest of the
 * context as input), then each tool result alone (`function_call_output`, or `custom_tool_call_output` for its freeform
 * `apply_patch`) continuing the last response: the gateway rebuilds the conversation from the connection's memory,
 * reasoning included (a Claude thinking signature, Gemini's thought signature). A response refused before it streams
 * is an `error` event, which Codex reads as an HTTP status with the event's `headers` (its request id, a 429's
 * `retry-after`). Instructions and tool descriptions are shortened; the shapes are as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GEMINI_3, type Matrix, MODEL, SETUP_MS, startMatrixWithAgentModels, usageRows } from './harness'

const GPT = 'gpt-5.5'
let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithAgentModels(GPT)
}, SETUP_MS)
afterAll(() => m.close())

type Event = { type: string; [k: string]: any }
const SID = '01a22bed-2e72-7433-af82-e4b6550c7e9f'

/** The handshake headers Codex sends (besides the key). */
const handshake = (key: string, model: string) => ({
	authorization: `Bearer ${key}`,
	'openai-beta': 'responses_websockets=2026-02-06',
	originator: 'codex_exec',
	'session-id': SID,
	'thread-id': SID,
	'user-agent': 'codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.171.0)',
	'x-client-request-id': SID,
	'x-codex-beta-features': 'remote_compaction_v2',
	'x-codex-window-id': `${SID}:0`,
	'x-codex-turn-metadata': JSON.stringify({ session_id: SID, thread_id: SID, agent_name: '/root', turn_id: '', request_kind: 'prewarm', sandbox_mode: 'workspace-write', model, reasoning_effort: 'medium' }),
})

async function connect(key: string, model: string) {
	const ws = new WebSocket(`${m.app.url.replace('http', 'ws')}/v1/responses`, { headers: handshake(key, model) } as any)
	const events: Event[] = []
	ws.onmessage = (e) => events.push(JSON.parse(String(e.data)))
	await new Promise<void>((resolve, reject) => {
		ws.onopen = () => resolve()
		ws.onerror = () => reject(new Error('handshake refused'))
	})
	/** Sends one frame and waits for the event that ends its answer. */
	const send = async (frame: Record<string, unknown>): Promise<Event[]> => {
		const from = events.length
		ws.send(JSON.stringify(frame))
		const end = Date.now() + 10_000
		for (;;) {
			const at = events.findIndex((e, i) => i >= from && ['response.completed', 'response.failed', 'response.incomplete', 'error'].includes(e.type))
			if (at >= 0) return events.slice(from, at + 1)
			if (Date.now() > end) throw new Error(`no end event in ${JSON.stringify(events.slice(from).map((e) => e.type))}`)
			await Bun.sleep(10)
		}
	}
	return { ws, send }
}

const TOOLS = [
	{ type: 'function', name: 'exec_command', description: 'Runs a command in a PTY.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string', description: 'Shell command to execute.' }, workdir: { type: 'string' }, yield_time_ms: { type: 'number' } }, required: ['cmd'], additionalProperties: false } },
	{ type: 'function', name: 'write_stdin', description: 'Writes characters to an existing unified exec session.', strict: false, parameters: { type: 'object', properties: { session_id: { type: 'number' }, chars: { type: 'string' } }, required: ['session_id'], additionalProperties: false } },
	{ type: 'custom', name: 'apply_patch', description: 'Use the `apply_patch` tool to edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\nhunk: /(.|\\n)+/\n%import common.LF' } },
	{ type: 'tool_search', execution: 'client', description: 'Searches deferred tools.', parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'number' } }, required: ['query'], additionalProperties: false } },
	{ type: 'web_search', external_web_access: false },
]
const common = (model: string) => ({
	type: 'response.create',
	model,
	stream: true,
	tools: TOOLS,
	tool_choice: 'auto',
	parallel_tool_calls: true,
	reasoning: { effort: 'medium' },
	store: false,
	include: ['reasoning.encrypted_content'],
	prompt_cache_key: SID,
	text: { verbosity: 'low' },
	client_metadata: { 'x-codex-installation-id': 'ecbd39b6-ea3f-4f56-8ff7-f72112ef7886' },
})
const message = (role: string, text: string, n: number) => ({ type: 'message', id: `msg_01a22bed-2f58-7701-8054-d3eb9c2c32${String(n).padStart(2, '0')}`, role, content: [{ type: 'input_text', text }] })
const PATCH = '*** Begin Patch\n*** Add File: hello2.txt\n+hi\n*** End Patch\n'

/**
 * The frames of one `codex exec` turn that calls a tool once: warm-up, the turn, the tool's output. The freeform
 * `apply_patch` (a `custom_tool_call`) where the mock vendor answers custom tools; `exec_command` on the OpenAI mock,
 * which calls function tools only.
 */
async function toolTurn(key: string, model: string) {
	const freeform = model !== GPT
	const c = await connect(key, model)
	const warm = await c.send({ ...common(model), input: [message('developer', 'You are Codex, a coding agent based on GPT-5.', 0)], generate: false })
	expect(warm.map((e) => e.type)).toEqual(['response.created', 'response.completed'])
	const turn = await c.send({
		...common(model),
		previous_response_id: warm.at(-1)!.response.id,
		input: [
			message('developer', '<permissions instructions>\nFilesystem sandboxing defines which files can be read or written.', 1),
			message('user', '<environment_context>\n  <cwd>/tmp/work</cwd>\n  <shell>bash</shell>\n</environment_context>', 2),
			message('user', freeform ? `#call apply_patch ${JSON.stringify({ input: PATCH })}` : '#call exec_command {"cmd":"echo hi"}', 3),
		],
	})
	const done = turn.at(-1)!
	expect(done.type).toBe('response.completed')
	const call = done.response.output.find((o: any) => o.type === (freeform ? 'custom_tool_call' : 'function_call'))
	expect(call).toMatchObject(freeform ? { name: 'apply_patch', input: PATCH } : { name: 'exec_command', arguments: '{"cmd":"echo hi"}' })
	const output = freeform
		? { type: 'custom_tool_call_output', id: 'ctco_01a22bed-302b-7bd3-a9dc-76b43dd97014', call_id: call.call_id, output: 'Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nA hello2.txt\n' }
		: { type: 'function_call_output', call_id: call.call_id, output: 'Chunk ID: fe55f6\nWall time: 0.4944 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nhi\n' }
	const result = await c.send({ ...common(model), previous_response_id: done.response.id, input: [output] })
	c.ws.close()
	return { turn: done, last: result.at(-1)! }
}

describe('Codex CLI 0.171.0 over the Responses WebSocket', () => {
	for (const model of [GPT, MODEL.anthropic, MODEL.gemini, GEMINI_3]) {
		it(`should run a tool round trip on ${model} continued from the connection's memory, billed per response`, async () => {
			const a = await m.account(10)
			const { turn, last } = await toolTurn(a.key, model)
			expect(last.type).toBe('response.completed')
			expect(last.response.previous_response_id).toBe(turn.response.id)
			expect(last.response.output.find((o: any) => o.type === 'message').content[0].text).toContain(model === GPT ? 'Process exited with code 0' : 'Success. Updated the following files')
			// The warm-up is free: one row per generated response, as Codex counts them.
			const rows = await usageRows(m, a.accountId)
			expect(rows.map((r) => ({ model: r.model, input: r.input_tokens, output: r.output_tokens, cached: r.cached_tokens, endpoint: r.endpoint, stream: r.stream }))).toEqual(
				[turn, last].map((e) => ({ model, input: e.response.usage.input_tokens, output: e.response.usage.output_tokens, cached: e.response.usage.input_tokens_details.cached_tokens, endpoint: '/v1/responses', stream: true })),
			)
			expect(rows.every((r) => r.cost > 0)).toBe(true)
			expect(Math.round((await m.app.balance(a.accountId)) * 1e6)).toBe(Math.round((10 - rows[0].cost - rows[1].cost) * 1e6))
		})
	}

	it('should send Claude its thinking back signed when the tool result continues the turn', async () => {
		const a = await m.account(10)
		await toolTurn(a.key, MODEL.anthropic)
		const body = m.mocks.anthropic.requests.at(-1)!.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }
		const assistant = body.messages.find((x) => x.role === 'assistant')!
		expect(assistant.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
		expect(assistant.content[0].signature).toBeTruthy()
		expect(body.messages.at(-1)!.content[0]).toMatchObject({ type: 'tool_result' })
	})

	it('should give a refused response\'s error event the request id and retry-after Codex reads from its headers', async () => {
		const a = await m.account(10)
		const c = await connect(a.key, MODEL.anthropic)
		m.mocks.anthropic.faultOnce = { kind: 'status', status: 429, retryAfter: 7 }
		const refused = (await c.send({ ...common(MODEL.anthropic), input: [message('user', 'hello', 0)] })).at(-1)!
		expect(refused).toMatchObject({ type: 'error', status: 429, error: { type: 'rate_limit_error' } })
		expect(refused.headers?.['retry-after']).toBe('7')
		expect(refused.headers?.['retry-after-ms']).toBe('7000')
		expect(refused.headers?.['x-request-id']).toMatch(/^req_/)
		// The connection stays usable, as Codex's retry on a new one would find it.
		expect((await c.send({ ...common(MODEL.anthropic), input: [message('user', 'hello', 0)] })).at(-1)!.type).toBe('response.completed')
		c.ws.close()
		const rows = await usageRows(m, a.accountId)
		expect(rows.map((r) => r.status)).toEqual([429, 200])
		expect(refused.headers['x-request-id']).toBe(rows[0].request_id)
	})
})
