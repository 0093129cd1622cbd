/**
 * Codex CLI 0.171.0 as it ran against the gateway (`codex exec --json`, a custom provider with `wire_api = "responses"`,
 * recorded between the CLI and the gateway): its headers (`originator: codex_exec`, `session-id`, `thread-id`,
 * `x-codex-turn-metadata`…), a catalog model's body (`reasoning.effort` without a summary, `text.verbosity: low`,
 * `client_metadata`, no `instructions`), its tools (unified exec, freeform `apply_patch`, goals, a client-run
 * `tool_search`, `web_search` with `external_web_access` false under a workspace-write sandbox and true with full access),
 * and the replay of a freeform call with its `ctco_` output. Descriptions are shortened; the shapes are as sent.
 * Also the errors the CLI shows: a model the key may not use, an empty balance, an upstream 429 with `retry-after`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import type { ResponseStreamEvent } from 'openai/resources/responses/responses'
import { type Account, lastRequest, type Matrix, SETUP_MS, startMatrix, THINKER, UPSTREAM_MODEL, usageRows } from './harness'
import { checkResponsesEvents } from './wire-checks'

/** A model of Codex's own catalog, served by an OpenAI channel under its name. */
const GPT = 'gpt-5.5'
/** A model of an OpenAI-compatible vendor without a Responses API: served over Chat Completions. */
const COMPAT = 'deepseek-chat'
let m: Matrix
beforeAll(async () => {
	m = await startMatrix({
		models: [
			{ name: GPT, input_per_mtok: 1.25, output_per_mtok: 10 },
			{ name: COMPAT, input_per_mtok: 0.3, output_per_mtok: 1 },
		],
		channels: (mocks) => [
			{ name: 'ch-gpt-5-5', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [GPT] },
			{ name: 'ch-compat', type: 'openai', base_url: mocks.openai.url, api_key: 'up-openai', models: [COMPAT], settings: { responses_api: false } },
		],
	})
}, SETUP_MS)
afterAll(() => m.close())

type Item = Record<string, unknown>
const SID = '01a22a06-eb61-7a43-b194-a7138df0452f'
const TURN = '01a22a06-eb76-7593-a45c-2369e2ebbde0'
const METADATA = JSON.stringify({ installation_id: 'd95bb3e6-43d7-4cb4-85e2-770d6be121ac', session_id: SID, thread_id: SID, agent_name: '/root', turn_id: TURN, window_id: `${SID}:0`, request_kind: 'turn', turn_trigger: 'exec', sandbox_mode: 'workspace-write', model: GPT, reasoning_effort: 'medium' })

/** The headers of every request of the session. */
const CLI_HEADERS = {
	originator: 'codex_exec',
	'session-id': SID,
	'thread-id': SID,
	'x-client-request-id': SID,
	'x-codex-beta-features': 'remote_compaction_v2',
	'x-codex-turn-metadata': METADATA,
	'x-codex-window-id': `${SID}:0`,
	'User-Agent': 'codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.171.0)',
}

const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[]) => ({ type: 'function', name, description, strict: false, parameters: { type: 'object', properties, required, additionalProperties: false } })

/** The tools offered to a catalog model (`apply_patch_tool_type: freeform`, `supports_search_tool: true`). */
const cliTools = (liveWeb: boolean) => [
	fn('exec_command', 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.', { cmd: { type: 'string', description: 'Shell command to execute.' }, workdir: { type: 'string' }, yield_time_ms: { type: 'number' }, tty: { type: 'boolean' }, sandbox_permissions: { type: 'string', enum: ['use_default', 'require_escalated'] } }, ['cmd']),
	fn('write_stdin', 'Writes characters to an existing unified exec session and returns recent output.', { chars: { type: 'string' }, session_id: { type: 'number' } }, ['session_id']),
	fn('request_user_input', 'Request user input for one to three short questions and wait for the response. This tool is only available in Plan mode.', { questions: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, header: { type: 'string' }, question: { type: 'string' }, options: { type: 'array', items: { type: 'object', properties: { label: { type: 'string' }, description: { type: 'string' } }, required: ['label', 'description'], additionalProperties: false } } }, required: ['id', 'header', 'question', 'options'], additionalProperties: false } } }, ['questions']),
	{
		type: 'custom',
		name: 'apply_patch',
		description: 'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
		format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\nhunk: /(.|\\n)+/\n%import common.LF' },
	},
	fn('view_image', 'View a local image file from the filesystem when visual inspection is needed.', { path: { type: 'string' } }, ['path']),
	fn('get_goal', 'Get the current goal for this thread, including status, budgets, token and elapsed-time usage, and remaining token budget.', {}, []),
	fn('create_goal', 'Create a goal only when explicitly requested by the user or system/developer instructions.', { objective: { type: 'string' }, token_budget: { type: 'number' } }, ['objective']),
	fn('update_goal', 'Update the existing goal.', { status: { type: 'string', enum: ['active', 'paused', 'complete'] } }, ['status']),
	{
		type: 'tool_search',
		execution: 'client',
		description: '# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.',
		parameters: { type: 'object', properties: { limit: { type: 'number' }, query: { type: 'string' } }, required: ['query'], additionalProperties: false },
	},
	// `external_web_access` is false under the default workspace-write sandbox (Codex's cached web search), true with full access.
	{ type: 'web_search', external_web_access: liveWeb, search_content_types: ['text', 'image'] },
]

const msg = (role: 'developer' | 'user', text: string, n: number): Item => ({ type: 'message', id: `msg_01a22a06-eb7a-7553-8481-${String(n).padStart(12, '0')}`, role, content: [{ type: 'input_text', text }] })
const ENV = '<environment_context>\n  <cwd>/work/repo</cwd>\n  <shell>bash</shell>\n  <current_date>2026-11-30</current_date>\n  <timezone>Etc/UTC</timezone>\n</environment_context>'
const prefix = (): Item[] => [msg('developer', 'You are Codex, a coding agent based on GPT-5.', 1), msg('developer', '<skills_instructions>\n## Skills\n</skills_instructions>', 2), msg('user', ENV, 3)]

/** One request body as the CLI sent it for a catalog model. */
function cliBody(model: string, input: Item[], liveWeb = false) {
	return {
		model,
		stream: true,
		input,
		tools: cliTools(liveWeb),
		tool_choice: 'auto',
		parallel_tool_calls: true,
		reasoning: { effort: 'medium' },
		store: false,
		include: ['reasoning.encrypted_content'],
		prompt_cache_key: SID,
		text: { verbosity: 'low' },
		client_metadata: { 'x-codex-installation-id': 'd95bb3e6-43d7-4cb4-85e2-770d6be121ac', 'x-codex-window-id': `${SID}:0`, 'x-codex-turn-metadata': METADATA, thread_id: SID, session_id: SID, turn_id: TURN, root_turn_id: TURN },
	} as unknown as OpenAI.Responses.ResponseCreateParamsStreaming
}

/** The CLI's next input: each output item as received (reasoning with `content: null`), then the call's output. */
function replay(output: OpenAI.Responses.ResponseOutputItem[], outputText: string): Item[] {
	const items: Item[] = output.map((o) => (o.type === 'reasoning' ? { type: 'reasoning', id: o.id, summary: o.summary, content: null, encrypted_content: o.encrypted_content ?? null } : { ...(o as unknown as Item) }))
	for (const o of output) if (o.type === 'custom_tool_call') items.push({ type: 'custom_tool_call_output', id: 'ctco_01a22a06-ebfa-7441-8582-2f5de5486af2', call_id: o.call_id, output: outputText })
	return items
}

const cliClient = (acct: Account) => new OpenAI({ apiKey: acct.key, baseURL: `${m.app.url}/v1`, maxRetries: 0, defaultHeaders: CLI_HEADERS })

async function turn(client: OpenAI, body: OpenAI.Responses.ResponseCreateParamsStreaming) {
	const { stream: _, ...params } = body
	const s = client.responses.stream(params)
	const events: ResponseStreamEvent[] = []
	s.on('event', (e) => events.push(e))
	const final = await s.finalResponse()
	checkResponsesEvents(events, { oneAtATime: true, final })
	return { final, types: events.map((e) => e.type) }
}

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch\n'
const ASK = `#call apply_patch ${JSON.stringify({ input: PATCH })}`

describe('Codex CLI 0.171.0 (codex exec) as recorded', () => {
	it('should pass a catalog GPT model through verbatim and stream what the CLI reads', async () => {
		const acct = await m.account()
		const body = cliBody(GPT, [...prefix(), msg('user', 'Say hi', 4)])
		const { final, types } = await turn(cliClient(acct), body)
		expect(final.output_text).toBe('Hello! You said: Say hi')
		for (const t of ['response.created', 'response.output_item.added', 'response.output_text.delta', 'response.output_item.done', 'response.completed'] as const) expect(types).toContain(t)
		expect(lastRequest(m.mocks.openai).body).toEqual({ ...body })
		// The usage the CLI shows is the one billed.
		const [row] = await usageRows(m, acct.accountId)
		expect([row!.input_tokens, row!.output_tokens, row!.reasoning_tokens]).toEqual([final.usage!.input_tokens, final.usage!.output_tokens, final.usage!.output_tokens_details.reasoning_tokens])
	})

	for (const up of ['anthropic', 'gemini'] as const)
		it(`should run the freeform apply_patch loop on ${up}, the call replayed with its ctco_ output`, async () => {
			const client = cliClient(await m.account())
			const history1 = [...prefix(), msg('user', ASK, 4)]
			const first = await turn(client, cliBody(THINKER[up], history1))
			const call = first.final.output.find((o) => o.type === 'custom_tool_call')
			expect(call && call.type === 'custom_tool_call' && [call.name, call.input]).toEqual(['apply_patch', PATCH])
			expect(first.types).toContain('response.custom_tool_call_input.done')
			const done = 'Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA hello.txt\n'
			const second = await turn(client, cliBody(THINKER[up], [...history1, ...replay(first.final.output, done)]))
			expect(second.final.output_text).toBe(`Tool results: ${done}`)
			expect(lastRequest(m.mocks[up]).path).toContain(up === 'anthropic' ? '/v1/messages' : UPSTREAM_MODEL.gemini)
		})

	// Cached access only (the workspace-write default): Claude's and Gemini's searches are live, so they get none.
	for (const up of ['anthropic', 'gemini'] as const)
		it(`should offer ${up} its live web search only when the CLI allows live access`, async () => {
			const client = cliClient(await m.account())
			const searchTools = () => {
				const sent = lastRequest(m.mocks[up]).body
				return up === 'anthropic' ? sent.tools.filter((t: { type?: string }) => t.type?.startsWith('web_search')).map((t: { type: string }) => t.type) : sent.tools.filter((t: Item) => 'googleSearch' in t || 'google_search' in t).length
			}
			const cached = await turn(client, cliBody(THINKER[up], [...prefix(), msg('user', 'what is new in bun #search', 4)]))
			expect(cached.final.output.filter((o) => o.type === 'web_search_call')).toHaveLength(0)
			expect(searchTools()).toEqual(up === 'anthropic' ? [] : 0)
			const live = await turn(client, cliBody(THINKER[up], [...prefix(), msg('user', 'what is new in bun #search', 4)], true))
			expect(live.final.output.filter((o) => o.type === 'web_search_call').length).toBeGreaterThan(0)
			expect(searchTools()).toEqual(up === 'anthropic' ? ['web_search_20250305'] : 1)
		})

	// Chat Completions searches only on OpenAI's search models, so with the search offered every request was a 400.
	it('should serve the default session on a model an OpenAI-compatible vendor serves over chat, and refuse a live search there', async () => {
		const client = cliClient(await m.account())
		const input = [...prefix(), msg('user', 'hello', 4)]
		const cached = await turn(client, cliBody(COMPAT, input))
		// Converted, the environment and the ask are one user message (consecutive user items merge).
		expect(cached.final.output_text).toBe(`Hello! You said: ${ENV} hello`)
		expect(lastRequest(m.mocks.openai).path).toBe('/v1/chat/completions')
		expect(lastRequest(m.mocks.openai).body.web_search_options).toBeUndefined()
		const live = await client.responses.create(cliBody(COMPAT, input, true)).catch((e) => e)
		expect(live).toBeInstanceOf(OpenAI.BadRequestError)
		expect(live.message).toContain('search the web')
	})

	it('should answer the errors the CLI shows in OpenAI shape: a model the key may not use, an empty balance, an upstream 429', async () => {
		const body = cliBody(THINKER.anthropic, [...prefix(), msg('user', 'hello', 4)])
		const refused = async (acct: Account) => {
			const err = await cliClient(acct).responses.create(body).catch((e) => e)
			expect(err).toBeInstanceOf(OpenAI.APIError)
			return err as InstanceType<typeof OpenAI.APIError>
		}
		const limited = await m.account()
		expect((await m.app.admin(`/api/tokens/${limited.tokenId}`, { method: 'PATCH', body: { allowed_models: [GPT] } })).status).toBe(200)
		const forbidden = await refused(limited)
		expect([forbidden.status, (forbidden.error as { code?: string }).code, (forbidden.error as { message?: string }).message]).toEqual([403, 'model_not_allowed', `This API key may not use model "${THINKER.anthropic}"`])

		const empty = await refused(await m.account(0))
		expect([empty.status, (empty.error as { code?: string }).code]).toEqual([402, 'insufficient_quota'])
		expect((empty.error as { message: string }).message).toStartWith('account balance exhausted')

		m.mocks.anthropic.fault = { kind: 'status', status: 429, retryAfter: 2 }
		try {
			const limitedUp = await refused(await m.account())
			expect([limitedUp.status, limitedUp.headers?.get('retry-after'), (limitedUp.error as { type?: string }).type]).toEqual([429, '2', 'rate_limit_error'])
		} finally {
			m.mocks.anthropic.fault = undefined
		}
	})
})
