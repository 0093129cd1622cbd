/**
 * opencode 1.18.33 as it ran against the gateway (`opencode run`, its build agent, recorded between the CLI and the
 * gateway), with the three providers of its opencode.json: `anthropic` (`@ai-sdk/anthropic`, `/v1/messages`), `openai`
 * (`@ai-sdk/openai`, the Responses API with `store: false`) and a custom `@ai-sdk/openai-compatible` one (Chat
 * Completions). Its tools' JSON Schema 2020-12 (`$schema`, integer bounds) with `eager_input_streaming` to Anthropic,
 * the `structured-outputs-2025-11-13` beta, `--variant high` as adaptive thinking, a reasoning effort or
 * `reasoning_effort`, its cache breakpoints (system and the last two messages, on their last part: a tool call when the
 * assistant turn has no text), a tool call and its result replayed, and the errors it shows (the message of the body).
 * Descriptions are shortened; the shapes are as sent. (opencode.test.ts has its reasoning models' `max_tokens`.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { Response as ResponsesResponse, ResponseStreamEvent } from 'openai/resources/responses/responses'
import { chat } from './clients'
import { MAX_INT, READ_SCHEMA, readOutput } from './opencode-tools'
import { type Account, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithCatalogModel, usageRows } from './harness'

/** A model of opencode's OpenAI catalog, served by an OpenAI channel under its name. */
const GPT = 'gpt-5.5'
const CLAUDE = MODEL.anthropic
let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithCatalogModel(GPT)
}, SETUP_MS)
afterAll(() => m.close())

const SID = 'ses_dd585284affeLOTcDv9AHsEumv'
/** Every request of a session carries these; the OpenAI provider adds `originator` and `session-id`. */
const SESSION = { 'x-session-affinity': SID, 'x-session-id': SID }
const AGENT = 'opencode/1.18.33 ai-sdk/provider-utils/4.0.46 runtime/bun/1.3.14'
const SYSTEM = 'You are OpenCode, the best coding agent on the planet.\n\nYou are an interactive CLI tool that helps users with software engineering tasks.'
const FILE = '/tmp/proj/hello.txt'
const ASK = `#call read {"filePath":"${FILE}"}`
const READ_OUT = readOutput(FILE)
const EPHEMERAL = { type: 'ephemeral' as const }

const BASH_SCHEMA = {
	$schema: 'https://json-schema.org/draft/2020-12/schema',
	type: 'object',
	properties: {
		command: { type: 'string', description: 'The command to execute' },
		timeout: { minimum: -MAX_INT, exclusiveMinimum: 0, type: 'integer', maximum: MAX_INT, description: 'Optional timeout in milliseconds' },
		workdir: { type: 'string', description: 'The working directory to run the command in.' },
	},
	required: ['command'],
}

describe('opencode through /v1/messages (provider anthropic, baseURL {root}/v1)', () => {
	const tools = [
		{ name: 'bash', description: 'Executes a given bash command in a persistent shell session.', input_schema: BASH_SCHEMA, eager_input_streaming: true },
		{ name: 'read', description: 'Read a file or directory from the local filesystem.', input_schema: READ_SCHEMA, eager_input_streaming: true },
	]
	const body = (messages: unknown[]) => ({
		model: CLAUDE,
		max_tokens: 32000,
		thinking: { type: 'adaptive' },
		output_config: { effort: 'high' },
		system: [{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }],
		messages,
		tools,
		tool_choice: { type: 'auto' },
	})
	const headers = { 'anthropic-beta': 'structured-outputs-2025-11-13', 'user-agent': AGENT, ...SESSION }

	it('should stream a tool call with signed thinking, take the turn replayed with its breakpoints, and keep its fields toward Claude', async () => {
		const acct = await m.account()
		const turn = (messages: unknown[]) => acct.anthropic.messages.stream(body(messages) as never, { headers }).finalMessage()
		const user = { role: 'user', content: [{ type: 'text', text: ASK, cache_control: EPHEMERAL }] }
		const first = await turn([user])
		expect(first.stop_reason).toBe('tool_use')
		const [thinking, call] = first.content as [Anthropic.ThinkingBlock, Anthropic.ToolUseBlock]
		expect([thinking.type, thinking.signature.length > 0, call.type, call.name, call.input]).toEqual(['thinking', true, 'tool_use', 'read', { filePath: FILE }])
		const sent = lastRequest(m.mocks.anthropic)
		const eager = sent.body.tools.map((t: { eager_input_streaming?: boolean }) => t.eager_input_streaming)
		expect([sent.headers['anthropic-beta'], eager, sent.body.tools[1].input_schema]).toEqual(['structured-outputs-2025-11-13', [true, true], READ_SCHEMA])
		expect([sent.body.thinking, sent.body.output_config]).toEqual([{ type: 'adaptive' }, { effort: 'high' }])

		// Replayed: the breakpoints move to the last two messages' last blocks (the call and its result).
		const second = await turn([
			{ role: 'user', content: [{ type: 'text', text: ASK }] },
			{ role: 'assistant', content: [thinking, { ...call, cache_control: EPHEMERAL }] },
			{ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: READ_OUT, cache_control: EPHEMERAL }] },
		])
		expect(second.content.filter((b) => b.type === 'text').map((b) => (b as Anthropic.TextBlock).text)).toEqual([`Tool results: ${READ_OUT}`])
		const replayed = lastRequest(m.mocks.anthropic).body.messages
		expect([replayed[1].content[0].signature, replayed[1].content[1].cache_control, replayed[2].content[0].cache_control]).toEqual([thinking.signature, EPHEMERAL, EPHEMERAL])
		expect((await usageRows(m, acct.accountId)).map((r) => [r.model, r.endpoint, r.stream, r.status])).toEqual([
			[CLAUDE, '/v1/messages', true, 200],
			[CLAUDE, '/v1/messages', true, 200],
		])
	})
})

describe('opencode through /v1/responses (provider openai, baseURL {root}/v1)', () => {
	const headers = { originator: 'opencode', 'session-id': SID, ...SESSION }
	const client = (acct: Account) => new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0, defaultHeaders: headers })
	// The OpenAI provider sends its tools without the schema's `$schema` and bounds, not strict.
	const READ = {
		type: 'function',
		name: 'read',
		description: 'Read a file or directory from the local filesystem.',
		parameters: {
			properties: {
				filePath: { description: 'The absolute path to the file or directory to read', type: 'string' },
				offset: { description: 'The line number to start reading from (1-indexed)', type: 'integer' },
				limit: { description: 'The maximum number of lines to read (defaults to 2000)', type: 'integer' },
			},
			required: ['filePath'],
			type: 'object',
		},
		strict: false,
	}
	const APPLY_PATCH = {
		type: 'function',
		name: 'apply_patch',
		description: 'Use the `apply_patch` tool to edit files.',
		parameters: { properties: { patchText: { description: 'The full patch text', type: 'string' } }, required: ['patchText'], type: 'object' },
		strict: false,
	}
	const body = (model: string, input: unknown[]) => ({
		model,
		input: [{ role: 'developer', content: 'You are OpenCode, You and the user share the same workspace and collaborate to achieve the user’s goals.' }, ...input],
		text: { verbosity: 'low' },
		store: false,
		include: ['reasoning.encrypted_content'],
		prompt_cache_key: SID,
		reasoning: { effort: 'high', summary: 'auto' },
		tools: [APPLY_PATCH, READ],
		tool_choice: 'auto',
		stream: true,
	})
	// A streamed response's final object has no `output_text` (the SDK adds it to non-streamed ones only).
	const textOf = (r: ResponsesResponse) => r.output.flatMap((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('')
	const turn = async (c: OpenAI, b: unknown): Promise<ResponsesResponse> => {
		let final: ResponsesResponse | undefined
		for await (const e of (await c.responses.create(b as never)) as unknown as AsyncIterable<ResponseStreamEvent>) if (e.type === 'response.completed') final = e.response
		if (!final) throw new Error('no response.completed')
		return final
	}

	for (const model of [GPT, CLAUDE])
		it(`should answer a tool call with its reasoning carried in encrypted_content, and the replayed loop (${model})`, async () => {
			const c = client(await m.account())
			const user = { role: 'user', content: [{ type: 'input_text', text: ASK }] }
			const first = await turn(c, body(model, [user]))
			const reasoning = first.output.find((o) => o.type === 'reasoning')
			const call = first.output.find((o) => o.type === 'function_call')
			expect(reasoning?.encrypted_content).toBeString()
			expect(call && [call.name, JSON.parse(call.arguments)]).toEqual(['read', { filePath: FILE }])
			// Sent back as the AI SDK writes them: the reasoning item without its id, the call without id or status.
			const replay = [
				{ type: 'reasoning', encrypted_content: reasoning!.encrypted_content, summary: reasoning!.summary },
				{ type: 'function_call', call_id: call!.call_id, name: call!.name, arguments: call!.arguments },
				{ type: 'function_call_output', call_id: call!.call_id, output: READ_OUT },
			]
			const second = await turn(c, body(model, [user, ...replay]))
			expect(textOf(second)).toBe(`Tool results: ${READ_OUT}`)
			if (model === CLAUDE) {
				const [, assistant] = lastRequest(m.mocks.anthropic).body.messages
				expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
				expect(assistant.content[0].signature).toBeString()
			} else expect(lastRequest(m.mocks.openai).body.input.slice(2)).toEqual(replay)
		})
})

describe('opencode through /v1/chat/completions (a custom @ai-sdk/openai-compatible provider)', () => {
	const READ = { type: 'function', function: { name: 'read', description: 'Read a file or directory from the local filesystem.', parameters: READ_SCHEMA } }
	const body = (messages: unknown[]) => ({
		model: CLAUDE,
		max_tokens: 32000,
		reasoning_effort: 'high',
		messages: [{ role: 'system', content: SYSTEM, cache_control: EPHEMERAL }, ...messages],
		tools: [READ],
		tool_choice: 'auto',
		stream: true,
		stream_options: { include_usage: true },
	})

	it("should put the breakpoint it sets on a tool call on Claude's tool_use, and its thinking back before it", async () => {
		const acct = await m.account()
		const headers = { 'user-agent': 'opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14', ...SESSION }
		const turn = (messages: unknown[]) => chat(acct.openai, body(messages) as never, true, { headers })
		const first = await turn([{ role: 'user', content: ASK, cache_control: EPHEMERAL }])
		const [call] = first.calls
		expect(call && [call.name, call.args]).toEqual(['read', { filePath: FILE }])
		expect(first.reasoning).toBe(`Let me think about ${ASK}.`)

		// The assistant turn has no text, so the breakpoint of its last part is on the tool call.
		const second = await turn([
			{ role: 'user', content: ASK },
			{
				role: 'assistant',
				content: '',
				reasoning_content: first.reasoning,
				tool_calls: [{ id: call!.id, type: 'function', function: { name: call!.name, arguments: JSON.stringify(call!.args) }, cache_control: EPHEMERAL }],
			},
			{ role: 'tool', tool_call_id: call!.id, content: READ_OUT, cache_control: EPHEMERAL },
		])
		expect(second.text).toBe(`Tool results: ${READ_OUT}`)
		const sent = lastRequest(m.mocks.anthropic).body
		expect(sent.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }])
		const [, assistant, results] = sent.messages
		expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
		expect(assistant.content[0].signature).toBeString()
		expect([assistant.content[1].cache_control, results.content[0].cache_control]).toEqual([EPHEMERAL, EPHEMERAL])
	})
})

describe('the errors opencode shows (the body’s message)', () => {
	const ask = (acct: Account, model: string) => ({
		messages: () => acct.anthropic.messages.create({ model, max_tokens: 32000, messages: [{ role: 'user', content: 'hi' }], stream: true }),
		responses: () => acct.openai.responses.create({ model, input: 'hi', store: false, stream: true }),
		chat: () => acct.openai.chat.completions.create({ model, max_tokens: 32000, messages: [{ role: 'user', content: 'hi' }], stream: true }),
	})
	const refusal = async (call: () => Promise<unknown>) => {
		const err = (await call().catch((e) => e)) as { status: number; error: any }
		// The Anthropic SDK keeps the whole body (`{type: "error", error}`); the OpenAI SDK its `error`.
		const said = err.error?.type === 'error' ? err.error.error : err.error
		return [err.status, said?.message]
	}

	it('should refuse a model the key may not use (403), an empty balance (402) and an unserved title model (404) in each protocol', async () => {
		const limited = await m.account()
		expect((await m.app.admin(`/api/tokens/${limited.tokenId}`, { method: 'PATCH', body: { allowed_models: [GPT] } })).status).toBe(200)
		const empty = await m.account(0)
		const acct = await m.account()
		for (const [protocol, call] of Object.entries(ask(limited, CLAUDE)))
			expect([protocol, ...(await refusal(call))]).toEqual([protocol, 403, `This API key may not use model "${CLAUDE}"`])
		for (const [protocol, call] of Object.entries(ask(empty, CLAUDE))) {
			const [status, message] = await refusal(call)
			expect([protocol, status]).toEqual([protocol, 402])
			expect(message).toStartWith('account balance exhausted')
		}
		// Its session titles ask the provider's small model (claude-haiku-4-5-20251001, gpt-5.4-nano) unless `small_model` is set.
		for (const [protocol, call] of Object.entries(ask(acct, 'claude-haiku-4-5-20251001')))
			expect([protocol, ...(await refusal(call))]).toEqual([protocol, 404, 'The model "claude-haiku-4-5-20251001" does not exist or is not served here'])
	})
})
