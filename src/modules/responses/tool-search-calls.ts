/**
 * A converted answer's calls of a client-run tool search, as OpenAI gives them: the vendor called the `tool_search`
 * function the search went upstream as (protocols/openai-responses/tool-search.ts), and the client gets a
 * `tool_search_call` item (`execution: "client"`, `arguments` an object, `call_id`) in the body, the stream's
 * `output_item.added` / `output_item.done` events and the final Response object. Such an item has no arguments
 * events, so the function's `function_call_arguments.delta` / `done` events are left out and the later events'
 * `sequence_number`s closed up. Codex CLI runs its search only from such an item.
 * @module
 */
import type { SseFrame } from '../../core/sse'
import type { ProtocolCodec } from '../../protocols/codec'
import { isObject } from '../../protocols/openai-chat/guards'
import { offersClientToolSearch, searchArgumentsOf, TOOL_SEARCH } from '../../protocols/openai-responses/tool-search'
import { FINAL_EVENTS, mapOutput, tappedCodec } from './codec-tap'

type Item = Record<string, unknown>

const ARGUMENT_EVENTS = new Set(['response.function_call_arguments.delta', 'response.function_call_arguments.done'])

/** A `function_call` item of the search's function → its `tool_search_call` (any other item as it is). */
function searchItem(item: unknown): unknown {
	if (!isObject(item) || item.type !== 'function_call' || item.name !== TOOL_SEARCH) return item
	const { arguments: args, name: _, ...rest } = item
	return { ...rest, type: 'tool_search_call', execution: 'client', arguments: searchArgumentsOf(args) }
}

const searchOutput = (r: Item) => mapOutput(r, searchItem)

/** The Responses codec with the calls of a client-run tool search given back as such (unchanged without one). */
export function toolSearchCallsCodec<C extends ProtocolCodec>(codec: C, tools: unknown): C {
	if (!offersClientToolSearch(tools)) return codec
	// The ids of the search's items in this stream, and how many frames were left out so far.
	const searches = new Set<string>()
	let dropped = 0
	const renumbered = (f: SseFrame, e: Item): SseFrame => {
		if (dropped && typeof e.sequence_number === 'number') e.sequence_number -= dropped
		return { ...f, data: JSON.stringify(e) }
	}
	return tappedCodec(codec, {
		body: searchOutput,
		frame(f) {
			if (!f.event?.startsWith('response.')) return f
			const e = JSON.parse(f.data) as Item
			if ((e.type === 'response.output_item.added' || e.type === 'response.output_item.done') && isObject(e.item)) {
				const item = searchItem(e.item)
				if (item !== e.item && typeof e.item.id === 'string') searches.add(e.item.id)
				e.item = item
			} else if (FINAL_EVENTS.has(String(e.type)) && isObject(e.response)) e.response = searchOutput(e.response)
			else if (ARGUMENT_EVENTS.has(String(e.type)) && searches.has(String(e.item_id))) {
				dropped++
				return undefined
			} else if (!dropped) return f
			return renumbered(f, e)
		},
	})
}
