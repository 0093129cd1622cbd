/**
 * A request shaped like Claude Code's `/v1/messages` calls: 30 tools with real-world JSON Schemas (`$schema`,
 * `additionalProperties`, enums, nested arrays of objects, union types), system blocks and a user block with
 * `cache_control`, `thinking` with a 31999-token budget, `max_tokens: 32000`, metadata, and the beta and client
 * headers it sends (no sampling parameters: the SDK's anthropic-version 2026-10-21 refuses them).
 * @module
 */

type Schema = Record<string, unknown>

const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
	$schema: 'http://json-schema.org/draft-07/schema#',
	type: 'object',
	properties,
	required,
	additionalProperties: false,
})

const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra })

/** The first two tools are the ones the mock calls (`command` and `pattern` are their first string properties). */
const CORE: Array<[string, string, Schema]> = [
	[
		'Bash',
		'Executes a bash command',
		obj({ command: str('The command'), timeout: { type: 'number', maximum: 600000 }, description: str('What it does'), run_in_background: { type: 'boolean' } }, ['command']),
	],
	['Glob', 'Fast file pattern matching', obj({ pattern: str('Glob pattern'), path: str('Directory') }, ['pattern'])],
	[
		'Grep',
		'Search file contents',
		obj(
			{
				pattern: str('Regex'),
				path: str('Path'),
				output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] },
				'-i': { type: 'boolean' },
				head_limit: { type: 'number' },
				multiline: { type: 'boolean' },
			},
			['pattern'],
		),
	],
	['Read', 'Read a file', obj({ file_path: str('Absolute path'), offset: { type: 'number' }, limit: { type: 'number' } }, ['file_path'])],
	[
		'Edit',
		'Replace text in a file',
		obj({ file_path: str('Path'), old_string: str('Old'), new_string: str('New'), replace_all: { type: 'boolean', default: false } }, ['file_path', 'old_string', 'new_string']),
	],
	[
		'MultiEdit',
		'Several edits to one file',
		obj(
			{
				file_path: str('Path'),
				edits: { type: 'array', minItems: 1, items: obj({ old_string: str('Old'), new_string: str('New'), replace_all: { type: 'boolean' } }, ['old_string', 'new_string']) },
			},
			['file_path', 'edits'],
		),
	],
	['Write', 'Write a file', obj({ file_path: str('Path'), content: str('Content') }, ['file_path', 'content'])],
	[
		'NotebookEdit',
		'Edit a notebook cell',
		obj(
			{
				notebook_path: str('Path'),
				cell_id: str('Cell'),
				new_source: str('Source'),
				cell_type: { type: 'string', enum: ['code', 'markdown'] },
				edit_mode: { type: 'string', enum: ['replace', 'insert', 'delete'] },
			},
			['notebook_path', 'new_source'],
		),
	],
	['WebFetch', 'Fetch a URL', obj({ url: str('URL', { format: 'uri' }), prompt: str('What to extract') }, ['url', 'prompt'])],
	[
		'WebSearch',
		'Search the web',
		obj({ query: str('Query', { minLength: 2 }), allowed_domains: { type: 'array', items: { type: 'string' } }, blocked_domains: { type: 'array', items: { type: 'string' } } }, ['query']),
	],
	[
		'TodoWrite',
		'Update the todo list',
		obj(
			{
				todos: {
					type: 'array',
					items: obj({ content: str('Task', { minLength: 1 }), status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] }, activeForm: str('Form') }, ['content', 'status', 'activeForm']),
				},
			},
			['todos'],
		),
	],
	['Task', 'Launch a sub-agent', obj({ description: str('Short description'), prompt: str('The task'), subagent_type: str('Agent type') }, ['description', 'prompt', 'subagent_type'])],
	['ExitPlanMode', 'Leave plan mode', obj({ plan: str('The plan') }, ['plan'])],
	['BashOutput', 'Read background shell output', obj({ bash_id: str('Shell id'), filter: str('Regex') }, ['bash_id'])],
	['KillShell', 'Kill a background shell', obj({ shell_id: str('Shell id') }, ['shell_id'])],
	['SlashCommand', 'Run a slash command', obj({ command: str('Command') }, ['command'])],
]

/** MCP-server tools fill the list up to 30, with the looser schemas MCP servers send (union types, no $schema). */
const MCP: Array<[string, string, Schema]> = Array.from({ length: 14 }, (_, i) => [
	`mcp__server${i % 3}__tool_${i}`,
	`MCP tool ${i}`,
	{ type: 'object', properties: { query: { type: 'string' }, limit: { type: ['integer', 'null'] }, options: { type: 'object', properties: { verbose: { type: 'boolean' } }, additionalProperties: true } }, required: ['query'] },
])

export const AGENT_TOOLS = [...CORE, ...MCP].map(([name, description, input_schema], i, all) => ({
	name,
	description,
	input_schema,
	// Claude Code marks the last tool as a cache breakpoint.
	...(i === all.length - 1 && { cache_control: { type: 'ephemeral' } }),
}))

export const AGENT_SYSTEM = [
	{ type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
	{ type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks. Be concise.', cache_control: { type: 'ephemeral' } },
]

export const AGENT_REMINDER = '<system-reminder>As you answer, keep the todo list current.</system-reminder>'
export const AGENT_ASK = 'fix the failing test #tools'

export const AGENT_HEADERS = {
	'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14',
	'x-app': 'cli',
	'user-agent': 'claude-cli/2.0.0 (external, cli)',
}

/** The first turn's body (without `model`); later turns append to `messages`. */
export function agentBody(messages: unknown[]) {
	return {
		max_tokens: 32000,
		thinking: { type: 'enabled', budget_tokens: 31999 },
		system: AGENT_SYSTEM,
		tools: AGENT_TOOLS,
		metadata: { user_id: 'user_0123abcd_account__session_4567' },
		messages,
	}
}

export const agentFirstUser = {
	role: 'user',
	content: [
		{ type: 'text', text: AGENT_REMINDER },
		{ type: 'text', text: AGENT_ASK, cache_control: { type: 'ephemeral' } },
	],
}
