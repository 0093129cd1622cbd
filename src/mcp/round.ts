/**
 * One model round of the MCP loop: the canonical request encoded for the channel's protocol, one upstream call
 * (with the channel's timeouts, cancelled with the request), and the answer as canonical events whether it streamed
 * or not. A round that cannot start is a GatewayError saying whether another channel might do better.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import type { ChatRequest } from '../core/ir'
import { eachFrame } from '../core/sse'
import { continuedPrefill } from '../protocols/final-turn'
import type { ProtocolCodec } from '../protocols/codec'
import type { ChatAdapter } from '../providers/adapter'
import { upstreamError } from '../providers/upstream-error'
import type { ChatCall } from '../relay/chat'
import { encodeFor, forUpstream } from '../relay/upstream-codec'
import { bodyTimeout, channelTimeouts, fetchUpstream, malformedAnswer } from '../relay/upstream-fetch'
import type { Channel } from '../routing/catalog'
import { responseEvents } from './events'

export type RoundTarget = { call: ChatCall; ch: Channel; adapter: ChatAdapter; upstreamModel: string; signal: AbortSignal }

export type Round = { events: AsyncGenerator<StreamEvent>; abort(): void }

const asError = (e: unknown, fallback: () => GatewayError) => (e instanceof GatewayError ? e : fallback())

/** Sends one round upstream; resolves once the answer (or its stream) has started. */
export async function openRound(t: RoundTarget, ir: ChatRequest): Promise<Round | { error: GatewayError }> {
	const { call, ch, adapter } = t
	// The caller's tool names as the vendor takes them, its calls decoded back under the caller's (the MCP tools'
	// own names are portable already: tools.ts).
	let body: string
	let codec: ProtocolCodec
	try {
		;({ body, codec } = encodeFor(ch, adapter, t.upstreamModel, forUpstream(ir, adapter.protocol)))
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const started = Date.now()
	let up
	try {
		up = await fetchUpstream(adapter.chatUrl(ch, t.upstreamModel, ir.stream, continuedPrefill(ir) !== undefined), { headers: adapter.headers(ch), body }, channelTimeouts(ch.settings), t.signal)
	} catch (e) {
		return { error: asError(e, () => new GatewayError('upstream', String(e), { retryable: true })) }
	}
	const { res } = up
	call.svc.metrics.ttfb.observe({ endpoint: call.endpoint, model: call.ir.model, channel: ch.name }, (Date.now() - started) / 1000)
	if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
	if (ir.stream) {
		if (!res.body) return { error: new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
		// Read through the call's batch reader, which its idle timeout watches (relay/upstream-fetch.ts).
		return { events: codec.decodeStream(eachFrame(up.sse(false))), abort: () => up.abort() }
	}
	try {
		const answer = codec.decodeResponse(JSON.parse(await res.text()))
		return { events: responseEvents(answer), abort: () => up.abort() }
	} catch (e) {
		return { error: bodyTimeout(e) ?? asError(e, malformedAnswer) }
	}
}
