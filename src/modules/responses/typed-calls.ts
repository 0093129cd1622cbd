/**
 * A converted answer's calls of OpenAI's client-run typed tools, as OpenAI gives them: the vendor called the function
 * a `shell`, `apply_patch` or `local_shell` tool went upstream as (protocols/openai-responses/typed-tools.ts), and the
 * client gets a `shell_call` / `apply_patch_call` / `local_shell_call` item (`call_id`, `action` or `operation`) in
 * the body, the stream's items and the final Response object. Such an item has no arguments events: its
 * `output_item.added` waits for the function's arguments to end (the action is known only then), the arguments
 * events are left out, and a shell call's commands are told by `shell_call_command.added`/`delta`/`done` events, one
 * set per command, before its `output_item.done`. The stream's `sequence_number`s are renumbered to stay 0, 1, 2….
 * The Agents SDK's `shellTool` / `applyPatchTool` run only from such items.
 * @module
 */
import type { SseFrame } from '../../core/sse'
import type { ProtocolCodec } from '../../protocols/codec'
import { isObject } from '../../protocols/openai-chat/guards'
import { CALL_ITEM, typedCallFields, typedToolNames, type TypedKind } from '../../protocols/openai-responses/typed-tools'
import { FINAL_EVENTS, mapOutput, tappedCodec } from './codec-tap'

type Item = Record<string, unknown>
type Names = Map<string, TypedKind>

const ARGUMENT_EVENTS = new Set(['response.function_call_arguments.delta', 'response.function_call_arguments.done'])

/** A `function_call` item of a typed tool's function → its typed call (any other item as it is). */
function typedItem(item: unknown, names: Names, status?: string): unknown {
	if (!isObject(item) || item.type !== 'function_call' || typeof item.name !== 'string') return item
	const kind = names.get(item.name)
	if (!kind) return item
	const { arguments: args, name: _, type: __, status: own, ...rest } = item
	return { ...rest, type: CALL_ITEM[kind], status: status ?? own, ...typedCallFields(kind, args), ...(kind === 'shell' && { environment: { type: 'local' } }) }
}

const typedOutput = (r: Item, names: Names) => mapOutput(r, (o) => typedItem(o, names))

/** The Responses codec with the calls of the request's client-run typed tools given back as such (unchanged without them). */
export function typedCallsCodec<C extends ProtocolCodec>(codec: C, tools: unknown): C {
	const names = typedToolNames(tools)
	if (!names) return codec
	// The `output_item.added` events held back until their call's arguments end, by item id.
	const held = new Map<string, Item>()
	let seq = 0
	const out = (f: SseFrame, e: Item): SseFrame => {
		if (typeof e.sequence_number === 'number') e.sequence_number = seq++
		return { ...f, data: JSON.stringify(e) }
	}
	const made = (type: string, e: Item): SseFrame => out({ event: type, data: '' }, { type, sequence_number: 0, ...e })
	/** The held `output_item.added` of a typed call, with the call's fields from its whole arguments. */
	const added = (id: string, args: unknown): SseFrame[] => {
		const e = held.get(id)
		if (!e || !isObject(e.item)) return []
		held.delete(id)
		const item = typedItem({ ...e.item, arguments: args }, names, 'in_progress') as Item
		const frames = [made('response.output_item.added', { output_index: e.output_index, item })]
		// A shell call's commands, each whole: the vendor's arguments are JSON, not the commands' own text.
		const commands = isObject(item.action) && item.type === 'shell_call' && Array.isArray(item.action.commands) ? (item.action.commands as string[]) : []
		commands.forEach((command, i) => {
			const at = { output_index: e.output_index, command_index: i }
			frames.push(made('response.shell_call_command.added', { ...at, command: '' }), made('response.shell_call_command.delta', { ...at, delta: command }), made('response.shell_call_command.done', { ...at, command }))
		})
		return frames
	}
	return tappedCodec(codec, {
		body: (body) => typedOutput(body, names),
		frame(f) {
			if (!f.event) return f
			const e = JSON.parse(f.data) as Item
			if (e.type === 'response.output_item.added' && isObject(e.item) && typedItem(e.item, names) !== e.item && typeof e.item.id === 'string') {
				held.set(e.item.id, e)
				return undefined
			}
			if (ARGUMENT_EVENTS.has(String(e.type)) && held.has(String(e.item_id))) return e.type === 'response.function_call_arguments.done' ? added(String(e.item_id), e.arguments) : undefined
			if (e.type === 'response.output_item.done' && isObject(e.item)) {
				const item = typedItem(e.item, names)
				if (item === e.item) return out(f, e)
				// Its added event went out at the arguments' end, unless the stream broke before them.
				const before = added(String(e.item.id), e.item.arguments)
				e.item = item
				return [...before, out(f, e)]
			}
			if (FINAL_EVENTS.has(String(e.type)) && isObject(e.response)) e.response = typedOutput(e.response, names)
			return out(f, e)
		},
	})
}
