/**
 * MCP calls the gateway ran for a chat-completions client (src/mcp). Chat completions has no MCP items, and putting
 * them in `tool_calls` would make clients run them a second time, so they ride in an extension field of the message,
 * `mcp_calls`, shaped like the Responses API's `mcp_call` output item
 * (https://platform.openai.com/docs/api-reference/responses/object: `{id, type:'mcp_call', name, arguments, output,
 * error}`) with `server_name` as the request's `mcp_servers[].name`. Clients that do not know the field ignore it; the
 * answer's text and `finish_reason` are what they would be without MCP.
 *
 * Streaming follows `tool_calls` deltas: the first delta of a call carries `index`, `id`, `type`, `server_name`,
 * `name` and `arguments: ''`, later ones `index` + `arguments` fragments, and the result one `index` + `output` or
 * `error`.
 * @module
 */
import type { ChatResponse, TextPart } from '../../core/ir'

export type McpCall = {
	id: string
	type: 'mcp_call'
	server_name: string
	name: string
	/** JSON text, as `function.arguments`. */
	arguments: string
	/** The tool's text when it succeeded, else null. */
	output: string | null
	/** The error text when the call failed, else null. */
	error: string | null
}

const textOf = (content: TextPart[]) => content.map((c) => c.text).join('\n')

/** The `output` / `error` pair of a result. */
export const mcpOutcome = (r: { isError: boolean; content: TextPart[] }): Pick<McpCall, 'output' | 'error'> =>
	r.isError ? { output: null, error: textOf(r.content) || 'the MCP tool call failed' } : { output: textOf(r.content), error: null }

/** The MCP calls of a response with their results, in call order (empty when there are none). */
export function encodeMcpCalls(content: ChatResponse['content']): McpCall[] {
	const calls: McpCall[] = []
	const byId = new Map<string, McpCall>()
	for (const p of content) {
		if (p.type === 'mcp_tool_use') {
			const call: McpCall = { id: p.id, type: 'mcp_call', server_name: p.serverName, name: p.name, arguments: JSON.stringify(p.input), output: null, error: null }
			calls.push(call)
			byId.set(p.id, call)
		} else if (p.type === 'mcp_tool_result') {
			const call = byId.get(p.toolUseId)
			if (call) Object.assign(call, mcpOutcome(p))
		}
	}
	return calls
}
