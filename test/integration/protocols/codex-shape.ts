/**
 * Requests shaped like OpenAI's Codex CLI (`codex-rs`, `core/src/client.rs` + `protocol/src/models.rs`): stateless
 * `/v1/responses` calls (`store: false`, so no `previous_response_id`) that replay the whole conversation each turn,
 * with `include: ["reasoning.encrypted_content"]`, `reasoning: {effort, summary: "auto"}`, `text.verbosity`,
 * `prompt_cache_key`, `parallel_tool_calls`, `tool_choice: "auto"` and its function tools, streamed.
 * The replay is serialised as Codex serialises `ResponseItem`s: without item ids (`#[serde(skip_serializing)] id`),
 * reasoning with `content: null`, and each function call followed at once by its output (Codex records a call and
 * its output as a pair, so parallel calls come back interleaved: call A, output A, call B, output B).
 * @module
 */
import type OpenAI from 'openai'

type Item = Record<string, unknown>

export const CODEX_INSTRUCTIONS = 'You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user computer.'

/** The environment context Codex sends as the first user message of a session. */
export const CODEX_ENV = '<environment_context> <cwd>/repo</cwd> <approval_policy>on-request</approval_policy> <sandbox_mode>workspace-write</sandbox_mode> <shell>bash</shell> </environment_context>'

const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[]) => ({
	type: 'function' as const,
	name,
	description,
	strict: false,
	parameters: { type: 'object', properties, required, additionalProperties: false },
})

/**
 * Codex's function tools for a model without freeform tools. `shell.command` is an array, so the mocks fill
 * `workdir`, its first string property; `apply_patch` takes the patch as `input`.
 */
export const CODEX_TOOLS = [
	fn('shell', 'Runs a shell command and returns its output.', { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' }, timeout_ms: { type: 'number' } }, ['command']),
	fn('apply_patch', 'Use the `apply_patch` tool to edit files.', { input: { type: 'string', description: 'The entire contents of the apply_patch command' } }, ['input']),
	fn('update_plan', 'Updates the task plan.', { explanation: { type: 'string' }, plan: { type: 'array', items: { type: 'object', properties: { step: { type: 'string' }, status: { type: 'string' } }, required: ['step', 'status'], additionalProperties: false } } }, ['plan']),
	fn('view_image', 'Attach a local image to the context.', { path: { type: 'string' } }, ['path']),
]

/** Codex's freeform `apply_patch` (gpt-5 family): a `custom` tool constrained by a Lark grammar. */
export const APPLY_PATCH_FREEFORM = {
	type: 'custom' as const,
	name: 'apply_patch',
	description: 'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
	format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\nhunk: /(.|\\n)+/\n%import common.LF' },
}

export const CODEX_HEADERS = { originator: 'codex_cli_rs', 'OpenAI-Beta': 'responses=experimental', session_id: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' }

export const userText = (text: string): Item => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })

/** One Codex request body (streamed). */
export function codexBody(model: string, input: Item[], extra: Record<string, unknown> = {}) {
	return {
		model,
		instructions: CODEX_INSTRUCTIONS,
		input,
		tools: CODEX_TOOLS,
		tool_choice: 'auto',
		parallel_tool_calls: true,
		reasoning: { effort: 'medium', summary: 'auto' },
		store: false,
		stream: true,
		include: ['reasoning.encrypted_content'],
		prompt_cache_key: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
		text: { verbosity: 'medium' },
		...extra,
	} as unknown as OpenAI.Responses.ResponseCreateParamsStreaming
}

/**
 * A response's output as Codex records it for the next request: ids dropped, reasoning with `content: null`, and the
 * output of each function call right after it (`outputs` by call_id).
 */
export function codexReplay(output: OpenAI.Responses.ResponseOutputItem[], outputs: Record<string, string> = {}): Item[] {
	const items: Item[] = []
	for (const o of output) {
		if (o.type === 'reasoning') items.push({ type: 'reasoning', summary: o.summary, content: null, encrypted_content: o.encrypted_content ?? null })
		else if (o.type === 'message') items.push({ type: 'message', role: 'assistant', content: o.content.flatMap((c) => (c.type === 'output_text' ? [{ type: 'output_text', text: c.text }] : [])) })
		else if (o.type === 'function_call') {
			items.push({ type: 'function_call', name: o.name, arguments: o.arguments, call_id: o.call_id })
			const out = outputs[o.call_id]
			if (out !== undefined) items.push({ type: 'function_call_output', call_id: o.call_id, output: out })
		} else throw new Error(`unexpected output item ${o.type}`)
	}
	return items
}

/**
 * Codex CLI 0.171 (`codex exec`, a custom provider with `wire_api = "responses"`, a model outside its catalog, as
 * recorded at the mock vendor): no `instructions` (the base prompt is the first `developer` message), every input
 * item with an id, `reasoning.effort` only when configured (`model_reasoning_effort`), `client_metadata`, no `text`,
 * the unified-exec tools, a `namespace` of sub-agent tools and `web_search` without live access. Codex's own catalog
 * offers its models the efforts `low` … `xhigh`, `max` and `ultra` (sent as `xhigh`).
 */
export const CODEX_CLI_TOOLS = [
	fn('exec_command', 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.', { cmd: { type: 'string' }, workdir: { type: 'string' }, yield_time_ms: { type: 'number' } }, ['cmd']),
	fn('write_stdin', 'Writes characters to an existing unified exec session and returns recent output.', { chars: { type: 'string' }, session_id: { type: 'number' } }, ['session_id']),
	fn('view_image', 'View a local image file from the filesystem when visual inspection is needed.', { path: { type: 'string' } }, ['path']),
	{
		type: 'namespace',
		name: 'multi_agent_v1',
		description: 'Tools for spawning and managing sub-agents.',
		tools: [fn('close_agent', 'Close an agent.', { target: { type: 'string' } }, ['target']), fn('spawn_agent', 'Spawn a sub-agent.', { message: { type: 'string' }, fork_context: { type: 'boolean' } }, [])],
	},
	{ type: 'web_search', external_web_access: false },
]

const cliId = (prefix: string, n: number) => `${prefix}_01a22725-3492-7952-a757-${String(n).padStart(12, '0')}`

/** A message item as the CLI sends it: with its own id. */
export const cliMessage = (role: 'developer' | 'user', text: string, n: number): Item => ({ type: 'message', id: cliId('msg', n), role, content: [{ type: 'input_text', text }] })

/** The session's opening items: the base prompt and the permissions as developer messages, then the environment. */
export const cliPrefix = (): Item[] => [cliMessage('developer', CODEX_INSTRUCTIONS, 1), cliMessage('developer', '<permissions instructions>read-only</permissions instructions>', 2), cliMessage('user', CODEX_ENV, 3)]

/** One request body of the CLI (streamed); `effort` as `model_reasoning_effort` configures it. */
export function codexCliBody(model: string, input: Item[], effort?: string) {
	return {
		model,
		stream: true,
		input,
		tools: CODEX_CLI_TOOLS,
		tool_choice: 'auto',
		parallel_tool_calls: true,
		reasoning: { ...(effort && { effort }), summary: 'auto' },
		store: false,
		include: ['reasoning.encrypted_content'],
		prompt_cache_key: '01a22725-341b-7740-ad60-ffd2b1a4686d',
		client_metadata: { session_id: '01a22725-341b-7740-ad60-ffd2b1a4686d', turn_id: '01a22725-345b-7612-96fe-09cc2fadf585' },
	} as unknown as OpenAI.Responses.ResponseCreateParamsStreaming
}

/**
 * A response's output as the CLI 0.171 replays it: each item as received (ids, `status`, the message's annotations),
 * reasoning with `content: null`, all the calls of a step first and then their outputs (each with an `fco_` id).
 */
export function codexCliReplay(output: OpenAI.Responses.ResponseOutputItem[], outputs: Record<string, string> = {}): Item[] {
	const items: Item[] = []
	for (const o of output) {
		if (o.type === 'reasoning') items.push({ type: 'reasoning', id: o.id, summary: o.summary, content: null, encrypted_content: o.encrypted_content ?? null })
		else items.push({ ...(o as unknown as Item) })
	}
	let n = 0
	for (const o of output) if (o.type === 'function_call' && outputs[o.call_id] !== undefined) items.push({ type: 'function_call_output', id: cliId('fco', ++n), call_id: o.call_id, output: outputs[o.call_id] })
	return items
}

/**
 * Codex CLI 0.171's tool search, as recorded at the mock vendor for a catalog model with `supports_search_tool: true`:
 * run by the CLI itself (BM25 over its deferred MCP and app tools), described and parameterised by it.
 */
export const CODEX_TOOL_SEARCH = {
	type: 'tool_search',
	execution: 'client',
	description:
		'# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSome of the tools may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. For MCP tool discovery, always use `tool_search` instead of `list_mcp_resources` or `list_mcp_resource_templates`.',
	parameters: {
		type: 'object',
		properties: { limit: { type: 'number', description: 'Maximum number of tools to return. Defaults to 8.' }, query: { type: 'string', description: 'Search query for deferred tools.' } },
		required: ['query'],
		additionalProperties: false,
	},
}

/**
 * The `tool_search_output` the CLI sends back for a search it ran (`codex-rs` `ResponseInputItem::ToolSearchOutput`:
 * no id, `status` and `execution` beside the call's id), the tools loaded as deferred definitions. The CLI replays the
 * `tool_search_call` item as it received it (id, `call_id`, `status`, `execution`, `arguments`).
 */
export const codexSearchOutput = (callId: string, tools: unknown[]): Item => ({ type: 'tool_search_output', call_id: callId, status: 'completed', execution: 'client', tools })

/**
 * What the CLI's search loaded from an MCP server (`[mcp_servers.cal]`, tools `create_event` and `list_events`), as
 * recorded: a namespace per server, its functions deferred.
 */
export const CODEX_LOADED_MCP = {
	type: 'namespace',
	name: 'mcp__cal',
	description: 'Tools in the mcp__cal namespace.',
	tools: [
		{ type: 'function', name: 'create_event', description: 'Create a calendar event.', strict: false, defer_loading: true, parameters: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] } },
		{ type: 'function', name: 'list_events', description: 'List calendar events.', strict: false, defer_loading: true, parameters: { type: 'object', properties: { day: { type: 'string' } } } },
	],
}
