/**
 * GitHub Copilot CLI 1.0.102 over the Responses API's WebSocket mode (GET /v1/responses), as it ran against the gateway:
 * `copilot -p … --allow-all-tools` with `COPILOT_PROVIDER_WIRE_API=responses` and `COPILOT_PROVIDER_TRANSPORT=websockets`,
 * recorded by a WebSocket tap between the CLI and the gateway. Its handshake is the openai JS SDK's (5.20.1, Bearer key);
 * each `response.create` carries `instructions`, its tools, `max_output_tokens: 32000`, `reasoning: {effort: "medium",
 * summary: "auto"}`, `store: false` and the encrypted reasoning asked back; a tool round trip sends the outputs alone,
 * continuing the connection's last response by `previous_response_id`. Instructions and tools are shortened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Matrix, MODEL, SETUP_MS, startMatrix, THINKER, usageRows } from './harness'

let m: Matrix
beforeAll(async () => {
	m = await startMatrix()
}, SETUP_MS)
afterAll(() => m.close())

type Event = { type: string; [k: string]: any }

const HEADERS = {
	accept: 'application/json',
	'content-type': 'application/json',
	'user-agent': 'OpenAI/JS 5.20.1',
	'x-initiator': 'user',
	'x-interaction-type': 'conversation-user',
	'x-stainless-helper-method': 'stream',
	'x-stainless-lang': 'js',
	'x-stainless-package-version': '5.20.1',
	'x-stainless-retry-count': '0',
	'x-stainless-timeout': '600',
}

const TOOLS = [
	{
		type: 'function',
		name: 'bash',
		strict: false,
		description: 'Runs a Bash command.',
		parameters: { type: 'object', properties: { command: { type: 'string', description: 'The Bash command and arguments to run.' }, description: { type: 'string' }, shellId: { type: 'string' }, mode: { type: 'string', enum: ['sync', 'async'] }, initial_wait: { type: 'integer' } }, required: ['command', 'description'] },
	},
	{ type: 'function', name: 'read_bash', strict: false, description: 'Reads output from a Bash command.', parameters: { type: 'object', properties: { shellId: { type: 'string' }, delay: { type: 'integer' } }, required: ['shellId', 'delay'] } },
	{ type: 'function', name: 'list_bash', strict: false, description: 'Lists all active Bash sessions.', parameters: { type: 'object', properties: {}, required: [] } },
]
const create = (model: string) => ({
	type: 'response.create',
	model,
	instructions: 'You are the GitHub Copilot CLI, a terminal assistant built by GitHub.',
	tools: TOOLS,
	max_output_tokens: 32000,
	parallel_tool_calls: true,
	reasoning: { effort: 'medium', summary: 'auto' },
	store: false,
	include: ['reasoning.encrypted_content'],
})

describe('GitHub Copilot CLI 1.0.102 over the Responses WebSocket', () => {
	// OpenAI's model is a reasoning one: Copilot asks every model for reasoning, which gpt-4o (gpt-m) refuses, as OpenAI does.
	for (const model of [THINKER.openai, MODEL.anthropic, MODEL.gemini]) {
		it(`should run two parallel calls on ${model} and take both outputs alone as the continuation, billed per response`, async () => {
			const a = await m.account(10)
			const ws = new WebSocket(`${m.app.url.replace('http', 'ws')}/v1/responses`, { headers: { ...HEADERS, authorization: `Bearer ${a.key}` } } as any)
			const events: Event[] = []
			ws.onmessage = (e) => events.push(JSON.parse(String(e.data)))
			await new Promise<void>((resolve, reject) => {
				ws.onopen = () => resolve()
				ws.onerror = () => reject(new Error('handshake refused'))
			})
			const send = async (frame: Record<string, unknown>) => {
				const from = events.length
				ws.send(JSON.stringify(frame))
				for (let i = 0; i < 1000; i++) {
					const end = events.slice(from).find((e) => ['response.completed', 'response.failed', 'error'].includes(e.type))
					if (end) return end
					await Bun.sleep(10)
				}
				throw new Error('no end event')
			}
			const first = await send({ ...create(model), input: [{ role: 'user', content: [{ type: 'input_text', text: '<current_datetime>2026-11-30T10:05:20.882+00:00</current_datetime>\n\n#tools' }], type: 'message' }] })
			expect(first.type).toBe('response.completed')
			const calls = first.response.output.filter((o: any) => o.type === 'function_call')
			expect(calls.map((c: any) => c.name)).toEqual(['bash', 'read_bash'])
			const second = await send({
				...create(model),
				previous_response_id: first.response.id,
				input: [
					{ type: 'function_call_output', call_id: calls[0].call_id, output: '/bin/bash: line 1: Paris: command not found\n<shellId: 0 completed with exit code 127>' },
					{ type: 'function_call_output', call_id: calls[1].call_id, output: 'Invalid input: "delay": Required' },
				],
			})
			ws.close()
			expect(second.type).toBe('response.completed')
			expect(second.response.previous_response_id).toBe(first.response.id)
			expect(second.response.output.find((o: any) => o.type === 'message').content[0].text).toContain('Paris: command not found')
			const rows = await usageRows(m, a.accountId)
			expect(rows.map((r) => [r.model, r.input_tokens, r.output_tokens])).toEqual([first, second].map((e) => [model, e.response.usage.input_tokens, e.response.usage.output_tokens]))
			expect(Math.round((await m.app.balance(a.accountId)) * 1e6)).toBe(Math.round((10 - rows[0].cost - rows[1].cost) * 1e6))
		})
	}
})
