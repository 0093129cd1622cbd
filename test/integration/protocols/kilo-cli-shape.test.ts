/**
 * Kilo Code's CLI (`@kilocode/cli`; its linux-x64 binary 7.7.9, the newest this registry holds) as it ran against the
 * gateway (`kilo run`, its `code` agent, recorded between the CLI and the gateway), with the three providers of its
 * kilo.json: a custom `@ai-sdk/openai-compatible` one (Chat Completions, with Kilo's `http-referer` and `x-title`),
 * `anthropic` (`/v1/messages`) and `openai` (the Responses API, `store: false`). Kilo is an opencode fork: the prompt
 * goes as two text parts (the message, then its `<environment_details>`), tools carry JSON Schema 2020-12, `--variant`
 * becomes `reasoning_effort`, adaptive thinking with an effort, a thinking budget (names outside its catalog under
 * `anthropic`) or a reasoning effort, and a tool call is replayed with its reasoning. A fourth, `@ai-sdk/google` under
 * another name (`/v1beta/models/…:streamGenerateContent?alt=sse`), sends `thinkingLevel` and replays signed thoughts. It reads usage as the AI SDK
 * does (output less reasoning tokens; cache reads and writes apart) and prints an error's `message` as
 * `Error: <message>`. Descriptions and the system prompt are shortened; the shapes are as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { Response as ResponsesResponse, ResponseStreamEvent } from 'openai/resources/responses/responses'
import { thoughtSignatureFor } from '../../mocks'
import { chat } from './clients'
import { READ_SCHEMA, readOutput } from './opencode-tools'
import { type Account, GEMINI_3, lastRequest, type Matrix, MODEL, SETUP_MS, startMatrixWithAgentModels, usageRows } from './harness'
import { sseFrames } from './wire-checks'

const GPT = 'gpt-5.5'
const CLAUDE = MODEL.anthropic
let m: Matrix
beforeAll(async () => {
	m = await startMatrixWithAgentModels(GPT)
}, SETUP_MS)
afterAll(() => m.close())

const SID = 'ses_dd51154ebffeYL07erKXKuiC9U'
const SESSION = { 'x-session-affinity': SID, 'x-session-id': SID }
/** The custom provider's headers: Kilo adds its referer and title to every OpenAI-compatible request. */
const CHAT_HEADERS = { 'http-referer': 'https://kilocode.ai', 'x-title': 'Kilo Code', 'user-agent': 'Kilo-Code/7.7.9 ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14', ...SESSION }
const SYSTEM = 'You are Kilo, a highly skilled software engineer with extensive knowledge in many programming languages, frameworks, design patterns, and best practices.'
const FILE = '/tmp/ws/hello.txt'
const ASK = `#call read {"filePath":"${FILE}"}`
const ENV = '\n\n<environment_details>\nMessage time: 2026-11-30T05:36:30Z\nWorking directory: /tmp/ws\nWorkspace root folder: /tmp/ws\n</environment_details>'
const READ_OUT = readOutput(FILE)
const EPHEMERAL = { type: 'ephemeral' as const }
const EDIT_SCHEMA = {
	$schema: 'https://json-schema.org/draft/2020-12/schema',
	type: 'object',
	properties: {
		filePath: { type: 'string', description: 'The absolute path to the file to modify' },
		oldString: { type: 'string', description: 'The text to replace' },
		newString: { type: 'string', description: 'The text to replace it with (must be different from oldString)' },
		replaceAll: { type: 'boolean', description: 'Replace all occurrences of oldString (default false)' },
	},
	required: ['filePath', 'oldString', 'newString'],
}
const DESCRIBED = { read: 'Read a file or directory from the local filesystem.', edit: 'Performs exact string replacements in files.' }

describe('Kilo through /v1/chat/completions (a custom @ai-sdk/openai-compatible provider)', () => {
	const tools = [
		{ type: 'function', function: { name: 'edit', description: DESCRIBED.edit, parameters: EDIT_SCHEMA } },
		{ type: 'function', function: { name: 'read', description: DESCRIBED.read, parameters: READ_SCHEMA } },
	]
	// Kilo puts breakpoints on the system message and the last two messages for Claude names only, and sends no
	// `max_tokens` to GPT-5 names (reasoning models, which refuse it).
	const body = (model: string, messages: unknown[]) => {
		const claude = model.startsWith('claude')
		return {
			model,
			...(model !== GPT && { max_tokens: 32000 }),
			reasoning_effort: 'high',
			messages: [{ role: 'system', content: SYSTEM, ...(claude && { cache_control: EPHEMERAL }) }, ...messages],
			tools,
			tool_choice: 'auto',
			stream: true,
			stream_options: { include_usage: true },
		}
	}

	for (const model of [GPT, CLAUDE, GEMINI_3])
		it(`should call read with its reasoning, take the call replayed with reasoning_content and content null, and bill what Kilo reads (${model})`, async () => {
			const acct = await m.account()
			const claude = model === CLAUDE
			const turn = (messages: unknown[]) => chat(acct.openai, body(model, messages) as never, true, { headers: CHAT_HEADERS })
			const user = { role: 'user', content: [{ type: 'text', text: ASK }, { type: 'text', text: ENV }] }
			const first = await turn([claude ? { ...user, content: [user.content[0], { ...user.content[1], cache_control: EPHEMERAL }] } : user])
			const [call] = first.calls
			expect([first.stop, call?.name, call?.args]).toEqual(['tool_calls', 'read', { filePath: FILE }])
			expect(first.reasoning).toBe(`Let me think about ${ASK} ${ENV}.`)
			// Kilo shows output as completion_tokens less reasoning_tokens: the call's 2 tokens, its thinking apart.
			expect(first.usage.output - (first.usage.reasoning ?? 0)).toBe(2)

			const second = await turn([
				user,
				{
					role: 'assistant',
					content: null,
					reasoning_content: first.reasoning,
					tool_calls: [{ id: call!.id, type: 'function', function: { name: 'read', arguments: JSON.stringify(call!.args) }, ...(claude && { cache_control: EPHEMERAL }) }],
				},
				{ role: 'tool', tool_call_id: call!.id, content: READ_OUT, ...(claude && { cache_control: EPHEMERAL }) },
			])
			expect([second.stop, second.text]).toEqual(['stop', `Tool results: ${READ_OUT}`])
			if (claude) {
				const [, assistant] = lastRequest(m.mocks.anthropic).body.messages
				expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
				expect(assistant.content[0].signature).toBeString()
			}
			if (model === GEMINI_3) {
				const [, turnParts] = lastRequest(m.mocks.gemini).body.contents
				const fc = turnParts.parts.find((p: { functionCall?: unknown }) => p.functionCall)
				expect(fc.thoughtSignature).toBe(thoughtSignatureFor('read', { filePath: FILE }))
			}
			// What Kilo displays is what the key was charged for.
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.model, r.input_tokens, r.output_tokens, r.reasoning_tokens])).toEqual(
				[first, second].map((a) => [model, a.usage.input, a.usage.output, a.usage.reasoning ?? 0]),
			)
		})

	it('should give an edit call its three strings back whole, and the edit result its answer', async () => {
		const acct = await m.account()
		const args = { filePath: FILE, oldString: 'hello', newString: 'goodbye' }
		const ask = `#call edit ${JSON.stringify(args)}`
		const user = { role: 'user', content: [{ type: 'text', text: ask }, { type: 'text', text: ENV }] }
		const first = await chat(acct.openai, body(GEMINI_3, [user]) as never, true, { headers: CHAT_HEADERS })
		expect(first.calls.map((c) => [c.name, c.args])).toEqual([['edit', args]])
		const call = first.calls[0]!
		const second = await chat(
			acct.openai,
			body(GEMINI_3, [
				user,
				{ role: 'assistant', content: null, reasoning_content: first.reasoning, tool_calls: [{ id: call.id, type: 'function', function: { name: 'edit', arguments: JSON.stringify(args) } }] },
				{ role: 'tool', tool_call_id: call.id, content: 'Edit applied successfully.' },
			]) as never,
			true,
			{ headers: CHAT_HEADERS },
		)
		expect(second.text).toBe('Tool results: Edit applied successfully.')
		const [, model, results] = lastRequest(m.mocks.gemini).body.contents
		expect(model.parts.find((p: { functionCall?: unknown }) => p.functionCall).functionCall.args).toEqual(args)
		expect(results.parts[0].functionResponse.name).toBe('edit')
	})
})

describe('Kilo through /v1/messages (provider anthropic, baseURL {root}/v1)', () => {
	const tools = [{ name: 'read', description: DESCRIBED.read, input_schema: READ_SCHEMA, eager_input_streaming: true }]
	const headers = { 'anthropic-beta': 'structured-outputs-2025-11-13', 'user-agent': 'kilo/latest/7.7.9/cli ai-sdk/provider-utils/4.0.27 runtime/bun/1.3.14', ...SESSION }
	// `--variant high`: Claude's own names get adaptive thinking with an effort; a name outside Kilo's catalog listed
	// under the provider (`limit.output` 64000) a thinking budget, with `max_tokens` raised above it.
	const thinking = (model: string) =>
		model === CLAUDE ? { max_tokens: 32000, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } } : { max_tokens: 63999, thinking: { type: 'enabled', budget_tokens: 31999 } }
	const body = (model: string, messages: unknown[]) => ({
		model,
		...thinking(model),
		system: [{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }],
		messages,
		tools,
		tool_choice: { type: 'auto' },
		stream: true,
	})

	for (const model of [CLAUDE, GPT, GEMINI_3])
		it(`should stream a read call after signed thinking and answer the replayed loop, input counted as Kilo adds it up (${model})`, async () => {
			const acct = await m.account()
			const turn = (messages: unknown[]) => acct.anthropic.messages.stream(body(model, messages) as never, { headers }).finalMessage()
			const user = { role: 'user', content: [{ type: 'text', text: ASK }, { type: 'text', text: ENV, cache_control: EPHEMERAL }] }
			const first = await turn([user])
			expect(first.stop_reason).toBe('tool_use')
			const [think, call] = first.content as [Anthropic.ThinkingBlock, Anthropic.ToolUseBlock]
			expect([think.type, think.thinking, think.signature.length > 0, call.name, call.input]).toEqual(['thinking', `Let me think about ${ASK} ${ENV}.`, true, 'read', { filePath: FILE }])
			const second = await turn([
				{ role: 'user', content: [{ type: 'text', text: ASK }, { type: 'text', text: ENV }] },
				{ role: 'assistant', content: [think, { ...call, cache_control: EPHEMERAL }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: READ_OUT, cache_control: EPHEMERAL }] },
			])
			expect([second.stop_reason, (second.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text]).toEqual(['end_turn', `Tool results: ${READ_OUT}`])
			// Kilo's input is input_tokens plus the cache reads and writes; the gateway's row counts the same prompt.
			const seen = [first, second].map((r) => {
				const u = r.usage
				return [model, u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0), u.output_tokens]
			})
			expect((await usageRows(m, acct.accountId)).map((r) => [r.model, r.input_tokens, r.output_tokens])).toEqual(seen)
		})
})

describe('Kilo through /v1/responses (provider openai, baseURL {root}/v1)', () => {
	const headers = { originator: 'opencode', 'session-id': SID, 'http-referer': 'https://kilocode.ai', 'x-title': 'Kilo Code', ...SESSION }
	const client = (acct: Account) => new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0, defaultHeaders: headers })
	const READ = {
		type: 'function',
		name: 'read',
		description: DESCRIBED.read,
		parameters: { properties: { filePath: { description: 'The absolute path to the file or directory to read', type: 'string' } }, required: ['filePath'], type: 'object' },
		strict: false,
	}
	const body = (model: string, input: unknown[]) => ({
		model,
		input: [{ role: 'developer', content: SYSTEM }, ...input],
		store: false,
		include: ['reasoning.encrypted_content'],
		prompt_cache_key: SID,
		reasoning: { effort: 'high', summary: 'auto' },
		tools: [READ],
		tool_choice: 'auto',
		stream: true,
	})
	const turn = async (c: OpenAI, b: unknown): Promise<ResponsesResponse> => {
		let final: ResponsesResponse | undefined
		for await (const e of (await c.responses.create(b as never)) as unknown as AsyncIterable<ResponseStreamEvent>) if (e.type === 'response.completed') final = e.response
		if (!final) throw new Error('no response.completed')
		return final
	}
	const textOf = (r: ResponsesResponse) => r.output.flatMap((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('')

	for (const model of [CLAUDE, GEMINI_3])
		it(`should carry the reasoning in encrypted_content through the replayed loop, its cache writes reported as charged (${model})`, async () => {
			const acct = await m.account()
			const c = client(acct)
			const user = { role: 'user', content: [{ type: 'input_text', text: ASK }, { type: 'input_text', text: ENV }] }
			const first = await turn(c, body(model, [user]))
			const reasoning = first.output.find((o) => o.type === 'reasoning')
			const call = first.output.find((o) => o.type === 'function_call')
			expect(reasoning?.encrypted_content).toBeString()
			expect(call && [call.name, JSON.parse(call.arguments)]).toEqual(['read', { filePath: FILE }])
			const replay = [
				{ type: 'reasoning', encrypted_content: reasoning!.encrypted_content, summary: reasoning!.summary },
				{ type: 'function_call', call_id: call!.call_id, name: call!.name, arguments: call!.arguments },
				{ type: 'function_call_output', call_id: call!.call_id, output: READ_OUT },
			]
			const second = await turn(c, body(model, [user, ...replay]))
			expect(textOf(second)).toBe(`Tool results: ${READ_OUT}`)
			// Kilo reads input_tokens_details' cache reads and writes; the row holds the same numbers.
			type Details = { cached_tokens?: number; cache_write_tokens?: number }
			const seen = [first, second].map((r) => {
				const d = r.usage!.input_tokens_details as Details
				return [r.usage!.input_tokens, r.usage!.output_tokens, d.cached_tokens ?? 0, d.cache_write_tokens ?? 0]
			})
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.cached_tokens, (r as { cache_write_tokens?: number }).cache_write_tokens ?? 0])).toEqual(seen)
			// prompt_cache_key asks Claude to cache the prompt: its next turn reads the first one's from the cache.
			if (model === CLAUDE) expect([seen[0]![3]! > 0, seen[1]![2]]).toEqual([true, seen[0]![3]])
		})
})

describe('Kilo through /v1beta (a custom @ai-sdk/google provider, baseURL {root}/v1beta)', () => {
	const headers = (key: string) => ({ 'content-type': 'application/json', 'x-goog-api-key': key, 'http-referer': 'https://kilocode.ai', 'x-title': 'Kilo Code', ...SESSION })
	// The Google provider drops `$schema` and the integer bounds and sends `parameters`.
	const READ = {
		name: 'read',
		description: DESCRIBED.read,
		parameters: {
			required: ['filePath'],
			type: 'object',
			properties: {
				filePath: { description: 'The absolute path to the file or directory to read', type: 'string' },
				offset: { description: 'The line number to start reading from (1-indexed)', type: 'integer' },
				limit: { description: 'The maximum number of lines to read (defaults to 2000)', type: 'integer' },
			},
		},
	}
	const body = (contents: unknown[]) => ({
		generationConfig: { maxOutputTokens: 32000, thinkingConfig: { includeThoughts: true, thinkingLevel: 'high' } },
		contents,
		systemInstruction: { parts: [{ text: SYSTEM }] },
		tools: [{ functionDeclarations: [READ] }],
		toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
	})
	const turn = async (acct: Account, model: string, b: unknown) => {
		const res = await fetch(`${m.app.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`, { method: 'POST', headers: headers(acct.key), body: JSON.stringify(b) })
		expect(res.status).toBe(200)
		const chunks = sseFrames(await res.text()).map((f) => JSON.parse(f.data))
		return { parts: chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []) as any[], usage: chunks.at(-1).usageMetadata, finish: chunks.at(-1).candidates[0].finishReason }
	}
	const user = { role: 'user', parts: [{ text: ASK }, { text: ENV }] }

	for (const model of [CLAUDE, GPT])
		it(`should stream signed thoughts and the read call, and take them back as the AI SDK merges them (${model})`, async () => {
			const acct = await m.account()
			const first = await turn(acct, model, body([user]))
			const thoughts = first.parts.filter((p) => p.thought)
			const call = first.parts.find((p) => p.functionCall)
			expect([call.functionCall.name, call.functionCall.args, first.finish]).toEqual(['read', { filePath: FILE }, 'STOP'])
			expect(thoughts.map((p) => p.text).join('')).toBe(`Let me think about ${ASK} ${ENV}.`)
			// Kilo reads output as candidates plus thoughts; the row holds that.
			const out = (u: { candidatesTokenCount?: number; thoughtsTokenCount?: number }) => (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0)
			// The AI SDK joins the thought deltas into one part, with the signature that came on any of them.
			const signature = thoughts.find((p) => p.thoughtSignature)?.thoughtSignature
			const replay = {
				role: 'model',
				parts: [
					{ text: thoughts.map((p) => p.text).join(''), thought: true, ...(signature && { thoughtSignature: signature }) },
					{ functionCall: call.functionCall, ...(call.thoughtSignature && { thoughtSignature: call.thoughtSignature }) },
				],
			}
			const result = { role: 'user', parts: [{ functionResponse: { name: 'read', response: { name: 'read', content: READ_OUT } } }] }
			const second = await turn(acct, model, body([user, replay, result]))
			expect(second.parts.filter((p) => !p.thought).map((p) => p.text).join('')).toBe(`Tool results: ${READ_OUT}`)
			if (model === CLAUDE) {
				const [, assistant] = lastRequest(m.mocks.anthropic).body.messages
				expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use'])
			}
			const rows = await usageRows(m, acct.accountId)
			expect(rows.map((r) => [r.input_tokens, r.output_tokens, r.reasoning_tokens])).toEqual(
				[first, second].map((t) => [t.usage.promptTokenCount, out(t.usage), t.usage.thoughtsTokenCount ?? 0]),
			)
		})
})

describe('the errors Kilo prints (Error: <message>)', () => {
	const ask = (acct: Account, model: string) => ({
		chat: () => acct.openai.chat.completions.create({ model, max_tokens: 32000, messages: [{ role: 'user', content: 'hi' }], stream: true }, { headers: CHAT_HEADERS }),
		messages: () => acct.anthropic.messages.create({ model, max_tokens: 32000, messages: [{ role: 'user', content: 'hi' }], stream: true }),
		responses: () => acct.openai.responses.create({ model, input: 'hi', store: false, stream: true }),
	})
	const refusal = async (call: () => Promise<unknown>) => {
		const err = (await call().catch((e) => e)) as { status: number; error: any }
		const said = err.error?.type === 'error' ? err.error.error : err.error
		return [err.status, said?.message]
	}

	it('should refuse a bad key (401), an empty balance (402), a model off the key (403) and an unserved model (404) in each protocol', async () => {
		const acct = await m.account()
		const bad = { ...acct, openai: new OpenAI({ apiKey: 'sk-bad', baseURL: `${m.app.url}/v1`, maxRetries: 0 }), anthropic: new (await import('@anthropic-ai/sdk')).default({ apiKey: 'sk-bad', baseURL: m.app.url, maxRetries: 0 }) }
		const empty = await m.account(0)
		const limited = await m.account()
		expect((await m.app.admin(`/api/tokens/${limited.tokenId}`, { method: 'PATCH', body: { allowed_models: [GPT] } })).status).toBe(200)
		for (const [protocol, call] of Object.entries(ask(bad, CLAUDE))) expect([protocol, ...(await refusal(call))]).toEqual([protocol, 401, 'Invalid API key'])
		for (const [protocol, call] of Object.entries(ask(empty, CLAUDE))) {
			const [status, message] = await refusal(call)
			expect([protocol, status]).toEqual([protocol, 402])
			expect(message).toStartWith('account balance exhausted')
		}
		for (const [protocol, call] of Object.entries(ask(limited, CLAUDE)))
			expect([protocol, ...(await refusal(call))]).toEqual([protocol, 403, `This API key may not use model "${CLAUDE}"`])
		// A catalog name the gateway does not serve. (Kilo retries a 404 without end through a provider named `openai…`.)
		for (const [protocol, call] of Object.entries(ask(acct, 'claude-opus-4-8')))
			expect([protocol, ...(await refusal(call))]).toEqual([protocol, 404, 'The model "claude-opus-4-8" does not exist or is not served here'])
	})
})
