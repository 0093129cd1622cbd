/**
 * Anthropic-defined tools the client runs: a versioned `type` and a fixed `name`, no `input_schema` (Claude knows
 * the input), and calls that come as ordinary `tool_use` blocks answered by ordinary `tool_result` blocks
 * (https://platform.claude.com/docs/en/agents-and-tools/tool-use/bash-tool, …/text-editor-tool, …/memory-tool,
 * …/computer-use-tool). Other vendors know none of them, so each goes to them as a function under its fixed name
 * with the input Anthropic documents and a description saying what it does; the vendor's calls of it are then the
 * client's `tool_use` blocks as they stand. Claude gets the tool as written (request-encode.ts leaves the function out).
 * @module
 */
import type { Tool } from '../../core/ir'
import { at, invalid, type Json } from './check'
import { decodeCacheControl } from './content'

type Schema = Record<string, unknown>

// Schemas are built for each request, as a decoded tool's own: an encoder may adapt one to its vendor in place.

const str = (description: string) => ({ type: 'string', description })
const int = (description: string) => ({ type: 'integer', description })
const point = (description: string) => ({ type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2, description })
const object = (properties: Record<string, unknown>, required: string[]): Schema => ({ type: 'object', properties, ...(required.length && { required }) })

const bash = (): Omit<Tool, 'name'> => ({
	description: 'Runs a command in a persistent bash session (working directory, variables and files are kept between calls) and returns its output. Set restart to true to restart the session.',
	parameters: object({ command: str('The bash command to run. Required unless restarting.'), restart: { type: 'boolean', description: 'Restart the bash session.' } }, []),
})

const viewRange = () => ({ type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2, description: 'view: [start, end] lines to show, from 1; end -1 for the rest of the file.' })

/**
 * The text editor. Claude 4's versions (`str_replace_based_edit_tool`) have no `undo_edit` and take the text of an
 * `insert` as `insert_text` (what the model sends: anthropics/anthropic-sdk-python#1155); the earlier ones
 * (`str_replace_editor`) have `undo_edit` and take it as `new_str`.
 */
function textEditor(legacy: boolean): Omit<Tool, 'name'> {
	const insertText = legacy ? 'new_str' : 'insert_text'
	const commands = ['view', 'create', 'str_replace', 'insert', ...(legacy ? ['undo_edit'] : [])]
	const properties: Record<string, unknown> = {
		command: { type: 'string', enum: commands, description: 'The command to run.' },
		path: str('Absolute path of the file or directory.'),
		view_range: viewRange(),
		file_text: str('create: the content of the new file.'),
		old_str: str('str_replace: the exact text to replace; it must occur exactly once in the file.'),
		new_str: str(legacy ? 'str_replace: the replacement text. insert: the text to insert.' : 'str_replace: the replacement text.'),
		insert_line: int('insert: the line after which to insert (0: at the start of the file).'),
	}
	if (!legacy) properties.insert_text = str('insert: the text to insert.')
	return {
		description:
			'Views, creates and edits text files. view: a file with line numbers, or a directory listing. create: a new file of file_text. ' +
			`str_replace: replaces old_str with new_str. insert: inserts ${insertText} after line insert_line.${legacy ? ' undo_edit: reverts the last edit of the file.' : ''}`,
		parameters: object(properties, ['command', 'path']),
	}
}

const memory = (): Omit<Tool, 'name'> => ({
	description:
		'Your memory: a directory, /memories, of files kept across conversations. View it before starting a task and keep it up to date with what you learn and what is in progress. ' +
		'Commands: view (a file with line numbers or a directory), create, str_replace, insert, delete, rename. Paths are under /memories.',
	parameters: object(
		{
			command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'], description: 'The command to run.' },
			path: str('Path of the file or directory (all commands but rename).'),
			view_range: viewRange(),
			file_text: str('create: the content of the file.'),
			old_str: str('str_replace: the exact text to replace; it must occur exactly once.'),
			new_str: str('str_replace: the replacement text.'),
			insert_line: int('insert: the line after which to insert (0: at the start).'),
			insert_text: str('insert: the text to insert.'),
			old_path: str('rename: the current path.'),
			new_path: str('rename: the new path.'),
		},
		['command'],
	),
})

const ACTIONS_20241022 = ['key', 'type', 'mouse_move', 'left_click', 'left_click_drag', 'right_click', 'middle_click', 'double_click', 'screenshot', 'cursor_position']
const ACTIONS_20250124 = [...ACTIONS_20241022, 'scroll', 'triple_click', 'left_mouse_down', 'left_mouse_up', 'hold_key', 'wait']

/** Computer use: the actions of its version (`zoom` only where `enable_zoom` is on), the display in the description. */
function computer(tool: Json): Omit<Tool, 'name'> {
	const v2024 = tool.type === 'computer_20241022'
	const zoom = tool.type === 'computer_20251124' && tool.enable_zoom === true
	const actions = v2024 ? ACTIONS_20241022 : [...ACTIONS_20250124, ...(zoom ? ['zoom'] : [])]
	const properties: Record<string, unknown> = {
		action: { type: 'string', enum: actions, description: 'The action to take.' },
		coordinate: point('[x, y] in pixels from the top left: where to click, move, scroll (or the end of a drag).'),
		text: str('type: the text to type. key, hold_key: the key or combination, in xdotool names (Return, ctrl+s). Clicks and scroll: keys to hold down.'),
	}
	if (!v2024) {
		Object.assign(properties, {
			start_coordinate: point('left_click_drag: [x, y] where the drag starts.'),
			scroll_direction: { type: 'string', enum: ['up', 'down', 'left', 'right'], description: 'scroll: the direction.' },
			scroll_amount: int('scroll: how many wheel clicks.'),
			duration: { type: 'number', description: 'hold_key, wait: seconds.' },
		})
	}
	if (zoom) properties.region = { type: 'array', items: { type: 'integer' }, minItems: 4, maxItems: 4, description: 'zoom: [x0, y0, x1, y1], the region of the screen to see up close.' }
	const display = typeof tool.display_number === 'number' ? ` (X11 display :${tool.display_number})` : ''
	return {
		description:
			`Controls a computer through its screen, mouse and keyboard. The screen is ${String(tool.display_width_px)}x${String(tool.display_height_px)} pixels${display}. ` +
			'Take a screenshot to see it, and another after acting to check the result.',
		parameters: object(properties, ['action']),
	}
}

/** Client-run tool types → their fixed name and the function other vendors get. */
const CLIENT_TOOLS: Record<string, { name: string; fn: (tool: Json) => Omit<Tool, 'name'> }> = {
	bash_20241022: { name: 'bash', fn: bash },
	bash_20250124: { name: 'bash', fn: bash },
	text_editor_20241022: { name: 'str_replace_editor', fn: () => textEditor(true) },
	text_editor_20250124: { name: 'str_replace_editor', fn: () => textEditor(true) },
	text_editor_20250429: { name: 'str_replace_based_edit_tool', fn: () => textEditor(false) },
	text_editor_20250728: { name: 'str_replace_based_edit_tool', fn: () => textEditor(false) },
	memory_20250818: { name: 'memory', fn: memory },
	computer_20241022: { name: 'computer', fn: computer },
	computer_20250124: { name: 'computer', fn: computer },
	computer_20251124: { name: 'computer', fn: computer },
}

/** Whether a tool type is one of Anthropic's that the client runs (not a server tool). */
export const isClientTool = (type: unknown): boolean => typeof type === 'string' && Object.hasOwn(CLIENT_TOOLS, type)

/**
 * A client-run Anthropic tool → the function other vendors are offered in its place. Its name must be the fixed one,
 * as Anthropic checks it.
 * @example clientToolFunction({ type: 'bash_20250124', name: 'bash' }, 'tools.0').name === 'bash'
 */
export function clientToolFunction(tool: Json, path: string): Tool {
	const def = CLIENT_TOOLS[tool.type as string]!
	if (tool.name !== def.name) throw invalid(at(path, 'name'), `Input should be '${def.name}'`)
	const out: Tool = { name: def.name, ...def.fn(tool) }
	const cc = decodeCacheControl(tool, path)
	if (cc) out.cacheControl = cc
	return out
}
