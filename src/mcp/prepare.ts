/**
 * A request's MCP servers, connected and listed once, before anything depends on the tools they offer: the relay's
 * reservation and the answer's counted input (relay/chat.ts), the channel attempts that run the agent loop
 * (attempt.ts), and the token counts (modules/count-tokens/counter.ts). All of them then see one prompt, round 1's
 * request as the model is sent it: the history in the model's view (history.ts), the MCP tools named for the model
 * (tools.ts) next to the caller's, and for each server that could not be reached the `tools/list` call and its error,
 * which the model reads as the turn before its own (Anthropic bills MCP tool definitions as input like any tool:
 * count_tokens "including tools", and its count takes `mcp_servers`: https://docs.anthropic.com/en/api/messages-count-tokens).
 * @module
 */
import type { Env } from '../config/env'
import type { StreamEvent } from '../core/events'
import type { ChatRequest, Message, Part } from '../core/ir'
import { newId } from '../lib/ids'
import type { ChatAdapter } from '../providers/adapter'
import { chatAdapterOf } from '../providers/registry'
import type { Channel } from '../routing/catalog'
import { modelView } from './history'
import { type McpSpec, wantsMcp } from './request'
import { isFailure, type McpFailure, type McpSession, openSession } from './session'
import { nameTools, type ToolNames } from './tools'

/** The MCP servers of one request, listed, and the prompt they make. */
export type McpPrepared = {
	sessions: Map<string, McpSession>
	names: ToolNames
	/** Blocks that open the answer (servers that could not be reached). */
	preamble: StreamEvent[]
	/** Round 1's request as the model is sent it (before images are inlined for a vendor that takes bytes only, and before the cap). */
	first: ChatRequest
	/** Hands the sessions to an agent loop, which closes them once it ends. */
	take(): void
	/** Ends the sessions in the background, unless a loop took them. Idempotent. */
	close(): void
}

/**
 * Whether the gateway is the MCP client for a request of `client`'s protocol sent through `adapter`: everywhere but an
 * Anthropic client on a channel with Anthropic's own connector (Bedrock and Vertex have none), where the body, beta
 * header and MCP blocks pass through the fast path untouched.
 */
export const gatewayRunsMcp = (client: string, adapter: ChatAdapter): boolean =>
	!(client === 'anthropic-messages' && adapter.protocol.name === 'anthropic-messages' && !adapter.withoutMcpConnector)

/** Whether a request naming MCP servers meets one on `ch` (through the API the channel would use for it, as the relay picks it). */
export function runsMcpOn(client: string, ch: Channel, ir: ChatRequest): boolean {
	const own = chatAdapterOf(ch, ir.model)
	if (!own) return false
	return gatewayRunsMcp(client, own.routeFor?.(ch, ch.modelMap[ir.model] ?? ir.model, ir) ?? own)
}

/** Whether `body` names MCP servers the gateway would connect to on one of `channels`. */
export const mcpOnRoute = (client: string, body: Record<string, unknown>, ir: ChatRequest, channels: Channel[]): boolean =>
	wantsMcp(body) && channels.some((ch) => runsMcpOn(client, ch, ir))

/** The MCP request that could not be made, in the answer and in the model's view. */
function unreachable(failures: McpFailure[], names: ToolNames): { events: StreamEvent[]; messages: Message[] } {
	const events: StreamEvent[] = []
	const calls: Part[] = []
	const results: Part[] = []
	failures.forEach((f, k) => {
		const id = newId('mcptoolu_')
		const use = 2 * k
		events.push(
			{ type: 'block_start', index: use, block: { kind: 'mcp_tool_use', id, name: 'tools/list', serverName: f.server } },
			{ type: 'block_stop', index: use },
			{ type: 'block_start', index: use + 1, block: { kind: 'mcp_tool_result', toolUseId: id, isError: true, content: [{ type: 'text', text: f.error }] } },
			{ type: 'block_stop', index: use + 1 },
		)
		const name = names.nameOf(f.server, 'tools/list')
		calls.push({ type: 'tool_call', id, name, input: {} })
		results.push({ type: 'tool_result', toolCallId: id, name, content: [{ type: 'text', text: f.error }], isError: true })
	})
	const messages: Message[] = failures.length ? [{ role: 'assistant', content: calls }, { role: 'user', content: results }] : []
	return { events, messages }
}

/**
 * Connects to every server of `spec` and lists the tools the request enables (in parallel, through the outbound guard,
 * each within MCP_CONNECT_TIMEOUT_MS). A server that cannot be reached fails nothing: it becomes the preamble.
 * @example const mcp = await prepareMcp(parseMcp(body, beta), ir, svc.env, signal); mcp.close()
 */
export async function prepareMcp(spec: McpSpec, ir: ChatRequest, env: Pick<Env, 'mcp' | 'fetchAllow'>, signal: AbortSignal): Promise<McpPrepared> {
	const opened = await Promise.all(spec.servers.map((s) => openSession(s, { allow: env.fetchAllow }, env.mcp, signal)))
	const sessions = new Map<string, McpSession>()
	for (const s of opened) if (!isFailure(s)) sessions.set(s.server, s)
	const callerTools = ir.tools ?? []
	const names = nameTools([...sessions.values()].flatMap((s) => s.tools), callerTools)
	const pre = unreachable(opened.filter(isFailure), names)
	const view = modelView(ir, names)
	const tools = [...callerTools, ...names.tools]
	const first = { ...view, messages: [...view.messages, ...pre.messages], ...(tools.length && { tools }) }
	let owned = true
	return {
		sessions,
		names,
		preamble: pre.events,
		first,
		take: () => {
			owned = false
		},
		close: () => {
			if (!owned) return
			owned = false
			// In the background: ending a session must not delay an answer, an error or a count.
			for (const s of sessions.values()) void s.close()
		},
	}
}
