/**
 * The Cline CLI 3.0.65 (npm `cline`, `cline --json -P <provider> -m <model> "…"`) as it ran against the gateway,
 * recorded between the CLI and the gateway. It is built on `@cline/llms` over the AI SDK and calls tools natively (no
 * XML in text; a model its catalog says cannot call tools gets none). Provider `openai` (`openai-compatible`,
 * `cline auth -p openai -b {root}/v1`): `POST /v1/chat/completions` through `@ai-sdk/openai-compatible`, streamed
 * with `stream_options.include_usage`, the system prompt and user text as strings, no `max_tokens`, no `temperature`,
 * `tool_choice: "auto"`, `--thinking <level>` as `reasoning_effort`; a tool call replayed with `content: null` (and
 * `reasoning_content` after thinking, never a signature), results as a string, an image a tool read as a JSON string
 * of parts plus a user message of the image; no `cache_control`. Provider `anthropic` (`baseUrl: {root}/v1` in its
 * `providers.json`: `@ai-sdk/anthropic` appends `/messages`): `/v1/messages` with `anthropic-beta:
 * structured-outputs-2025-11-13`, the system as one text block, a breakpoint on the first user text, every tool with
 * `eager_input_streaming` and Anthropic's `web_search_20250305` before them, `max_tokens` 38400 for Claude Sonnet 4.6
 * (4096 for names its catalog lacks), `--thinking` as adaptive thinking with `display: "summarized"` and
 * `output_config.effort` for Claude 4.6, `enabled` with a budget for other names. Its cost display reads the usage:
 * `prompt_tokens_details.cached_tokens`, Anthropic's cache fields. Tool descriptions and the system prompt are
 * shortened; the shapes are as sent. The CLI itself is not a dependency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chat } from './clients'
import { type Account, GEMINI_3, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithAgentModels, usageRows } from './harness'
import { checkMessageEvents, messageBlocks, sseFrames } from './wire-checks'

/** OpenAI's model on a channel with the Responses API (OpenAI's own has it), where a converted web search goes. */
const GPT = 'gpt-5.5'
const CLAUDE = MODEL.anthropic
const GEMINI = MODEL.gemini
let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithAgentModels(GPT, { responses_api: true })
}, SETUP_MS)
afterAll(() => m.close())

const SYSTEM =
	'You are Cline, an AI coding agent. Your primary goal is to assist users with various coding tasks by leveraging your knowledge and the tools at your disposal.'
const FILE = '/tmp/ws/hello.txt'
const ASK = `#call read_files {"files":[{"path":"${FILE}"}]}`
const RESULT = JSON.stringify([{ query: FILE, result: '1 | hello from file', success: true }])
/** Its optional line bounds: a nullable integer (`anyOf` with null, `exclusiveMinimum`), which Gemini's schema subset lacks. */
const line = (which: string) => ({
	description: `Optional one-based ${which} line number; use null or omit`,
	anyOf: [{ type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991 }, { type: 'null' }],
})
const READ = {
	name: 'read_files',
	description: 'Read the content of text or image files at the provided absolute paths.',
	parameters: {
		type: 'object',
		properties: {
			files: {
				type: 'array',
				items: {
					type: 'object',
					properties: { path: { type: 'string', description: 'The absolute path of a text file to read content from' }, start_line: line('starting'), end_line: line('ending') },
					required: ['path'],
					additionalProperties: false,
				},
				description: 'Array of file read requests; each element is one file and must include path.',
			},
		},
		required: ['files'],
		additionalProperties: false,
	},
}
/** What Claude and Gemini get to edit with (GPT gets `apply_patch` instead). */
const EDITOR = {
	name: 'editor',
	description: 'An editor for controlled filesystem edits on the text file at the provided path.',
	parameters: {
		type: 'object',
		properties: {
			path: { type: 'string', minLength: 1, description: 'The absolute path for the action to be performed on' },
			old_text: { description: 'Exact text to replace (must match exactly once).', anyOf: [{ type: 'string' }, { type: 'null' }] },
			new_text: { type: 'string', description: 'The new content to write.' },
			insert_line: {
				description: 'Optional positive one-based boundary line.',
				anyOf: [{ type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }, { type: 'null' }],
			},
		},
		required: ['path', 'new_text'],
		additionalProperties: false,
	},
}
const APPLY_PATCH = {
	name: 'apply_patch',
	description: 'Modify or create a text file by applying patches using the canonical apply_patch diff grammar.',
	parameters: {
		type: 'object',
		properties: { input: { type: 'string', minLength: 1, description: 'The freeform apply_patch payload.' } },
		required: ['input'],
		additionalProperties: false,
	},
}
const toolsFor = (model: string) => [READ, model === GPT ? APPLY_PATCH : EDITOR]

describe('Cline CLI through its openai provider (/v1/chat/completions)', () => {
	const UA = 'ai-sdk/openai-compatible/3.0.37 ai-sdk/provider-utils/5.0.30 runtime/bun/1.3.13'
	const body = (model: string, messages: unknown[], extra: Record<string, unknown> = {}) => ({
		model,
		messages: [{ role: 'system', content: SYSTEM }, ...messages],
		tools: toolsFor(model).map((f) => ({ type: 'function', function: f })),
		tool_choice: 'auto',
		...extra,
	})
	const turn = (acct: Account, b: unknown) => chat(acct.openai, b as never, true, { headers: { 'user-agent': UA } })
	const user = { role: 'user', content: ASK }
	const replayed = (id: string, extra: Record<string, unknown> = {}) => ({
		role: 'assistant',
		content: null,
		...extra,
		tool_calls: [{ id, type: 'function', function: { name: 'read_files', arguments: JSON.stringify({ files: [{ path: FILE }] }) } }],
	})

	for (const model of [GPT, CLAUDE, GEMINI, GEMINI_3])
		it(`should stream its read_files call with usage and take the call back with its result as a string (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, body(model, [user]))
			const [call] = first.calls
			expect([call?.name, call?.args, first.stop]).toEqual(['read_files', { files: [{ path: FILE }] }, 'tool_calls'])
			expect(first.usage.input).toBeGreaterThan(0)
			const second = await turn(acct, body(model, [user, replayed(call!.id), { role: 'tool', tool_call_id: call!.id, content: RESULT }]))
			expect([second.text, second.stop]).toEqual([`Tool results: ${RESULT}`, 'stop'])
			expect((await usageRows(m, acct.accountId)).map((r) => [r.model, r.endpoint, r.status])).toEqual([
				[model, '/v1/chat/completions', 200],
				[model, '/v1/chat/completions', 200],
			])
		})

	// `--thinking high`: Cline shows the streamed reasoning_content, and replays the call with it but without signature.
	for (const model of [CLAUDE, GEMINI])
		it(`should stream thinking for its reasoning_effort and keep thinking on when the call comes back without its signature (${model})`, async () => {
			const acct = await m.account()
			const effort = { reasoning_effort: 'high' }
			const first = await turn(acct, body(model, [user], effort))
			expect(first.reasoning).toBe(`Let me think about ${ASK}.`)
			const [call] = first.calls
			const back = [user, replayed(call!.id, { reasoning_content: first.reasoning }), { role: 'tool', tool_call_id: call!.id, content: RESULT }]
			const second = await turn(acct, body(model, back, effort))
			expect(second.text).toBe(`Tool results: ${RESULT}`)
			if (model === CLAUDE) {
				const sent = lastRequest(m.mocks.anthropic).body
				expect([sent.thinking.type, sent.messages.at(-2).content.map((b: { type: string }) => b.type)]).toEqual(['enabled', ['thinking', 'tool_use']])
			}
		})

	it("should send GPT its reasoning_effort as written and show the cached tokens Cline's usage reads", async () => {
		const acct = await m.account()
		const first = await turn(acct, body(GPT, [{ role: 'user', content: 'Say hello #cache' }], { reasoning_effort: 'high' }))
		expect(lastRequest(m.mocks.openai).body.reasoning_effort).toBe('high')
		for (const model of [CLAUDE, GEMINI]) expect((await turn(acct, body(model, [{ role: 'user', content: 'Say hello #cache' }]))).usage.cached).toBe(10)
		expect(first.usage.cached).toBe(10)
	})

	it('should give Claude the image read_files returned, in the tool result turn, from the user message after it', async () => {
		const acct = await m.account()
		const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
		const first = await turn(acct, body(CLAUDE, [{ role: 'user', content: `#call read_files {"files":[{"path":"/tmp/ws/dot.png"}]}` }]))
		const id = first.calls[0]!.id
		const out = JSON.stringify([
			{ type: 'text', text: JSON.stringify([{ query: '/tmp/ws/dot.png', result: ['Successfully read image'], success: true }]) },
			{ type: 'text', text: '(see following user message for image)' },
		])
		const second = await turn(
			acct,
			body(CLAUDE, [
				{ role: 'user', content: `#call read_files {"files":[{"path":"/tmp/ws/dot.png"}]}` },
				{ role: 'assistant', content: null, tool_calls: first.replay.tool_calls },
				{ role: 'tool', tool_call_id: id, content: out },
				{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
			]),
		)
		expect(second.text).toStartWith('Tool results: ')
		const last = lastRequest(m.mocks.anthropic).body.messages.at(-1)
		expect(last.content.map((b: { type: string }) => b.type)).toEqual(['tool_result', 'image'])
	})

	it('should answer a wrong key, an empty balance and an unknown model with the message Cline prints, at once', async () => {
		const empty = await m.account(0)
		const said = async (key: string, model: string) => {
			const res = await fetch(`${m.app.url}/v1/chat/completions`, {
				method: 'POST',
				headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': UA },
				body: JSON.stringify({ ...body(model, [{ role: 'user', content: 'Say hello' }]), stream: true, stream_options: { include_usage: true } }),
			})
			return [res.status, ((await res.json()) as { error: { message: string } }).error.message]
		}
		expect(await said('sk-not-a-real-key', CLAUDE)).toEqual([401, 'Invalid API key'])
		const [status, message] = await said(empty.key, CLAUDE)
		expect([status, message]).toEqual([402, expect.stringMatching(/^account balance exhausted: this request needs at least \$/)])
		expect(await said((await m.account()).key, 'claude-nope-9')).toEqual([404, 'The model "claude-nope-9" does not exist or is not served here'])
	})
})

describe('Cline CLI through its anthropic provider (/v1/messages, baseUrl {root}/v1)', () => {
	const EPHEMERAL = { type: 'ephemeral' }
	const headers = (key: string) => ({
		'content-type': 'application/json',
		'anthropic-version': '2023-06-01',
		'anthropic-beta': 'structured-outputs-2025-11-13',
		'x-api-key': key,
		'user-agent': 'ai-sdk/anthropic/4.0.42 ai-sdk/provider-utils/5.0.30 runtime/bun/1.3.13',
	})
	const body = (model: string, messages: unknown[], extra: Record<string, unknown> = {}) => ({
		model,
		max_tokens: model === CLAUDE ? 38400 : 4096,
		system: [{ type: 'text', text: SYSTEM }],
		messages,
		tools: [
			{ type: 'web_search_20250305', name: 'web_search' },
			...toolsFor(model).map((f) => ({ name: f.name, description: f.description, input_schema: f.parameters, eager_input_streaming: true })),
		],
		tool_choice: { type: 'auto' },
		stream: true,
		...extra,
	})
	type Event = { type: string; [k: string]: any }
	const post = (acct: Account, b: unknown) => fetch(`${m.app.url}/v1/messages`, { method: 'POST', headers: headers(acct.key), body: JSON.stringify(b) })
	const turn = async (acct: Account, model: string, b: unknown) => {
		const res = await post(acct, b)
		expect(res.status).toBe(200)
		const events = sseFrames(await res.text()).map((f) => JSON.parse(f.data) as Event)
		checkMessageEvents(events as never, model)
		return messageBlocks(events)
	}
	const user = { role: 'user', content: [{ type: 'text', text: ASK, cache_control: EPHEMERAL }] }
	/** Cline's replay of the call: the tool_use alone (`@ai-sdk/anthropic` drops the thinking Cline kept without its signature). */
	const followUp = (call: { id: string; input: unknown }) => [
		user,
		{ role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'read_files', input: call.input }] },
		{ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: RESULT }] },
	]

	for (const model of [CLAUDE, GEMINI, GEMINI_3, GPT])
		it(`should round-trip its read_files call beside the web search tool it always offers (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, model, body(model, [user]))
			const call = first.content.at(-1)
			expect([call.type, call.name, call.input, first.stop]).toEqual(['tool_use', 'read_files', { files: [{ path: FILE }] }, 'tool_use'])
			const second = await turn(acct, model, body(model, followUp(call)))
			expect([second.content.find((b) => b.type === 'text')?.text, second.stop]).toEqual([`Tool results: ${RESULT}`, 'end_turn'])
			if (model === CLAUDE) expect(lastRequest(m.mocks.anthropic).body.messages[0].content[0].cache_control).toEqual(EPHEMERAL)
			// GPT searches through OpenAI's Responses API (chat has no search for it), with Cline's tools beside the search.
			if (model === GPT) {
				const sent = lastRequest(m.mocks.openai)
				expect([sent.path, sent.body.tools.map((t: { type: string }) => t.type).sort()]).toEqual(['/v1/responses', ['function', 'function', 'web_search']])
			}
		})

	it('should refuse the web search for a GPT model served only over chat completions, saying why (Cline prints the message)', async () => {
		const acct = await m.account()
		const res = await post(acct, body(MODEL.openai, [user]))
		expect(res.status).toBe(400)
		const err = (await res.json()) as { type: string; error: { type: string; message: string } }
		expect([err.type, err.error.type]).toEqual(['error', 'invalid_request_error'])
		expect(err.error.message).toStartWith(`web search: model "${MODEL.openai}" is served here by OpenAI Chat Completions`)
	})

	// Its cost display: (input − cache read − cache write) × input price + output + the cache fields at their prices.
	for (const model of [CLAUDE, GEMINI])
		it(`should report the cache reads and writes in the fields Cline prices (${model})`, async () => {
			const acct = await m.account()
			const read = await turn(acct, model, body(model, [{ role: 'user', content: [{ type: 'text', text: 'Say hello #cache', cache_control: EPHEMERAL }] }]))
			expect(read.usage.cache_read_input_tokens).toBe(10)
			const wrote = await turn(acct, model, body(model, [{ role: 'user', content: [{ type: 'text', text: 'Say hello #write-cache', cache_control: EPHEMERAL }] }]))
			// Only Anthropic reports writes (the others' are plain prompt tokens).
			expect(wrote.usage.cache_creation_input_tokens ?? 0).toBe(model === CLAUDE ? 10 : 0)
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => r.cached_tokens)).toEqual([10, 0])
			expect(read.usage.input_tokens + 10).toBe(rows[0]!.input_tokens)
		})

	it("should stream Claude's adaptive thinking, and pass Anthropic's 400 for Cline's replay without it", async () => {
		const acct = await m.account()
		const thinking = { thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'high' } }
		const first = await turn(acct, CLAUDE, body(CLAUDE, [user], thinking))
		expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
		expect(first.content[0].signature).toBeTruthy()
		// Cline 3.0.65 keeps the thinking's text but not its signature, so it is not sent back: Anthropic refuses the turn.
		const res = await post(acct, body(CLAUDE, followUp(first.content[1]), thinking))
		expect(res.status).toBe(400)
		const err = (await res.json()) as { error: { message: string } }
		expect(err.error.message).toStartWith('messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.')
	})

	it("should stream another vendor's thinking for its budget and take the replay without it (Gemini)", async () => {
		const acct = await m.account()
		const thinking = { max_tokens: 6554, thinking: { type: 'enabled', budget_tokens: 2458 } }
		const first = await turn(acct, GEMINI, body(GEMINI, [user], thinking))
		expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
		expect(lastRequest(m.mocks.gemini).body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 2458 })
		const second = await turn(acct, GEMINI, body(GEMINI, followUp(first.content[1]), thinking))
		expect(second.content.find((b) => b.type === 'text')?.text).toBe(`Tool results: ${RESULT}`)
	})

	it("should ask GPT for its reasoning without a summary, which Cline's budget form does not ask to see", async () => {
		const acct = await m.account()
		const first = await turn(acct, GPT, body(GPT, [user], { max_tokens: 6554, thinking: { type: 'enabled', budget_tokens: 2458 } }))
		expect(first.content.at(-1).name).toBe('read_files')
		// OpenAI's summaries need a verified organization (400 "Your organization must be verified to generate reasoning summaries").
		const sent = lastRequest(m.mocks.openai).body
		expect([sent.reasoning.effort, sent.reasoning.summary]).toEqual([expect.any(String), undefined])
	})

	it('should answer a wrong key, an empty balance and an unknown model in Anthropic error shape, with the message Cline prints', async () => {
		const empty = await m.account(0)
		const said = async (key: string, model: string) => {
			const res = await post({ key } as Account, body(model, [user]))
			const e = (await res.json()) as { type: string; error: { type: string; message: string } }
			expect(e.type).toBe('error')
			return [res.status, e.error.type, e.error.message]
		}
		expect(await said('sk-not-a-real-key', CLAUDE)).toEqual([401, 'authentication_error', 'Invalid API key'])
		expect(await said(empty.key, CLAUDE)).toEqual([402, 'billing_error', expect.stringMatching(/^account balance exhausted: this request needs at least \$/)])
		expect(await said((await m.account()).key, 'claude-nope-9')).toEqual([404, 'not_found_error', 'The model "claude-nope-9" does not exist or is not served here'])
	})
})
