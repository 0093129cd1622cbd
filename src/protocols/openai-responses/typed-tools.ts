/**
 * OpenAI's typed tools the client runs, whose calls are items of their own rather than `function_call`s
 * (https://platform.openai.com/docs/guides/tools-shell, …/tools-apply-patch, …/tools-local-shell):
 * - `shell` (GPT-5.1+): `shell_call` with `action {commands[], timeout_ms, max_output_length}`, answered by a
 *   `shell_call_output` whose `output` lists `{stdout, stderr, outcome}`; only with a local environment (or none):
 *   `container_auto` / `container_reference` run at OpenAI;
 * - `apply_patch` (GPT-5.1+): `apply_patch_call` with `operation {type: create_file|update_file|delete_file, path, diff}`,
 *   answered by an `apply_patch_call_output` (`status` completed|failed, `output` a log);
 * - `local_shell` (codex-mini): `local_shell_call` with `action {type: "exec", command[], env, timeout_ms,
 *   working_directory, user}`, answered by a `local_shell_call_output` whose `output` is a JSON string.
 * Other vendors have only functions, so each goes to them as a function of that name whose arguments are the call's
 * documented fields; their calls come back as the typed items (modules/responses/typed-calls.ts), and replayed typed
 * calls and outputs go back as that function's calls and results (items.ts). `computer_use_preview` is another
 * vocabulary altogether (screenshots in, mouse and keys out): request.ts refuses it for other vendors.
 * @module
 */
import type { Tool } from '../../core/ir'
import { isObject, str, type Json } from '../openai-chat/guards'

export type TypedKind = 'shell' | 'apply_patch' | 'local_shell'

/** The typed call item of each kind, and the item that answers it. */
export const CALL_ITEM: Record<TypedKind, string> = { shell: 'shell_call', apply_patch: 'apply_patch_call', local_shell: 'local_shell_call' }
const OUTPUT_ITEM: Record<string, TypedKind> = { shell_call_output: 'shell', apply_patch_call_output: 'apply_patch', local_shell_call_output: 'local_shell' }
const KIND_OF_CALL: Record<string, TypedKind> = { shell_call: 'shell', apply_patch_call: 'apply_patch', local_shell_call: 'local_shell' }

export const isTypedCallItem = (type: string) => type in KIND_OF_CALL
export const isTypedOutputItem = (type: string) => type in OUTPUT_ITEM

/** A `shell` tool the client runs: no environment, or a local one (a container is OpenAI's). */
const isLocalShell = (t: Json) => t.environment === undefined || t.environment === null || (isObject(t.environment) && t.environment.type === 'local')

/** The kind of a client-run typed tool, if `t` is one. */
export function typedKind(t: unknown): TypedKind | undefined {
	if (!isObject(t)) return undefined
	if (t.type === 'shell') return isLocalShell(t) ? 'shell' : undefined
	return t.type === 'apply_patch' || t.type === 'local_shell' ? t.type : undefined
}

const INT = { type: 'integer' }

/** The function each kind goes upstream as: the documented fields of its call, briefly described. */
const FUNCTIONS: Record<TypedKind, Tool> = {
	shell: {
		name: 'shell',
		description: "Runs shell commands on the user's machine, in order; returns each command's stdout, stderr and exit code.",
		parameters: {
			type: 'object',
			properties: {
				commands: { type: 'array', items: { type: 'string' }, description: 'The shell commands to run, in order.' },
				timeout_ms: { ...INT, description: 'Time limit for the commands, in milliseconds.' },
				max_output_length: { ...INT, description: 'Most characters of output to capture from each command.' },
			},
			required: ['commands'],
		},
	},
	apply_patch: {
		name: 'apply_patch',
		description:
			"Creates, updates or deletes one file of the user's workspace. `diff` is a V4A diff: for create_file the whole content, each line prefixed '+'; for update_file hunks of context (' '), removed ('-') and added ('+') lines, each hunk after an '@@' line; none for delete_file.",
		parameters: {
			type: 'object',
			properties: {
				type: { type: 'string', enum: ['create_file', 'update_file', 'delete_file'], description: 'The operation.' },
				path: { type: 'string', description: 'Path of the file, relative to the workspace root.' },
				diff: { type: 'string', description: 'The V4A diff (create_file and update_file).' },
			},
			required: ['type', 'path'],
		},
	},
	local_shell: {
		name: 'local_shell',
		description: "Runs one command on the user's machine (argv form, no shell unless the command starts one); returns its output.",
		parameters: {
			type: 'object',
			properties: {
				command: { type: 'array', items: { type: 'string' }, description: 'The command and its arguments.' },
				env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Environment variables to set.' },
				timeout_ms: { ...INT, description: 'Time limit, in milliseconds.' },
				working_directory: { type: 'string', description: 'Directory to run the command in.' },
				user: { type: 'string', description: 'User to run the command as.' },
			},
			required: ['command'],
		},
	},
}

/** A client-run typed tool → the function other vendors are offered in its place. */
export const typedToolFunction = (kind: TypedKind): Tool => FUNCTIONS[kind]

/**
 * The request's client-run typed tools, by the name of the function each goes upstream as (none: undefined).
 * @example typedToolNames([{ type: 'apply_patch' }, { type: 'function', name: 'ls' }]) // Map { 'apply_patch' => 'apply_patch' }
 */
export function typedToolNames(tools: unknown): Map<string, TypedKind> | undefined {
	let out: Map<string, TypedKind> | undefined
	if (Array.isArray(tools))
		for (const t of tools) {
			const kind = typedKind(t)
			if (kind) (out ??= new Map()).set(FUNCTIONS[kind].name, kind)
		}
	return out
}

function parsed(args: unknown): Json {
	if (isObject(args)) return args
	try {
		const v: unknown = JSON.parse(typeof args === 'string' && args ? args : '{}')
		return isObject(v) ? v : {}
	} catch {
		return {}
	}
}

const intOrNull = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : null)
const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : typeof v === 'string' ? [v] : [])

/**
 * The vendor's arguments for a typed tool's function → the typed call's own fields (`action` or `operation`).
 * @example typedCallFields('shell', '{"commands":["ls"]}') // { action: { commands: ['ls'], timeout_ms: null, max_output_length: null } }
 */
export function typedCallFields(kind: TypedKind, args: unknown): Json {
	const a = parsed(args)
	if (kind === 'shell') return { action: { commands: stringList(a.commands), timeout_ms: intOrNull(a.timeout_ms), max_output_length: intOrNull(a.max_output_length) } }
	if (kind === 'local_shell') {
		const env = isObject(a.env) ? Object.fromEntries(Object.entries(a.env).filter((e): e is [string, string] => typeof e[1] === 'string')) : {}
		return {
			action: { type: 'exec', command: stringList(a.command), env, timeout_ms: intOrNull(a.timeout_ms), working_directory: str(a.working_directory) ?? null, user: str(a.user) ?? null },
		}
	}
	const type = a.type === 'create_file' || a.type === 'delete_file' ? a.type : 'update_file'
	const path = str(a.path) ?? ''
	return { operation: type === 'delete_file' ? { type, path } : { type, path, diff: str(a.diff) ?? '' } }
}

/** A replayed typed call → the name and arguments of the function call it was (items.ts). */
export function typedCallArguments(item: Json): { name: string; input: Json } {
	const kind = KIND_OF_CALL[String(item.type)]!
	const action = isObject(item.action) ? item.action : {}
	if (kind === 'apply_patch') return { name: kind, input: isObject(item.operation) ? item.operation : {} }
	if (kind === 'shell') {
		const input: Json = { commands: stringList(action.commands) }
		if (typeof action.timeout_ms === 'number') input.timeout_ms = action.timeout_ms
		if (typeof action.max_output_length === 'number') input.max_output_length = action.max_output_length
		return { name: kind, input }
	}
	// What the model left out comes back null (`env` empty): left out again, so the call reads as the vendor made it
	// (Gemini's thought signature is of the call's arguments).
	const { type: _, ...rest } = action
	const given = ([k, v]: [string, unknown]) => v !== null && v !== undefined && !(k === 'env' && isObject(v) && !Object.keys(v).length)
	return { name: kind, input: Object.fromEntries(Object.entries(rest).filter(given)) }
}

/**
 * A replayed typed output → the function's name, the text of its result, and whether it failed.
 * @example typedOutputResult({ type: 'apply_patch_call_output', call_id: 'c', status: 'failed', output: 'no such file' }) // { name: 'apply_patch', text: 'failed: no such file', isError: true }
 */
export function typedOutputResult(item: Json): { name: string; text: string; isError: boolean } {
	const kind = OUTPUT_ITEM[String(item.type)]!
	if (kind === 'apply_patch') {
		const status = str(item.status) ?? 'completed'
		return { name: kind, text: `${status}${str(item.output) ? `: ${item.output}` : ''}`, isError: status === 'failed' }
	}
	if (kind === 'local_shell') return { name: kind, text: typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? ''), isError: false }
	// Each command's stdout, stderr and outcome, as OpenAI gives them to its own model.
	const chunks = Array.isArray(item.output) ? item.output.filter(isObject) : []
	return { name: kind, text: JSON.stringify(chunks.map((c) => ({ stdout: str(c.stdout) ?? '', stderr: str(c.stderr) ?? '', outcome: isObject(c.outcome) ? c.outcome : { type: 'exit', exit_code: 0 } }))), isError: false }
}

/** The `call_id` an output item answers (`local_shell_call_output` names it `id` in OpenAI's reference). */
export const outputCallId = (item: Json): unknown => item.call_id ?? (item.type === 'local_shell_call_output' ? item.id : undefined)
