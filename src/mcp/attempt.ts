/**
 * MCP for every model (issue 8), the relay's side: a request that names MCP servers, on a channel that cannot run
 * them itself, is answered by the gateway acting as the MCP client. An Anthropic client on an Anthropic channel keeps
 * the vendor's own MCP connector: its body, beta header and MCP blocks pass through the fast path untouched.
 *
 * Per channel attempt: validate the request (a bad entry is a 400 naming it), connect to every server and list the
 * enabled tools (in parallel, through the outbound guard), start round 1 (a failure there may still fail over to
 * another channel, and closes the sessions), then answer from the loop (loop.ts), streamed or whole. A server that
 * cannot be reached does not fail the request: the answer opens with an `mcp_tool_use` of its `tools/list` and an
 * `mcp_tool_result` with `is_error: true`, and the model sees the same call and error as the turn before its own.
 *
 * Through chat completions the same field (`mcp_servers`, with `tool_configuration` per server) is accepted; the
 * answer carries the calls in `message.mcp_calls` (protocols/openai-chat/mcp.ts).
 * @module
 */
import { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import type { Message, Part } from '../core/ir'
import { encodeSse, formatSse } from '../core/sse'
import { errorResponse } from '../http/error-shapes'
import { newId } from '../lib/ids'
import type { ChatAdapter } from '../providers/adapter'
import { type Budget, type CallInfo, withUpstreamCap } from '../relay/budget'
import type { ChatCall } from '../relay/chat'
import { inlineImageUrls } from '../relay/images'
import { sseResponse } from '../relay/sse-response'
import { SHUTTING_DOWN } from '../relay/stream-relay'
import { takesBytesOnly } from '../relay/upstream-codec'
import type { Channel } from '../routing/catalog'
import { collectResponse } from './events'
import { modelView } from './history'
import { mcpLoop } from './loop'
import { parseMcp, wantsMcp } from './request'
import { openRound, type RoundTarget } from './round'
import { isFailure, type McpFailure, type McpSession, openSession } from './session'
import { nameTools, type ToolNames } from './tools'
import type { ResponseAttempt as Attempt } from '../routing/attempts'

/** Whether this attempt is the gateway's to run as an MCP client (not the Anthropic channel's own connector; Bedrock has none). */
export function runsMcpHere(call: Pick<ChatCall, 'body' | 'client'>, adapter: ChatAdapter): boolean {
	return wantsMcp(call.body) && !(call.client.name === 'anthropic-messages' && adapter.protocol.name === 'anthropic-messages' && !adapter.withoutMcpConnector)
}

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

/** Runs one channel attempt of an MCP request. */
export async function mcpAttempt(call: ChatCall, info: CallInfo, ch: Channel, adapter: ChatAdapter, budget: Budget): Promise<Attempt> {
	let spec
	try {
		spec = parseMcp(call.body, call.inbound.get('anthropic-beta'))
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const limits = call.svc.env.mcp
	const guard = { allow: call.svc.env.fetchAllow }
	const ctl = new AbortController()
	if (call.signal.aborted) ctl.abort()
	else call.signal.addEventListener('abort', () => ctl.abort(), { once: true })

	const opened = await Promise.all(spec.servers.map((s) => openSession(s, guard, limits, ctl.signal)))
	const sessions = new Map<string, McpSession>()
	for (const s of opened) if (!isFailure(s)) sessions.set(s.server, s)
	// Ending sessions runs in the background: it must not delay an error or the next channel's attempt.
	const closeAll = () => {
		for (const s of sessions.values()) void s.close()
	}
	const callerTools = call.ir.tools ?? []
	const names = nameTools([...sessions.values()].flatMap((s) => s.tools), callerTools)
	const pre = unreachable(opened.filter(isFailure), names)

	let view = modelView(call.ir, names)
	try {
		// As on the plain chat path (relay/upstream-codec.ts): Gemini's APIs and Converse take files as bytes only.
		if (takesBytesOnly(adapter.protocol)) view = await inlineImageUrls(view, guard, call.svc.env.maxFetchedUrls)
	} catch (e) {
		closeAll()
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const tools = [...callerTools, ...names.tools]
	const first = { ...view, messages: [...view.messages, ...pre.messages], ...(tools.length && { tools }) }
	const target: RoundTarget = { call, ch, adapter, upstreamModel: ch.modelMap[call.ir.model] ?? call.ir.model, signal: ctl.signal }
	const round = await openRound(target, withUpstreamCap(first, budget, adapter.protocol.requiresMaxTokens === true))
	if ('error' in round) {
		closeAll()
		return round
	}
	const loop = mcpLoop({ target, info, limits, sessions, names, first, preamble: pre.events, round, budget })
	const headers = { 'x-request-id': call.requestId }

	if (!call.ir.stream) {
		try {
			const res = await collectResponse(loop.events, call.ir.model)
			const body = call.client.encodeResponse(res, { model: call.ir.model, includeUsage: call.includeUsage, includeThoughts: call.ir.reasoning?.includeThoughts })
			return { ok: new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json', ...headers } }) }
		} catch (e) {
			// The rounds so far are billed; failing over now would run the MCP tools a second time.
			return { ok: errorResponse(e, call.shape, call.requestId) }
		}
	}

	const ctx = { model: call.ir.model, includeUsage: call.includeUsage, includeThoughts: call.ir.reasoning?.includeThoughts, countInputTokens: budget.countInput }
	const gauge = call.svc.metrics.openStreams
	gauge.inc()
	let counted = true
	const uncount = () => {
		if (counted) gauge.dec()
		counted = false
	}
	// A client gone before the body was read: the events never run, so their cleanup (billing, sessions) runs here.
	ctl.signal.addEventListener('abort', () => void loop.abandon().finally(uncount), { once: true })
	async function* bytes(): AsyncGenerator<Uint8Array> {
		try {
			for await (const f of call.client.encodeStream(loop.events, ctx)) yield encodeSse(f)
		} catch {
			if (!ctl.signal.aborted) yield encodeSse(call.client.encodeStreamError(new GatewayError('upstream', 'the upstream stream failed', { code: 'upstream_stream_error' })))
		} finally {
			await loop.events.return(undefined)
			uncount()
		}
	}
	return { ok: await sseResponse(bytes(), () => ctl.abort(), headers, call.svc.env.keepaliveMs, formatSse(call.client.encodeStreamError(SHUTTING_DOWN))) }
}
