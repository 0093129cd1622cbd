/**
 * The Continue CLI (`@continuedev/cli` 1.5.47, `cn -p`) as it ran against the gateway, recorded between the CLI and the
 * gateway, with the two providers of its config.yaml. `provider: anthropic` is Continue's own adapter
 * (`@continuedev/openai-adapters` over node-fetch): `POST {apiBase}messages`, always streamed yet with `accept:
 * application/json`, `anthropic-beta: prompt-caching-2024-07-31`, `max_tokens: 32000`, cache breakpoints on the system,
 * the last tool and the last text of the last two user messages, tool results as strings, and thinking only through
 * `requestOptions.extraBodyProperties` (its replay drops the thinking blocks). `provider: openai` is the `openai` SDK:
 * names matching /^(gpt-5|o\d)/ go to the Responses API (system as `developer`, `parallel_tool_calls: false`, tools with
 * `strict: null`, replayed calls as `function_call` items), others to Chat Completions (`stream_options.include_usage`,
 * an assistant tool-call turn with `content: ""` and no reasoning). Errors: the anthropic provider shows the body's
 * text as it came, the openai provider the SDK's `<status> <message>`. Tool descriptions and the system are shortened;
 * the shapes are as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Response as ResponsesResponse, ResponseStreamEvent } from 'openai/resources/responses/responses'
import { chat } from './clients'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithCatalogModel, usageRows } from './harness'
import { sseFrames } from './wire-checks'

/** A model Continue sends to the Responses API (its name starts `gpt-5`), served by an OpenAI channel. */
const GPT = 'gpt-5.5'
const CLAUDE = MODEL.anthropic
let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithCatalogModel(GPT)
}, SETUP_MS)
afterAll(() => m.close())

const SYSTEM =
	"You are an agent in the Continue CLI. Given the user's prompt, you should use the tools available to you to answer the user's question.\n\nIMPORTANT: You are running in headless mode. Provide ONLY your final answer to the user's question."
const ASK = '#call Read {"filepath":"hello.txt"}'
const READ_OUT = 'Content of hello.txt:\nhello\n'
const EPHEMERAL = { type: 'ephemeral' as const }
const READ = { name: 'Read', description: 'Read the contents of a file at the specified path', parameters: { type: 'object', required: ['filepath'], properties: { filepath: { type: 'string', description: 'The path to the file to read' } } } }
const BASH = {
	name: 'Bash',
	description: 'Executes a terminal command and returns the output',
	parameters: {
		type: 'object',
		required: ['command'],
		properties: { command: { type: 'string', description: 'The command to execute in the terminal.' }, timeout: { type: 'number', description: 'Optional timeout in seconds (max 600).' } },
	},
}

describe('Continue through /v1/messages (provider anthropic, apiBase {root}/v1)', () => {
	const headers = (key: string) => ({
		'content-type': 'application/json',
		accept: 'application/json',
		'anthropic-version': '2023-06-01',
		'anthropic-beta': 'prompt-caching-2024-07-31',
		'x-api-key': key,
		'user-agent': 'node-fetch',
	})
	// Its caching strategy `systemAndTools`: the system and the last tool, then the last two user messages' last text.
	const body = (model: string, messages: unknown[]) => ({
		messages,
		max_tokens: 32000,
		model,
		stream: true,
		system: [{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }],
		tools: [
			{ name: READ.name, description: READ.description, input_schema: READ.parameters },
			{ name: BASH.name, description: BASH.description, input_schema: BASH.parameters, cache_control: EPHEMERAL },
		],
	})
	type Event = { type: string; [k: string]: any }
	const turn = async (acct: Account, b: unknown) => {
		const res = await fetch(`${m.app.url}/v1/messages`, { method: 'POST', headers: headers(acct.key), body: JSON.stringify(b) })
		expect(res.status).toBe(200)
		// Its parser reads the events whatever its `accept` asked for.
		expect(res.headers.get('content-type')).toStartWith('text/event-stream')
		const events = sseFrames(await res.text()).map((f) => JSON.parse(f.data) as Event)
		const text = events.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta.text).join('')
		const start = events.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use')
		const args = events.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta.partial_json).join('')
		const delta = events.find((e) => e.type === 'message_delta')!
		return { events, text, call: start && { id: start.content_block.id as string, name: start.content_block.name as string, input: JSON.parse(args) }, delta }
	}

	for (const model of [CLAUDE, GPT])
		it(`should stream a call of its Read tool and take the result back with its breakpoints (${model})`, async () => {
			const acct = await m.account()
			const user = { role: 'user', content: [{ type: 'text', text: ASK, cache_control: EPHEMERAL }] }
			const first = await turn(acct, body(model, [user]))
			expect(first.events[0]!.type).toBe('message_start')
			expect(first.events[0]!.message.usage.input_tokens).toBeGreaterThan(0)
			expect([first.call?.name, first.call?.input, first.delta.delta.stop_reason]).toEqual(['Read', { filepath: 'hello.txt' }, 'tool_use'])
			if (model === CLAUDE) {
				const sent = lastRequest(m.mocks.anthropic)
				expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31')
				expect([sent.body.system[0].cache_control, sent.body.tools[1].cache_control, sent.body.messages[0].content[0].cache_control]).toEqual([EPHEMERAL, EPHEMERAL, EPHEMERAL])
			}

			// Replayed: the call without text before it, its result a string; the breakpoint stays on the user's text.
			const second = await turn(
				acct,
				body(model, [
					user,
					{ role: 'assistant', content: [{ type: 'tool_use', id: first.call!.id, name: 'Read', input: first.call!.input }] },
					{ role: 'user', content: [{ type: 'tool_result', tool_use_id: first.call!.id, content: READ_OUT }] },
				]),
			)
			expect([second.text, second.delta.delta.stop_reason]).toEqual([`Tool results: ${READ_OUT}`, 'end_turn'])
			expect(second.delta.usage.output_tokens).toBeGreaterThan(0)
			expect((await usageRows(m, acct.accountId)).map((r) => [r.model, r.endpoint, r.stream, r.status])).toEqual([
				[model, '/v1/messages', true, 200],
				[model, '/v1/messages', true, 200],
			])
		})

	it('should pass thinking it turns on through extraBodyProperties, and refuse its replay without the thinking as Anthropic does', async () => {
		const acct = await m.account()
		const thinking = { type: 'enabled', budget_tokens: 2048 }
		const user = { role: 'user', content: [{ type: 'text', text: ASK, cache_control: EPHEMERAL }] }
		const first = await turn(acct, { ...body(CLAUDE, [user]), thinking })
		expect(first.events.some((e) => e.type === 'content_block_start' && e.content_block.type === 'thinking')).toBe(true)
		const replay = {
			...body(CLAUDE, [
				user,
				{ role: 'assistant', content: [{ type: 'tool_use', id: first.call!.id, name: 'Read', input: first.call!.input }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: first.call!.id, content: READ_OUT }] },
			]),
			thinking,
		}
		const res = await fetch(`${m.app.url}/v1/messages`, { method: 'POST', headers: headers(acct.key), body: JSON.stringify(replay) })
		// Continue shows this text as it came: the anthropic provider cannot think across a tool call (the openai one can, below).
		expect(res.status).toBe(400)
		const err = (await res.json()) as { type: string; error: { type: string; message: string } }
		expect([err.type, err.error.type]).toEqual(['error', 'invalid_request_error'])
		expect(err.error.message).toStartWith('messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.')
	})
})

describe('Continue through /v1/chat/completions (provider openai, names not gpt-5 or o…)', () => {
	it('should stream its usage chunk, and put the thinking it drops from the replayed tool-call turn back for Claude', async () => {
		const acct = await m.account()
		const tools = [READ, BASH].map((f) => ({ type: 'function', function: f }))
		const body = (messages: unknown[]) => ({
			model: CLAUDE,
			messages: [{ role: 'system', content: SYSTEM }, ...messages],
			stream: true,
			stream_options: { include_usage: true },
			tools,
			// requestOptions.extraBodyProperties
			reasoning_effort: 'medium',
		})
		const turn = (messages: unknown[]) => chat(acct.openai, body(messages) as never, true)
		const user = { role: 'user', content: ASK }
		const first = await turn([user])
		const [call] = first.calls
		expect([call?.name, call?.args, first.stop, first.reasoning]).toEqual(['Read', { filepath: 'hello.txt' }, 'tool_calls', `Let me think about ${ASK}.`])
		expect(first.usage.reasoning).toBeGreaterThan(0)

		const second = await turn([
			user,
			{ role: 'assistant', content: '', tool_calls: [{ id: call!.id, type: 'function', function: { name: 'Read', arguments: JSON.stringify(call!.args) } }] },
			{ role: 'tool', content: READ_OUT, tool_call_id: call!.id },
		])
		expect([second.text, second.stop]).toEqual([`Tool results: ${READ_OUT}`, 'stop'])
		const [, assistant] = lastRequest(m.mocks.anthropic).body.messages
		expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
		expect(lastRequest(m.mocks.anthropic).body.thinking.type).toBe('enabled')
	})
})

describe('Continue through /v1/responses (provider openai, gpt-5… and o… names)', () => {
	const tools = [READ, BASH].map((f) => ({ type: 'function', ...f, strict: null }))
	const body = (model: string, input: unknown[]) => ({
		model,
		input: [{ type: 'message', role: 'developer', content: [{ text: SYSTEM, type: 'input_text' }] }, ...input],
		stream: true,
		tools,
		parallel_tool_calls: false,
	})
	const turn = async (acct: Account, b: unknown): Promise<ResponsesResponse> => {
		let final: ResponsesResponse | undefined
		for await (const e of (await acct.openai.responses.create(b as never)) as unknown as AsyncIterable<ResponseStreamEvent>) if (e.type === 'response.completed') final = e.response
		if (!final) throw new Error('no response.completed')
		return final
	}
	const textOf = (r: ResponsesResponse) => r.output.flatMap((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('')

	// GPT as its OpenAI channel gets it; Claude under a name mapped to it would get the same request converted.
	for (const model of [GPT, CLAUDE])
		it(`should answer its Read call and take the replayed call and output (${model})`, async () => {
			const acct = await m.account()
			const user = { type: 'message', role: 'user', content: [{ text: ASK, type: 'input_text' }] }
			const first = await turn(acct, body(model, [user]))
			const call = first.output.find((o) => o.type === 'function_call')
			expect(call && [call.name, JSON.parse(call.arguments)]).toEqual(['Read', { filepath: 'hello.txt' }])
			expect(first.usage?.input_tokens).toBeGreaterThan(0)
			const replay = [
				{ type: 'function_call', call_id: call!.call_id, name: 'Read', arguments: call!.arguments },
				{ type: 'function_call_output', call_id: call!.call_id, output: READ_OUT },
			]
			const second = await turn(acct, body(model, [user, ...replay]))
			expect(textOf(second)).toBe(`Tool results: ${READ_OUT}`)
			if (model === GPT) {
				const sent = lastRequest(m.mocks.openai).body
				expect([sent.input[0].role, sent.parallel_tool_calls, sent.tools[0].strict, sent.input.slice(2)]).toEqual(['developer', false, null, replay])
			} else expect(lastRequest(m.mocks.anthropic).body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
		})
})

describe('the errors Continue shows', () => {
	it('should refuse a model the key may not use (403) and an empty balance (402) in the body each provider prints', async () => {
		const limited = await m.account()
		expect((await m.app.admin(`/api/tokens/${limited.tokenId}`, { method: 'PATCH', body: { allowed_models: [GPT] } })).status).toBe(200)
		const empty = await m.account(0)
		const messages = (acct: Account) =>
			fetch(`${m.app.url}/v1/messages`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', accept: 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': acct.key },
				body: JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_tokens: 32000, model: CLAUDE, stream: true }),
			})
		// The anthropic provider prints the body as text: Anthropic's error object with its type and message.
		const denied = await messages(limited)
		expect([denied.status, await denied.json()]).toMatchObject([403, { type: 'error', error: { type: 'permission_error', message: `This API key may not use model "${CLAUDE}"` } }])
		const broke = await messages(empty)
		const body = (await broke.json()) as { error: { type: string; message: string } }
		expect([broke.status, body.error.type]).toEqual([402, 'billing_error'])
		expect(body.error.message).toStartWith('account balance exhausted')

		// The openai provider prints `<status> <message>` from the SDK's error.
		const said = async (call: Promise<unknown>) => {
			const e = (await call.catch((x) => x)) as { status: number; error: { message: string } }
			return [e.status, e.error.message]
		}
		expect(await said(limited.openai.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }], stream: true }))).toEqual([403, `This API key may not use model "${CLAUDE}"`])
		const [status, message] = await said(empty.openai.responses.create({ model: GPT, input: 'hi', stream: true }))
		expect(status).toBe(402)
		expect(message).toStartWith('account balance exhausted')
	})
})
