/**
 * Requests shaped like Anthropic's Claude Agent SDK (`@anthropic-ai/claude-agent-sdk` 0.3.332, which runs Claude Code
 * 2.1.332 underneath), as captured on the wire against the gateway: `POST /v1/messages?beta=true`, streamed, with
 * adaptive thinking shown as progress notes (`display: "updates"`, beta `thinking-display-updates-2026-08-18`),
 * `output_config.effort`, `context_management`, a `role: "system"` message after the first user turn, and tool search
 * (beta `advanced-tool-use-2025-11-20`): MCP and rarely used tools are held back as `defer_loading: true` (a
 * `DeferredToolPlaceholder` while none is loaded), its `ToolSearch` tool answers with `tool_reference` blocks, and the
 * tools so loaded are sent, still deferred, with every later request. The Agent SDK bundles a 200 MB platform
 * binary, so the tests replay this shape rather than run it.
 * @module
 */

type Block = Record<string, unknown>
type Message = { role: 'user' | 'assistant' | 'system'; content: string | Block[] }

export const AGENT_SDK_HEADERS = {
	'anthropic-beta':
		'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24,thinking-display-updates-2026-08-18',
	'user-agent': 'claude-cli/2.1.332 (external, sdk-ts, agent-sdk/0.3.332)',
	'x-app': 'cli',
	'x-claude-code-session-id': 'd995acd1-d704-427d-a418-575c6fa24c6b',
}

export const AGENT_SDK_SYSTEM = [
	{ type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.eec; cc_entrypoint=sdk-ts;' },
	{ type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK.", cache_control: { type: 'ephemeral' } },
]

/** The environment and deferred-tool list Claude Code sends as a system message after the first user turn. */
export const AGENT_SDK_ENV = {
	role: 'system' as const,
	content: [
		{
			type: 'text',
			text: '# Environment\n - Primary working directory: /work\n\nThe following deferred tools are now available via ToolSearch:\nWebFetch\nmcp__calc__add',
			cache_control: { type: 'ephemeral' },
		},
	],
}

/** Claude Code's `metadata.user_id`: a JSON object of 150 characters (OpenAI takes a `user` of at most 64). */
export const USER_ID = JSON.stringify({ device_id: '8919e762b8b113ac93cb599d71dae7786f12bc9387957a67082dc5769e06bb00', account_uuid: '', session_id: 'd995acd1-d704-427d-a418-575c6fa24c6b' })

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema'

export const READ_TOOL = {
	name: 'Read',
	description: 'Reads a file from the local filesystem.',
	input_schema: { $schema: SCHEMA, type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'], additionalProperties: false },
}
export const TOOL_SEARCH = {
	name: 'ToolSearch',
	description: 'Fetches full schema definitions for deferred tools so they can be called.',
	input_schema: { $schema: SCHEMA, type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'number' } }, required: ['query'], additionalProperties: false },
}
export const PLACEHOLDER = { name: 'DeferredToolPlaceholder', description: 'Reserved placeholder that keeps deferred tool loading active; never call this tool.', input_schema: { type: 'object', properties: {} }, defer_loading: true }
/** An in-process MCP tool (`createSdkMcpServer({name: 'calc'})` + `tool('add', …)`), deferred once ToolSearch loaded it. */
export const CALC_ADD = {
	name: 'mcp__calc__add',
	description: 'Adds two numbers',
	input_schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
	defer_loading: true,
}

/** One Agent SDK request body (streamed). */
export function agentSdkBody(model: string, messages: Message[], tools: Block[] = [READ_TOOL, TOOL_SEARCH, PLACEHOLDER]) {
	return {
		model,
		messages,
		system: AGENT_SDK_SYSTEM,
		tools,
		metadata: { user_id: USER_ID },
		max_tokens: 32000,
		thinking: { type: 'adaptive', display: 'updates' },
		context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
		output_config: { effort: 'high' },
		stream: true,
	}
}

/**
 * The request its WebSearch tool makes (a side call on the session's model): Anthropic's web search server tool, no
 * thinking, and the same 150-character `metadata.user_id`.
 */
export function agentSdkWebSearchBody(model: string, query: string) {
	return {
		model,
		messages: [{ role: 'user', content: [{ type: 'text', text: `Perform a web search for the query: ${query}` }] }],
		system: [
			...AGENT_SDK_SYSTEM.map(({ type, text }) => ({ type, text })),
			{ type: 'text', text: 'You run a web search for another Claude model, which is waiting on the result and can search again. Search once, then reply with a brief summary of the results.' },
		],
		tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 8 }],
		tool_choice: { type: 'auto' },
		metadata: { user_id: USER_ID },
		max_tokens: 32000,
		output_config: { effort: 'high' },
		stream: true,
	}
}
