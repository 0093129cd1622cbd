/**
 * One model round of the MCP loop: the canonical request encoded for the channel's protocol (an OpenAI client's prompt
 * cached as the relay has it: relay/auto-cache.ts), one upstream call (with the channel's timeouts, cancelled with the
 * request), and the answer as canonical events whether it streamed or not. A round that cannot start is a GatewayError
 * saying whether another channel might do better. Stop sequences the vendor cannot take are cut here on every round's
 * answer, as the relay cuts a single answer (stop-sequences.ts): a match ends the round there, with no tool call after
 * it (the vendor would have stopped generating), so the loop ends with the answer.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import type { ChatRequest } from '../core/ir'
import { eachFrame } from '../core/sse'
import { continuedPrefill } from '../protocols/final-turn'
import type { UpstreamCodec } from '../protocols/codec'
import { runMachine } from '../protocols/stream-machine'
import type { ChatAdapter } from '../providers/adapter'
import { upstreamError } from '../providers/upstream-error'
import type { ChatCall } from '../relay/chat'
import { withAutoCache } from '../relay/auto-cache'
import { cutAnswer, cuttingDecoder, splitStops } from '../relay/stop-sequences'
import { encodeFor, forUpstream } from '../relay/upstream-codec'
import { bodyTimeout, channelTimeouts, fetchUpstream, malformedAnswer, waitsFor } from '../relay/upstream-fetch'
import type { Channel } from '../routing/catalog'
import { responseEvents } from './events'
import { metricModel } from '../metrics/model-label'

export type RoundTarget = { call: ChatCall; ch: Channel; adapter: ChatAdapter; upstreamModel: string; signal: AbortSignal }

/** `cutShort`: the gateway cut the round's stream at a stop sequence before the vendor's end (billed as on an abort). */
export type Round = { events: AsyncGenerator<StreamEvent>; abort(): void; cutShort(): boolean }

const asError = (e: unknown, fallback: () => GatewayError) => (e instanceof GatewayError ? e : fallback())

/** Sends one round upstream; resolves once the answer (or its stream) has started. */
export async function openRound(t: RoundTarget, ir: ChatRequest): Promise<Round | { error: GatewayError }> {
	const { call, ch, adapter } = t
	// The caller's tool names as the vendor takes them, its calls decoded back under the caller's (the MCP tools'
	// own names are portable already: tools.ts).
	const stops = splitStops(ir, adapter.protocol, t.upstreamModel, call.client)
	let body: string
	let codec: UpstreamCodec
	try {
		// Each round replays the growing conversation, so its cache matters most here.
		;({ body, codec } = encodeFor(ch, adapter, t.upstreamModel, forUpstream(withAutoCache(stops.ir, call.client.name, ch), adapter.protocol)))
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const started = Date.now()
	let up
	try {
		up = await fetchUpstream(adapter.chatUrl(ch, t.upstreamModel, ir.stream, continuedPrefill(ir) !== undefined), { headers: adapter.headers(ch), body, ch, adapter }, channelTimeouts(ch.settings, waitsFor(ir.stream)), t.signal)
	} catch (e) {
		return { error: asError(e, () => new GatewayError('upstream', String(e), { retryable: true })) }
	}
	const { res } = up
	call.svc.metrics.ttfb.observe({ endpoint: call.endpoint, model: metricModel(call.svc, call.ir.model), channel: ch.name }, (Date.now() - started) / 1000)
	if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
	if (ir.stream) {
		if (!res.body) return { error: new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
		// Read through the call's batch reader, which its idle timeout watches (relay/upstream-fetch.ts).
		const frames = eachFrame(up.sse(false))
		if (!stops.held.length) return { events: codec.decodeStream(frames), abort: () => up.abort(), cutShort: () => false }
		const decoder = cuttingDecoder(codec.streamDecoder(), stops.held)
		return { events: runMachine(decoder, frames), abort: () => up.abort(), cutShort: () => decoder.cutShort }
	}
	try {
		const answer = codec.decodeResponse(JSON.parse(await up.text()))
		if (stops.held.length) cutAnswer(answer, stops.held)
		return { events: responseEvents(answer), abort: () => up.abort(), cutShort: () => false }
	} catch (e) {
		return { error: bodyTimeout(e) ?? asError(e, malformedAnswer) }
	}
}
