/**
 * Tool search run by the client (`{type: "tool_search", execution: "client", description, parameters}`,
 * https://developers.openai.com/api/docs/guides/tools-tool-search): the model calls it with a `tool_search_call` item
 * whose `arguments` is an object (Codex CLI: `{query, limit}`), the client searches its own deferred tools and answers
 * with a `tool_search_output` item whose `tools` are the definitions loaded (functions, `namespace`s of functions, with
 * `defer_loading: true`), callable from the next request on without being listed again in `tools`. Codex CLI offers
 * it to the catalog models with `supports_search_tool`. Other vendors have no such tool, so it goes to them as a
 * function named `tool_search` with the client's own description and parameters; its calls come back to the client as
 * `tool_search_call` items (modules/responses/tool-search-calls.ts); a replayed call and its output are a call of that
 * function and its result; and every tool a replayed output loaded is offered upstream as a function from then on.
 * Search run at OpenAI (`execution` absent or `"server"`) needs OpenAI: request.ts `unconvertible` refuses it.
 * @module
 */
import type { Tool } from '../../core/ir'
import { isObject, str, type Json } from '../openai-chat/guards'

/** The name the search goes upstream under, and the function name of its calls. */
export const TOOL_SEARCH = 'tool_search'

/** The search's function when the client gave no description or parameters (OpenAI documents neither default). */
const DEFAULT_DESCRIPTION = 'Searches the deferred tools and loads the matching ones, callable from the next step on.'
const DEFAULT_PARAMETERS = { type: 'object', properties: { query: { type: 'string', description: 'Search query for deferred tools.' } }, required: ['query'] }

/** A tool search the client runs itself (the only kind another vendor can be offered). */
export const isClientToolSearch = (t: unknown): boolean => isObject(t) && t.type === 'tool_search' && t.execution === 'client'

/** Whether the request offers a client-run tool search. */
export const offersClientToolSearch = (tools: unknown): boolean => Array.isArray(tools) && tools.some(isClientToolSearch)

/** A client-run tool search → the function other vendors are offered in its place. */
export function toolSearchFunction(tool: Json): Tool {
	return {
		name: TOOL_SEARCH,
		description: str(tool.description) || DEFAULT_DESCRIPTION,
		parameters: isObject(tool.parameters) ? tool.parameters : DEFAULT_PARAMETERS,
	}
}

/** Whether an item is a record of a search the client ran (the others ran at OpenAI). */
export const isClientSearchItem = (item: Json) => (item.type === 'tool_search_call' || item.type === 'tool_search_output') && item.execution === 'client'

/**
 * The tool definitions the client's searches loaded, from the `tool_search_output` items of `input`, in order.
 * @example loadedTools([{ type: 'tool_search_output', execution: 'client', call_id: 's1', tools: [{ type: 'function', name: 'cal' }] }]) // [{ type: 'function', name: 'cal' }]
 */
export function loadedTools(input: unknown): Json[] {
	if (!Array.isArray(input)) return []
	return input.flatMap((item) => (isObject(item) && item.type === 'tool_search_output' && Array.isArray(item.tools) ? item.tools.filter(isObject) : []))
}

/** The tools of a request as offered: its own `tools` and those its replayed searches loaded. */
export function offeredTools(tools: unknown, input: unknown): unknown {
	const loaded = loadedTools(input)
	return loaded.length ? [...(Array.isArray(tools) ? tools : []), ...loaded] : tools
}

/** A replayed `tool_search_output` as the result the model reads: the definitions it loaded, as JSON (as Codex's own chat adapter gives them). */
export const searchOutputText = (tools: unknown) => JSON.stringify(Array.isArray(tools) ? tools : [])

/** A vendor's arguments for the search's function → the `arguments` object of a `tool_search_call` item. */
export function searchArgumentsOf(args: unknown): Json {
	if (isObject(args)) return args
	try {
		const v: unknown = JSON.parse(typeof args === 'string' && args ? args : '{}')
		if (isObject(v)) return v
	} catch {
		// Not JSON: the model wrote its query itself.
	}
	return { query: String(args) }
}
