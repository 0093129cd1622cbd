/**
 * Gemini channels opted in with `settings.interactions_api: true` serve Interactions clients from Gemini's own
 * `POST /v1beta/interactions` rather than `generateContent`: the request goes through the canonical model to this
 * protocol's upstream encoder (protocols/gemini-interactions/request.ts `encodeRequest`), which re-sends the client's
 * Gemini-only fields (built-in tools, `generation_config` whole, safety settings) as they came, and the answer (whole
 * or streamed) is read by the same codec, its `usage` billed. The upstream keeps nothing (`store: false`): the
 * conversation stays the gateway's (store.ts), so a turn may go to any channel of the model.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { geminiInteractions } from '../../protocols/gemini-interactions'
import { type ChatAdapter, joinUrl } from '../../providers/adapter'
import { upstreamError } from '../../providers/upstream-error'
import { type Budget, type CallInfo, settle } from '../../relay/budget'
import type { ChatCall, NativeRoute } from '../../relay/chat'
import { countOutputText } from '../../relay/output-count'
import { tierHeaderOf, tierSaid, withTierSaid } from '../../relay/served-tier'
import { relayStream } from '../../relay/stream'
import { convertedBody } from '../../relay/upstream-codec'
import { channelTimeouts, fetchUpstream, unreadableAnswer, waitsFor } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import type { ResponseAttempt as Attempt } from '../../routing/attempts'

/** The channel's Interactions URL, when it is a Gemini channel that opted in. */
export const interactionsUrlOf = (ch: Channel): string | undefined =>
	ch.type === 'gemini' && ch.settings.interactions_api === true ? joinUrl(ch.baseUrl.replace(/\/v1(beta)?$/, ''), '/v1beta/interactions') : undefined

/** The NativeRoute of one Interactions request (`call` is the relay's, set before it runs). */
export const interactionsNative =
	(call: () => ChatCall): NativeRoute =>
	(ch, adapter, info, budget) => {
		const url = interactionsUrlOf(ch)
		return url ? attempt(call(), url, ch, adapter, info, budget) : Promise.resolve(undefined)
	}

async function attempt(call: ChatCall, url: string, ch: Channel, adapter: ChatAdapter, info: CallInfo, budget: Budget): Promise<Attempt> {
	const upstreamModel = ch.modelMap[call.ir.model] ?? call.ir.model
	const native: ChatAdapter = { ...adapter, protocol: geminiInteractions }
	let sent
	try {
		sent = await convertedBody(call, ch, native, budget, upstreamModel, call.ir)
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const body = JSON.stringify({ ...(JSON.parse(sent.body) as Record<string, unknown>), ...(call.ir.stream && { stream: true }) })
	let up
	try {
		up = await fetchUpstream(url, { headers: adapter.headers(ch), body }, channelTimeouts(ch.settings, waitsFor(call.ir.stream)), call.signal)
	} catch (e) {
		return { error: e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true }) }
	}
	const { res } = up
	if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
	const headers = { 'x-request-id': call.requestId }
	const outcome = { channel: ch, upstreamModel, servedTier: tierSaid(sent.codec, res)?.tier }
	if (call.ir.stream) {
		if (!res.body) return { error: new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
		return relayStream({ call, info, budget, up, fast: false, upstream: sent.codec, headers, ...outcome })
	}
	let r
	try {
		r = sent.codec.decodeResponse(JSON.parse(await up.text()))
	} catch (e) {
		return { error: unreadableAnswer(e) }
	}
	withTierSaid(r.usage, outcome.servedTier)
	const usage = r.usage.input + r.usage.output + r.usage.cacheRead > 0 ? r.usage : undefined
	await settle(info, budget, { usage, estimateOutput: () => countOutputText(r), status: 200, endReason: 'ok', ...outcome })
	const out = call.client.encodeResponse(r, { model: call.ir.model, includeThoughts: call.ir.reasoning?.includeThoughts })
	return { ok: new Response(JSON.stringify(out), { status: 200, headers: { 'content-type': 'application/json', ...headers, ...tierHeaderOf(call.client, r.usage) } }) }
}
