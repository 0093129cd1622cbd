/**
 * GitHub Copilot CLI 1.0.102 (`@github/copilot`, `copilot -p … --allow-all-tools`) as it ran against the gateway with a
 * custom provider (BYOK: `COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_API_KEY`, `COPILOT_MODEL`, `COPILOT_OFFLINE=true`),
 * recorded between the CLI and the gateway, in its three wire formats. `COPILOT_PROVIDER_TYPE=openai` (the `openai` SDK
 * 5.20.1's stream helper, `{root}/v1`): `POST /v1/chat/completions` with `reasoning_effort: medium` and `temperature: 1`
 * for every model, `max_tokens` only for names its catalog knows, `tool_choice: "validated"` (Gemini's mode) for
 * `gemini-…` names, a freeform `apply_patch` (custom tool) for `gpt-…` names and `view`/`edit` for the others; it replays
 * a call with the `reasoning_details` it was streamed (the signature beside an empty text) and the whole
 * `reasoning_content`, and compacts with `tool_choice: none`. `COPILOT_PROVIDER_TYPE=anthropic` (`@anthropic-ai/sdk`
 * 0.94.0, `{root}`): `/v1/messages` with two system blocks, `thinking: {type: adaptive, display: summarized}` and
 * `output_config.effort` for `claude-…` names (with breakpoints), `{type: enabled, budget_tokens: 2048, display}` for
 * others. `COPILOT_PROVIDER_WIRE_API=responses`: `/v1/responses`, `store: false`, reasoning replayed as
 * `encrypted_content`. Tool descriptions and the system prompt are shortened; the shapes are as sent. The CLI itself
 * (a native binary from npm) is not a dependency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { ResponseStreamEvent } from 'openai/resources/responses/responses'
import { chat, messages } from './clients'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrix, usageRows } from './harness'
import { checkResponsesEvents } from './wire-checks'

/** A model of Copilot's catalog (it sends `max_tokens: 128000` and the freeform `apply_patch`), served by an OpenAI channel. */
const GPT = 'gpt-5.4'
const CLAUDE = MODEL.anthropic
const GEMINI = MODEL.gemini
/** A Gemini name served by an `openai` channel (an OpenAI-compatible endpoint serving Gemini, on the fast path). */
const GEMINI_COMPAT = 'gemini-compat'
let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [
			{ name: GPT, input_per_mtok: 1.25, output_per_mtok: 10 },
			{ name: GEMINI_COMPAT, input_per_mtok: 0.3, output_per_mtok: 2.5 },
		],
		channels: (mocks) => [
			{ name: 'ch-gpt-5-4', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [GPT] },
			{ name: 'ch-gemini-compat', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [GEMINI_COMPAT], model_map: { [GEMINI_COMPAT]: 'gemini-2.5-flash' } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

const STAINLESS = { 'x-stainless-helper-method': 'stream', 'x-stainless-lang': 'js', 'x-stainless-os': 'Linux', 'x-stainless-runtime': 'node', 'x-stainless-timeout': '600' }
/** A user turn's headers (the follow-up after a tool result says `x-initiator: agent` and no interaction type). */
const HEADERS = { ...STAINLESS, 'x-initiator': 'user', 'x-interaction-type': 'conversation-user' }
const SYSTEM = 'You are the GitHub Copilot CLI, a terminal assistant built by GitHub. You are running in non-interactive mode and have no way to communicate with the user.'
const VERSION = '<version_information>Version number: 1.0.102</version_information>'
const FILE = '/tmp/ws/notes.txt'
const ASK = `<current_datetime>2026-11-30T05:36:52.441+00:00</current_datetime>\n\n#call view {"path":"${FILE}"}`
const READ_OUT = 'hello\n'

const VIEW = {
	name: 'view',
	description: 'View files, images, or directories.',
	parameters: {
		type: 'object',
		properties: {
			path: { type: 'string', description: "Existing file or directory's absolute path." },
			view_range: { type: 'array', items: { type: 'integer' }, description: 'Optional 1-based inclusive line range.' },
			forceReadLargeFiles: { type: 'boolean', description: 'Read an entire large file despite the size limit; default false.' },
		},
		required: ['path'],
	},
}
const EDIT = {
	name: 'edit',
	description: 'Tool for making string replacements in files.',
	parameters: {
		type: 'object',
		properties: { path: { type: 'string', description: 'Full absolute path to file to edit.' }, old_str: { type: 'string' }, new_str: { type: 'string' } },
		required: ['path'],
	},
}
const BASH = {
	name: 'bash',
	description: 'Runs a Bash command.',
	parameters: {
		type: 'object',
		properties: { command: { type: 'string' }, description: { type: 'string' }, mode: { type: 'string', enum: ['sync', 'async'] }, initial_wait: { type: 'number' } },
		required: ['command', 'description'],
	},
}
const PATCH_GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\nhunk: /(.|\\n)+/\n%import common.LF'
const PATCH_DESCRIPTION = 'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.'

/** Its tools by model name: `gpt-…` names edit with the freeform `apply_patch`, the others with `edit`. */
const functions = (model: string) => (model.startsWith('gpt-') ? [BASH, VIEW] : [BASH, VIEW, EDIT])

describe('Copilot CLI through /v1/chat/completions (COPILOT_PROVIDER_TYPE=openai)', () => {
	const tools = (model: string) => [
		...functions(model).map((f) => ({ type: 'function', function: f })),
		...(model.startsWith('gpt-') ? [{ type: 'custom', custom: { name: 'apply_patch', description: PATCH_DESCRIPTION, format: { type: 'grammar', grammar: { syntax: 'lark', definition: PATCH_GRAMMAR } } } }] : []),
	]
	const body = (model: string, history: unknown[], extra: Record<string, unknown> = {}) => ({
		model,
		messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: ASK }, ...history],
		reasoning_effort: 'medium',
		temperature: 1,
		...(model === GPT && { max_tokens: 128000 }),
		tools: tools(model),
		...(model.startsWith('gemini-') && { tool_choice: 'validated' }),
		...extra,
	})
	const turn = (acct: Account, b: unknown, headers: Record<string, string> = HEADERS) => chat(acct.openai, b as never, true, { headers })
	/** The assistant message it sends back: what it was streamed, accumulated (`reasoning_details` as they came). */
	const replayed = (first: Awaited<ReturnType<typeof turn>>) => {
		const [call] = first.calls
		return {
			...(first.signatures.length && { reasoning_details: first.signatures.map((signature) => ({ type: 'reasoning.text', text: '', signature })) }),
			role: 'assistant',
			content: null,
			refusal: null,
			tool_calls: [{ id: call!.id, type: 'function', function: { name: call!.name, arguments: JSON.stringify(call!.args) } }],
			reasoning_content: first.reasoning,
		}
	}

	for (const model of [GPT, CLAUDE, GEMINI])
		it(`should stream its view call with thinking and usage, and take the call back with its result (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, body(model, []))
			const [call] = first.calls
			expect([call?.name, call?.args, first.stop]).toEqual(['view', { path: FILE }, 'tool_calls'])
			expect(first.reasoning).toBe(`Let me think about ${ASK}.`)
			// What it shows as `Tokens ↑ 3.2k • ↓ 13 (7 reasoning)`.
			expect(first.usage.input).toBeGreaterThan(0)
			expect(first.usage.reasoning).toBeGreaterThan(0)
			if (model === CLAUDE) {
				// The signature rides alone in `reasoning_details` (the text went as `reasoning_content`), as the CLI replays it.
				const details = first.events!.flatMap((c) => ((c.choices[0]?.delta as { reasoning_details?: unknown[] } | undefined)?.reasoning_details ?? []))
				expect(details).toEqual([{ type: 'reasoning.text', text: '', signature: first.signatures[0] }])
			}
			// Its `validated` is Gemini's own mode.
			if (model === GEMINI) expect(lastRequest(m.mocks.gemini).body.toolConfig).toEqual({ functionCallingConfig: { mode: 'VALIDATED' } })
			const second = await turn(acct, body(model, [replayed(first), { role: 'tool', tool_call_id: call!.id, content: READ_OUT }]), { ...STAINLESS, 'x-initiator': 'agent' })
			expect([second.text, second.stop]).toEqual([`Tool results: ${READ_OUT}`, 'stop'])
			if (model === CLAUDE) {
				const upstream = lastRequest(m.mocks.anthropic).body.messages.at(-2).content
				expect(upstream.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
				expect(upstream[0].signature).toBe(first.signatures[0])
			}
			expect((await usageRows(m, acct.accountId)).map((r) => [r.model, r.endpoint, r.stream, r.status])).toEqual([
				[model, '/v1/chat/completions', true, 200],
				[model, '/v1/chat/completions', true, 200],
			])
		})

	it("should send its tool_choice 'validated' to an OpenAI-compatible upstream as auto", async () => {
		const acct = await m.account()
		const first = await turn(acct, body(GEMINI_COMPAT, []))
		expect(first.calls[0]?.name).toBe('view')
		// OpenAI's values are auto, none, required and objects: `validated` is Gemini's.
		expect([lastRequest(m.mocks.openai).body.model, lastRequest(m.mocks.openai).body.tool_choice]).toEqual(['gemini-2.5-flash', 'auto'])
	})

	// `x-interaction-type: conversation-compaction`: the history so far, then its summary prompt, tools offered but not callable.
	for (const model of [CLAUDE, GEMINI])
		it(`should answer its compaction request, tool_choice none beside the thinking it asks for (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, body(model, []))
			const summarize = { role: 'user', content: 'Please create a detailed summary of the conversation so far. The history is being compacted.' }
			const history = [replayed(first), { role: 'tool', tool_call_id: first.calls[0]!.id, content: READ_OUT }, summarize]
			const compacted = await turn(acct, body(model, history, { tool_choice: 'none' }), { ...STAINLESS, 'x-interaction-type': 'conversation-compaction' })
			expect([compacted.calls, compacted.stop]).toEqual([[], 'stop'])
			expect(compacted.text.length).toBeGreaterThan(0)
			if (model === CLAUDE) expect([lastRequest(m.mocks.anthropic).body.tool_choice, lastRequest(m.mocks.anthropic).body.thinking?.type]).toEqual([{ type: 'none' }, 'enabled'])
			else expect(lastRequest(m.mocks.gemini).body.toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } })
		})
})

describe('Copilot CLI through /v1/messages (COPILOT_PROVIDER_TYPE=anthropic, base URL {root})', () => {
	const EPHEMERAL = { type: 'ephemeral' }
	// The SDK 0.94.0 it bundles sends the first API version, under which Claude still takes `temperature`.
	const client = (acct: Account) =>
		new Anthropic({ apiKey: acct.key, baseURL: m.app.url, maxRetries: 0, defaultHeaders: { ...HEADERS, 'anthropic-version': '2023-06-01', 'user-agent': 'Anthropic/JS 0.94.0' } })
	const MAX: Record<string, number> = { [GPT]: 128000, [CLAUDE]: 32000, [GEMINI]: 8192 }
	const body = (model: string, history: unknown[], ask = ASK) => {
		const claude = model.startsWith('claude-')
		// Breakpoints on both system blocks and the last user block, for Claude names only.
		const cc = claude ? { cache_control: EPHEMERAL } : {}
		const last = history.length ? [] : [{ role: 'user', content: [{ type: 'text', text: ask, ...cc }] }]
		return {
			model,
			max_tokens: MAX[model],
			system: [
				{ type: 'text', text: SYSTEM, ...cc },
				{ type: 'text', text: VERSION, ...cc },
			],
			messages: [...(history.length ? [{ role: 'user', content: [{ type: 'text', text: ask }] }] : last), ...history],
			tools: [
				...functions(model).map((f) => ({ name: f.name, description: f.description, input_schema: f.parameters })),
				// Its freeform apply_patch, as a tool taking the patch as `input`.
				...(model.startsWith('gpt-') ? [{ name: 'apply_patch', description: PATCH_DESCRIPTION, input_schema: { type: 'object', properties: { input: { type: 'string', description: 'The tool input' } }, required: ['input'] } }] : []),
			],
			...(model.startsWith('gemini-') && { tool_choice: { type: 'auto' } }),
			temperature: 1,
			thinking: claude ? { type: 'adaptive', display: 'summarized' } : { type: 'enabled', budget_tokens: 2048, display: 'summarized' },
			...(claude && { output_config: { effort: 'medium' } }),
		}
	}

	for (const model of [GPT, CLAUDE, GEMINI])
		it(`should round-trip its thinking and view call (${model})`, async () => {
			const acct = await m.account()
			const first = await messages(client(acct), body(model, []) as never, true)
			expect(first.stop).toBe('tool_use')
			expect(first.reasoning).toBe(`Let me think about ${ASK}.`)
			const [call] = first.calls
			expect([call?.name, call?.args]).toEqual(['view', { path: FILE }])
			// It keeps the blocks as streamed (thinking with its signature, then the call) and answers the call.
			const cc = model.startsWith('claude-') ? { cache_control: EPHEMERAL } : {}
			const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.id, content: READ_OUT, ...cc }] }
			const second = await messages(client(acct), body(model, [first.replay, result]) as never, true)
			expect([second.text, second.stop]).toEqual([`Tool results: ${READ_OUT}`, 'end_turn'])
			if (model === CLAUDE) expect(lastRequest(m.mocks.anthropic).body.messages.at(-2).content[0].signature).toBe(first.signatures[0])
		})

	it(`should carry its apply_patch call and result to and from an OpenAI model (${GPT})`, async () => {
		const acct = await m.account()
		const patch = '*** Begin Patch\n*** Add File: /tmp/ws/new.txt\n+made by patch\n*** End Patch\n'
		const ask = `#call apply_patch ${JSON.stringify({ input: patch })}`
		const first = await messages(client(acct), body(GPT, [], ask) as never, true)
		const [call] = first.calls
		expect([call?.name, call?.args]).toEqual(['apply_patch', { input: patch }])
		const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.id, content: 'Added 1 file(s): /tmp/ws/new.txt' }] }
		const second = await messages(client(acct), body(GPT, [first.replay, result], ask) as never, true)
		expect(second.text).toBe('Tool results: Added 1 file(s): /tmp/ws/new.txt')
		// OpenAI got it as the function tool it was given, not a custom one.
		expect(lastRequest(m.mocks.openai).body.tools.find((t: { function?: { name: string } }) => t.function?.name === 'apply_patch')?.type).toBe('function')
	})
})

describe('Copilot CLI through /v1/responses (COPILOT_PROVIDER_WIRE_API=responses)', () => {
	const client = (acct: Account) => new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0, defaultHeaders: HEADERS })
	const body = (model: string, history: unknown[]) => ({
		model,
		instructions: SYSTEM,
		input: [{ role: 'user', content: [{ type: 'input_text', text: ASK }], type: 'message' }, ...history],
		tools: [
			...functions(model).map((f) => ({ ...f, strict: false, type: 'function' })),
			...(model.startsWith('gpt-') ? [{ name: 'apply_patch', description: PATCH_DESCRIPTION, type: 'custom', format: { type: 'grammar', syntax: 'lark', definition: PATCH_GRAMMAR } }] : []),
		],
		reasoning: { effort: 'medium', summary: 'auto' },
		prompt_cache_key: '53a600b2d7aa00499c1f6b335ac1369e',
		...(model === GPT && { max_output_tokens: 128000 }),
		store: false,
		include: ['reasoning.encrypted_content'],
		parallel_tool_calls: true,
	})
	const turn = async (acct: Account, b: unknown) => {
		const s = client(acct).responses.stream(b as never)
		const events: ResponseStreamEvent[] = []
		s.on('event', (e) => events.push(e))
		const final = await s.finalResponse()
		checkResponsesEvents(events, { final })
		return final
	}

	for (const model of [GPT, CLAUDE, GEMINI])
		it(`should replay its reasoning item and call by their ids (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, body(model, []))
			const reasoning = first.output.find((o) => o.type === 'reasoning')
			const call = first.output.find((o) => o.type === 'function_call')
			expect([call?.name, call && JSON.parse(call.arguments)]).toEqual(['view', { path: FILE }])
			expect(reasoning?.summary.map((s) => s.text)).toEqual([`Let me think about ${ASK}.`])
			expect(first.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0)
			// Replayed as the CLI sends them: the reasoning item's id, summary and encrypted content; the call with its status.
			const history = [
				{ id: reasoning!.id, type: 'reasoning', summary: reasoning!.summary, encrypted_content: reasoning!.encrypted_content },
				{ type: 'function_call', id: call!.id, name: call!.name, arguments: call!.arguments, call_id: call!.call_id, status: 'completed' },
				{ type: 'function_call_output', call_id: call!.call_id, output: READ_OUT },
			]
			const second = await turn(acct, body(model, history))
			expect(second.output_text).toBe(`Tool results: ${READ_OUT}`)
			if (model === CLAUDE) expect(lastRequest(m.mocks.anthropic).body.messages.at(-2).content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
		})
})

describe('the errors Copilot CLI shows', () => {
	const ask = (acct: Account, model: string) =>
		acct.openai.chat.completions
			.create({ model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'hi' }], reasoning_effort: 'medium', temperature: 1, stream: true, stream_options: { include_usage: true } } as never)
			.then(
				() => undefined,
				(e: { status: number; error: { message: string; code: string } }) => [e.status, e.error.code, e.error.message],
			)

	it('should answer a bad key 401, an unknown model 404, a model the key may not use 403 and an empty balance 402', async () => {
		// It retries a 401 twice, then prints "Authentication failed with provider at {base} (HTTP 401)", as it does for the
		// 403; "Model '…' not found on provider" for the 404; and `402 <message>` for the balance.
		const acct = await m.account()
		const bad = new OpenAI({ apiKey: 'sk-not-a-key', baseURL: `${m.app.url}/v1`, maxRetries: 0 })
		expect(await ask({ ...acct, openai: bad }, CLAUDE)).toEqual([401, 'invalid_api_key', 'Invalid API key'])
		expect(await ask(acct, 'nope-model')).toEqual([404, 'model_not_found', 'The model "nope-model" does not exist or is not served here'])
		const limited = await m.account()
		expect((await m.app.admin(`/api/tokens/${limited.tokenId}`, { method: 'PATCH', body: { allowed_models: [GPT] } })).status).toBe(200)
		expect(await ask(limited, CLAUDE)).toEqual([403, 'model_not_allowed', `This API key may not use model "${CLAUDE}"`])
		const [status, code, message] = (await ask(await m.account(0), CLAUDE))!
		expect([status, code]).toEqual([402, 'insufficient_quota'])
		expect(message).toStartWith('account balance exhausted: this request needs at least $')
	})

	it("should pass an upstream's 429 on with its retry-after (the CLI retries it five times, then prints the message)", async () => {
		const acct = await m.account()
		m.mocks.anthropic.faultOnce = { kind: 'status', status: 429, retryAfter: 1 }
		type Refusal = { status: number; headers: Headers; error: { message: string } }
		const e = (await acct.openai.chat.completions
			.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'medium', temperature: 1, stream: true, stream_options: { include_usage: true } } as never)
			.catch((x: Refusal) => x)) as Refusal
		expect([e.status, e.headers.get('retry-after')]).toEqual([429, '1'])
		expect(e.error.message).toBe('the upstream provider is rate limiting requests for this model; retry after a short wait')
	})
})
