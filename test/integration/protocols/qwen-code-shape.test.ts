/**
 * Qwen Code 0.15.10 (`@qwen-code/qwen-code`, `qwen -p … --output-format json`) as it ran against the gateway, recorded
 * between the CLI and the gateway, in its three auth types. `openai` (the `openai` SDK 5.11, `OPENAI_BASE_URL={root}/v1`):
 * `POST /v1/chat/completions`, streamed with `stream_options.include_usage`, `max_tokens: 8000` for every model, the
 * system prompt as a string, user turns as text parts, a replayed tool call with `content: null` (or `""` beside its
 * `reasoning_content`), tool results as text parts, and `model.generationConfig.reasoning` sent as OpenRouter's
 * `reasoning` object, not `reasoning_effort`. `anthropic` (`ANTHROPIC_BASE_URL={root}`): `/v1/messages` with
 * `interleaved-thinking-2025-05-14`, breakpoints on the system, the last tool and the last user text, `temperature: 1`
 * and thinking always on, `budget_tokens: 32000` under `max_tokens: 8000`. `gemini` (`GOOGLE_GEMINI_BASE_URL={root}`):
 * `:streamGenerateContent?alt=sse` with `thinkingLevel: THINKING_LEVEL_UNSPECIFIED`. Errors it shows as
 * `[API Error: <status> <message>]` at once, without retrying a 402 or 403. Tool descriptions and the system prompt
 * are shortened; the shapes are as sent. The CLI itself is not a dependency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chat } from './clients'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithCatalogModel, usageRows } from './harness'
import { messageBlocks, sseFrames } from './wire-checks'

/** A reasoning model of OpenAI's, served by an OpenAI channel on the fast path (its name is the upstream's). */
const GPT = 'gpt-5.5'
const CLAUDE = MODEL.anthropic
const GEMINI = MODEL.gemini
let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithCatalogModel(GPT)
}, SETUP_MS)
afterAll(() => m.close())

const UA = 'QwenCode/0.15.10 (linux; x64)'
const SYSTEM = 'You are Qwen Code, an interactive CLI agent developed by Alibaba Group, specializing in software engineering tasks.'
const CONTEXT = "This is the Qwen Code. We are setting up the context for our chat.\nToday's date is Monday, November 30, 2026.\nMy operating system is: linux"
const ACK = 'Got it. Thanks for the context!'
const FILE = '/tmp/work/hello.txt'
const ASK = `#call read_file {"file_path":"${FILE}"}`
const READ_OUT = 'hello\n'
const READ = {
	name: 'read_file',
	description: 'Reads and returns the content of a specified file.',
	parameters: {
		properties: {
			file_path: { description: 'The absolute path to the file to read.', type: 'string' },
			offset: { description: 'Optional: the 0-based line number to start reading from.', type: 'number' },
			limit: { description: 'Optional: maximum number of lines to read.', type: 'number' },
		},
		required: ['file_path'],
		type: 'object',
	},
}
const SHELL = {
	name: 'run_shell_command',
	description: 'Executes a given shell command.',
	parameters: {
		properties: { command: { type: 'string', description: 'Exact command to execute' }, is_background: { type: 'boolean', description: 'Whether to run it in the background.' } },
		required: ['command'],
		type: 'object',
	},
}
const text = (t: string) => ({ type: 'text', text: t })

describe('Qwen Code through /v1/chat/completions (--auth-type openai)', () => {
	const head = [{ role: 'system', content: SYSTEM }, { role: 'user', content: [text(CONTEXT)] }, { role: 'assistant', content: ACK }]
	const body = (model: string, messages: unknown[], extra: Record<string, unknown> = {}) => ({
		model,
		messages: [...head, ...messages],
		max_tokens: 8000,
		stream: true,
		stream_options: { include_usage: true },
		tools: [READ, SHELL].map((f) => ({ type: 'function', function: f })),
		...extra,
	})
	const turn = (acct: Account, b: unknown) => chat(acct.openai, b as never, true, { headers: { 'user-agent': UA } })
	const user = { role: 'user', content: [text(ASK)] }

	for (const model of [GPT, CLAUDE, GEMINI])
		it(`should stream its read_file call with usage and take the replayed call and its result parts (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, body(model, [user]))
			const [call] = first.calls
			expect([call?.name, call?.args, first.stop]).toEqual(['read_file', { file_path: FILE }, 'tool_calls'])
			expect(first.usage.input).toBeGreaterThan(0)
			if (model === GPT) {
				// Its max_tokens goes to a reasoning model as the field it takes.
				const sent = lastRequest(m.mocks.openai).body
				expect([sent.max_tokens, sent.max_completion_tokens]).toEqual([undefined, 8000])
			}
			const second = await turn(
				acct,
				body(model, [
					user,
					{ role: 'assistant', content: null, tool_calls: [{ id: call!.id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify(call!.args) } }] },
					{ role: 'tool', tool_call_id: call!.id, content: [text(READ_OUT)] },
				]),
			)
			expect([second.text, second.stop]).toEqual([`Tool results: ${READ_OUT}`, 'stop'])
			expect(second.usage.output).toBeGreaterThan(0)
			expect((await usageRows(m, acct.accountId)).map((r) => [r.model, r.endpoint, r.stream, r.status])).toEqual([
				[model, '/v1/chat/completions', true, 200],
				[model, '/v1/chat/completions', true, 200],
			])
		})

	// `model.generationConfig.reasoning: {effort}` in its settings.json.
	for (const model of [CLAUDE, GEMINI])
		it(`should think on its reasoning object and take the thinking back on the replayed call (${model})`, async () => {
			const acct = await m.account()
			const reasoning = { reasoning: { effort: 'medium' } }
			const first = await turn(acct, body(model, [user], reasoning))
			const [call] = first.calls
			expect(first.reasoning).toBe(`Let me think about ${ASK}.`)
			expect(first.usage.reasoning).toBeGreaterThan(0)
			const second = await turn(
				acct,
				body(
					model,
					[
						user,
						{ role: 'assistant', content: '', tool_calls: [{ id: call!.id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify(call!.args) } }], reasoning_content: first.reasoning },
						{ role: 'tool', tool_call_id: call!.id, content: [text(READ_OUT)] },
					],
					reasoning,
				),
			)
			expect(second.text).toBe(`Tool results: ${READ_OUT}`)
			if (model === CLAUDE) expect(lastRequest(m.mocks.anthropic).body.messages.at(-2).content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
		})

	it('should send its reasoning object to an OpenAI model as the reasoning_effort OpenAI takes', async () => {
		const acct = await m.account()
		const first = await turn(acct, body(GPT, [user], { reasoning: { effort: 'medium' } }))
		expect(first.calls[0]?.name).toBe('read_file')
		// OpenAI's Chat Completions know no `reasoning` (400 "Unrecognized request argument supplied: reasoning").
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.reasoning, sent.reasoning_effort]).toEqual([undefined, 'medium'])
		// OpenRouter's budget is the effort it stands for; `enabled: false` to a model whose efforts the gateway does not
		// know leaves it at its default.
		await turn(acct, body(GPT, [user], { reasoning: { max_tokens: 1000 } }))
		expect([lastRequest(m.mocks.openai).body.reasoning, lastRequest(m.mocks.openai).body.reasoning_effort]).toEqual([undefined, 'low'])
		await turn(acct, body(GPT, [user], { reasoning: { enabled: false } }))
		expect(Object.keys(lastRequest(m.mocks.openai).body).filter((k) => k.startsWith('reasoning'))).toEqual([])
		// Converted rather than relayed (stop sequences a reasoning model refuses are enforced by the gateway): the same.
		await turn(acct, body(GPT, [user], { reasoning: { effort: 'high' }, stop: ['STOP'] }))
		expect([lastRequest(m.mocks.openai).body.reasoning, lastRequest(m.mocks.openai).body.reasoning_effort, lastRequest(m.mocks.openai).body.stop]).toEqual([undefined, 'high', undefined])
	})
})

describe('Qwen Code through /v1/messages (--auth-type anthropic, ANTHROPIC_BASE_URL={root})', () => {
	const EPHEMERAL = { type: 'ephemeral' }
	const headers = (key: string) => ({
		'content-type': 'application/json',
		accept: 'application/json',
		'anthropic-version': '2023-06-01',
		'anthropic-beta': 'interleaved-thinking-2025-05-14',
		'x-api-key': key,
		'user-agent': UA,
	})
	const body = (model: string, messages: unknown[], maxTokens = 8000) => ({
		model,
		system: [{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }],
		messages: [{ role: 'user', content: [text(CONTEXT)] }, { role: 'assistant', content: [text(ACK)] }, ...messages],
		tools: [
			{ name: READ.name, description: READ.description, input_schema: READ.parameters },
			{ name: SHELL.name, description: SHELL.description, input_schema: SHELL.parameters, cache_control: EPHEMERAL },
		],
		max_tokens: maxTokens,
		temperature: 1,
		thinking: { type: 'enabled', budget_tokens: 32000 },
		stream: true,
	})
	type Event = { type: string; [k: string]: any }
	const post = (acct: Account, b: unknown) => fetch(`${m.app.url}/v1/messages`, { method: 'POST', headers: headers(acct.key), body: JSON.stringify(b) })
	const turn = async (acct: Account, b: unknown) => {
		const res = await post(acct, b)
		expect(res.status).toBe(200)
		const events = sseFrames(await res.text()).map((f) => JSON.parse(f.data) as Event)
		// Replayed as its Anthropic SDK stream gives the blocks back.
		const { content, stop } = messageBlocks(events)
		return { content, stop }
	}
	const user = { role: 'user', content: [{ ...text(ASK), cache_control: EPHEMERAL }] }

	it('should pass Claude its 400 for the 32000 thinking budget under max_tokens 8000, as Anthropic answers it', async () => {
		const acct = await m.account()
		const res = await post(acct, body(CLAUDE, [user]))
		// Qwen Code shows `[API Error: 400 {"type":"error",…}]`: Anthropic itself refuses what it sends by default.
		expect(res.status).toBe(400)
		const err = (await res.json()) as { type: string; error: { type: string; message: string } }
		expect([err.type, err.error.type]).toEqual(['error', 'invalid_request_error'])
		expect(err.error.message).toStartWith('`max_tokens` must be greater than `thinking.budget_tokens`')
	})

	// Claude with QWEN_CODE_MAX_OUTPUT_TOKENS=64000; GPT and Gemini with the budget fitted under its 8000.
	for (const [model, maxTokens] of [[CLAUDE, 64000], [GPT, 8000], [GEMINI, 8000]] as const)
		it(`should round-trip its thinking and read_file call (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, body(model, [user], maxTokens))
			expect(first.stop).toBe('tool_use')
			const types = first.content.map((b) => b.type)
			expect(types.at(-1)).toBe('tool_use')
			if (model !== GPT) expect(types[0]).toBe('thinking')
			const call = first.content.at(-1)
			expect([call.name, call.input]).toEqual(['read_file', { file_path: FILE }])
			const second = await turn(
				acct,
				body(model, [user, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: READ_OUT }] }], maxTokens),
			)
			expect([second.content.find((b) => b.type === 'text')?.text, second.stop]).toEqual([`Tool results: ${READ_OUT}`, 'end_turn'])
			if (model === CLAUDE) expect(lastRequest(m.mocks.anthropic).headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
		})
})

describe('Qwen Code through Gemini (--auth-type gemini, GOOGLE_GEMINI_BASE_URL={root})', () => {
	const headers = (key: string) => ({ 'content-type': 'application/json', 'x-goog-api-key': key, 'user-agent': UA, 'x-goog-api-client': 'google-genai-sdk/1.30.0 gl-node/v20.20.2' })
	const body = (contents: unknown[]) => ({
		contents: [{ role: 'user', parts: [{ text: CONTEXT }] }, { role: 'model', parts: [{ text: ACK }] }, ...contents],
		systemInstruction: { parts: [{ text: SYSTEM }], role: 'user' },
		tools: [{ functionDeclarations: [READ, SHELL].map((f) => ({ name: f.name, description: f.description, parametersJsonSchema: f.parameters })) }],
		generationConfig: { temperature: 1, topP: 0.95, topK: 64, thinkingConfig: { includeThoughts: true, thinkingLevel: 'THINKING_LEVEL_UNSPECIFIED' } },
	})
	const turn = async (acct: Account, model: string, b: unknown) => {
		const res = await fetch(`${m.app.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`, { method: 'POST', headers: headers(acct.key), body: JSON.stringify(b) })
		expect(res.status).toBe(200)
		const chunks = sseFrames(await res.text()).map((f) => JSON.parse(f.data))
		return { parts: chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []) as any[], usage: chunks.at(-1).usageMetadata }
	}
	const user = { role: 'user', parts: [{ text: ASK }] }

	for (const model of [CLAUDE, GEMINI])
		it(`should take its unspecified thinking level and round-trip the read_file call (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, model, body([user]))
			const call = first.parts.find((p) => p.functionCall)
			expect([call.functionCall.name, call.functionCall.args]).toEqual(['read_file', { file_path: FILE }])
			expect(first.parts[0].thought).toBe(true)
			if (model === GEMINI) expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true })
			// Its history keeps the thought parts it was given (text and signature) and the call, then the response by id.
			const replay = { role: 'model', parts: first.parts.filter((p) => p.thought || p.functionCall) }
			const result = { role: 'user', parts: [{ functionResponse: { id: call.functionCall.id, name: 'read_file', response: { output: READ_OUT } } }] }
			const second = await turn(acct, model, body([user, replay, result]))
			expect(second.parts.filter((p) => !p.thought).map((p) => p.text).join('')).toBe(`Tool results: ${READ_OUT}`)
			expect(second.usage.promptTokenCount).toBeGreaterThan(0)
		})
})

describe('the errors Qwen Code shows', () => {
	it('should refuse a model the key may not use (403) and an empty balance (402) with the message it prints', async () => {
		const limited = await m.account()
		expect((await m.app.admin(`/api/tokens/${limited.tokenId}`, { method: 'PATCH', body: { allowed_models: [GPT] } })).status).toBe(200)
		const empty = await m.account(0)
		// It prints `[API Error: <status> <message>]` from the SDK's error, and does not retry either.
		const said = async (acct: Account, model: string) => {
			const e = (await acct.openai.chat.completions
				.create({ model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: [text('hi')] }] as never, max_tokens: 8000, stream: true, stream_options: { include_usage: true } })
				.catch((x) => x)) as { status: number; error: { message: string } }
			return [e.status, e.error.message]
		}
		expect(await said(limited, CLAUDE)).toEqual([403, `This API key may not use model "${CLAUDE}"`])
		const [status, message] = await said(empty, GPT)
		expect(status).toBe(402)
		expect(message).toStartWith('account balance exhausted: this request needs at least $')
	})
})
