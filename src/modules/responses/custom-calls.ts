/**
 * A converted answer's calls of custom (freeform) tools, as OpenAI gives them: the vendor called the function of one
 * string the tool went upstream as (protocols/openai-responses/custom-tools.ts), and the client gets a
 * `custom_tool_call` item with that string as `input`, in the body, the stream's items, the input's
 * `custom_tool_call_input.delta`/`done` events (one for each arguments event, so the sequence stays whole) and the
 * final Response object. Codex CLI runs its `apply_patch` only from such an item.
 * @module
 */
import type { ProtocolCodec } from '../../protocols/codec'
import { isObject } from '../../protocols/openai-chat/guards'
import { customInputDelta, customInputOf, customInputReader, customToolNames, type CustomInputReader } from '../../protocols/openai-responses/custom-tools'
import { FINAL_EVENTS, mapOutput, tappedCodec } from './codec-tap'

type Item = Record<string, unknown>

/** The events that carry a call: its item, its arguments, and a whole Response object. */
const CALL_EVENTS = new Set(['response.output_item.added', 'response.output_item.done', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', ...FINAL_EVENTS])

/** A `function_call` item of a custom tool → its `custom_tool_call` (any other item as it is). */
function customItem(item: unknown, names: Set<string>): unknown {
	if (!isObject(item) || item.type !== 'function_call' || typeof item.name !== 'string' || !names.has(item.name)) return item
	const { arguments: args, ...rest } = item
	return { ...rest, type: 'custom_tool_call', input: typeof args === 'string' && args ? customInputOf(args) : '' }
}

const customOutput = (r: Item, names: Set<string>) => mapOutput(r, (o) => customItem(o, names))

/** The Responses codec with the calls of the request's custom tools given back as such (unchanged without custom tools). */
export function customCallsCodec<C extends ProtocolCodec>(codec: C, tools: unknown): C {
	const names = customToolNames(tools)
	if (!names) return codec
	// How far the streamed arguments of each custom call were read, by item id.
	const args = new Map<string, CustomInputReader>()
	return tappedCodec(codec, {
		body: (body) => customOutput(body, names),
		frame(f) {
			if (!f.event || !CALL_EVENTS.has(f.event)) return f
			const e = JSON.parse(f.data) as Item
			if ((e.type === 'response.output_item.added' || e.type === 'response.output_item.done') && isObject(e.item)) {
				const item = customItem(e.item, names)
				if (item === e.item) return f
				if (e.type === 'response.output_item.added' && typeof e.item.id === 'string') args.set(e.item.id, customInputReader())
				e.item = item
			} else if (FINAL_EVENTS.has(String(e.type)) && isObject(e.response)) e.response = customOutput(e.response, names)
			else if (e.type === 'response.function_call_arguments.delta' && args.has(String(e.item_id))) {
				const delta = customInputDelta(args.get(String(e.item_id))!, String(e.delta ?? ''))
				return { ...f, event: 'response.custom_tool_call_input.delta', data: JSON.stringify({ ...e, type: 'response.custom_tool_call_input.delta', delta }) }
			} else if (e.type === 'response.function_call_arguments.done' && args.has(String(e.item_id))) {
				const { arguments: whole, name: _, ...rest } = e
				return { ...f, event: 'response.custom_tool_call_input.done', data: JSON.stringify({ ...rest, type: 'response.custom_tool_call_input.done', input: customInputOf(String(whole ?? '')) }) }
			} else return f
			return { ...f, data: JSON.stringify(e) }
		},
	})
}
