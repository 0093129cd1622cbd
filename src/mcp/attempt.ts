/**
 * MCP for every model (issue 8), the relay's side: a request that names MCP servers, on a channel that cannot run
 * them itself, is answered by the gateway acting as the MCP client. An Anthropic client on an Anthropic channel keeps
 * the vendor's own MCP connector: its body, beta header and MCP blocks pass through the fast path untouched.
 *
 * Once per request, before the reservation: validate the request (a bad entry is a 400 naming it), connect to every
 * server and list the enabled tools (in parallel, through the outbound guard: prepare.ts). Per channel attempt: start
 * round 1 (a failure there may still fail over to another channel, on the same sessions), then answer from the loop
 * (loop.ts), streamed or whole; sessions no loop took end with the request (relay/chat.ts). A server that
 * cannot be reached does not fail the request: the answer opens with an `mcp_tool_use` of its `tools/list` and an
 * `mcp_tool_result` with `is_error: true`, and the model sees the same call and error as the turn before its own.
 *
 * Through chat completions the same field (`mcp_servers`, with `tool_configuration` per server) is accepted; the
 * answer carries the calls in `message.mcp_calls` (protocols/openai-chat/mcp.ts).
 * @module
 */
import { GatewayError } from '../core/errors'
import { encodeSse, formatSse } from '../core/sse'
import { errorResponse } from '../http/error-shapes'
import type { ChatAdapter } from '../providers/adapter'
import { type Budget, type CallInfo, withUpstreamCap } from '../relay/budget'
import type { ChatCall } from '../relay/chat'
import { inlineImageUrls } from '../relay/images'
import { sseResponse } from '../relay/sse-response'
import { SHUTTING_DOWN } from '../relay/stream-relay'
import { takesBytesOnly } from '../relay/upstream-codec'
import type { Channel } from '../routing/catalog'
import { collectResponse } from './events'
import { mcpLoop } from './loop'
import { gatewayRunsMcp, mcpOnRoute, type McpPrepared, prepareMcp } from './prepare'
import { parseMcp, wantsMcp } from './request'
import { openRound, type RoundTarget } from './round'
import type { ResponseAttempt as Attempt } from '../routing/attempts'

/** Whether this attempt is the gateway's to run as an MCP client (not the Anthropic channel's own connector; Bedrock has none). */
export function runsMcpHere(call: Pick<ChatCall, 'body' | 'client'>, adapter: ChatAdapter): boolean {
	return wantsMcp(call.body) && gatewayRunsMcp(call.client.name, adapter)
}

/**
 * The request's MCP servers, validated, connected and listed (prepare.ts), before the reservation, which covers the
 * tools they add; undefined when no channel of the route has the gateway run them.
 * @throws GatewayError('invalid_request') naming a bad entry, e.g. `mcp_servers.1.url: …`
 */
export function mcpOfRequest(call: ChatCall, channels: Channel[]): Promise<McpPrepared> | undefined {
	if (!mcpOnRoute(call.client.name, call.body, call.ir, channels)) return undefined
	return prepareMcp(parseMcp(call.body, call.inbound.get('anthropic-beta')), call.ir, call.svc.env, call.signal)
}

/**
 * Runs one channel attempt of an MCP request, on the servers the request connected before its first attempt
 * (`call.mcp`): a round 1 that fails leaves them open for the next channel; the loop that starts takes them.
 */
export async function mcpAttempt(call: ChatCall, info: CallInfo, ch: Channel, adapter: ChatAdapter, budget: Budget): Promise<Attempt> {
	const mcp = call.mcp
	if (!mcp) return { error: new GatewayError('api_error', 'the MCP servers of this request were not connected') }
	const ctl = new AbortController()
	if (call.signal.aborted) ctl.abort()
	else call.signal.addEventListener('abort', () => ctl.abort(), { once: true })

	let first = mcp.first
	try {
		// As on the plain chat path (relay/upstream-codec.ts): Gemini's APIs and Converse take files as bytes only.
		if (takesBytesOnly(adapter.protocol)) first = await inlineImageUrls(first, { allow: call.svc.env.fetchAllow }, call.svc.env.maxFetchedUrls)
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const target: RoundTarget = { call, ch, adapter, upstreamModel: ch.modelMap[call.ir.model] ?? call.ir.model, signal: ctl.signal }
	const round = await openRound(target, withUpstreamCap(first, budget, adapter.protocol.requiresMaxTokens === true))
	if ('error' in round) return round
	mcp.take()
	const loop = mcpLoop({ target, info, limits: call.svc.env.mcp, sessions: mcp.sessions, names: mcp.names, first, preamble: mcp.preamble, round, budget })
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
