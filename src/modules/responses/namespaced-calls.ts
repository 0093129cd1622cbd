/**
 * A converted answer's calls of namespaced functions, as OpenAI gives them: the vendor called the flat name the
 * function went upstream under (`crm__find`, protocols/openai-responses/namespaces.ts), and the client gets a
 * `function_call` item with `namespace: "crm"` and `name: "find"`, in the body, the stream's item and
 * arguments events and the final Response object. Codex CLI finds the tool to run by both.
 * @module
 */
import type { ProtocolCodec } from '../../protocols/codec'
import { isObject } from '../../protocols/openai-chat/guards'
import { namespacedNames } from '../../protocols/openai-responses/namespaces'
import { FINAL_EVENTS, mapOutput, tappedCodec } from './codec-tap'

type Names = NonNullable<ReturnType<typeof namespacedNames>>

/** The events that carry a function call's name: its item, its arguments' end, and a whole Response object. */
const NAMED = new Set(['response.output_item.added', 'response.output_item.done', 'response.function_call_arguments.done', ...FINAL_EVENTS])

function splitItem(item: unknown, names: Names): unknown {
	if (!isObject(item) || item.type !== 'function_call' || typeof item.name !== 'string') return item
	const n = names.get(item.name)
	return n ? { ...item, namespace: n.namespace, name: n.name } : item
}

const splitOutput = (r: Record<string, unknown>, names: Names) => mapOutput(r, (o) => splitItem(o, names))

/** The Responses codec with the calls of the request's namespaced functions split back (unchanged without namespace tools). */
export function namespacedCallsCodec<C extends ProtocolCodec>(codec: C, tools: unknown): C {
	const names = namespacedNames(tools)
	if (!names) return codec
	return tappedCodec(codec, {
		body: (body) => splitOutput(body, names),
		frame(f) {
			if (!f.event || !NAMED.has(f.event)) return f
			const e = JSON.parse(f.data) as Record<string, unknown>
			if (isObject(e.item)) e.item = splitItem(e.item, names)
			else if (isObject(e.response)) e.response = splitOutput(e.response, names)
			else if (typeof e.name === 'string' && names.has(e.name)) e.name = names.get(e.name)!.name
			else return f
			return { ...f, data: JSON.stringify(e) }
		},
	})
}
