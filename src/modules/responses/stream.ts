/**
 * A Responses stream relayed verbatim from an OpenAI channel. The first frames are awaited briefly before the
 * response starts (only the lifecycle preamble is buffered), so an upstream that fails at once can still fail over
 * (WIRE-NOTES wire §21); the bill is settled in the generator's `finally`, which also runs on client disconnect.
 * When `model_map` renamed the model, lifecycle frames name the model the client asked for.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { encodeSse, parseSse, type SseFrame } from '../../core/sse'
import { openaiResponses } from '../../protocols/openai-responses'
import type { Budget, CallInfo } from '../../relay/budget'
import { settle } from '../../relay/budget'
import { sseResponse } from '../../relay/sse-response'
import { FIRST_EVENT_WINDOW_MS, failedBeforeContent, prefetch } from '../../relay/stream'
import type { UpstreamCall } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import { createResponsesMeter, eventType, isFailure, LIFECYCLE } from './meter'

export type NativeStream = { info: CallInfo; budget: Budget; up: UpstreamCall; channel: Channel; upstreamModel: string; clientModel: string }

type Attempt = { response: Response } | { error: GatewayError }

const PREAMBLE = new Set(['response.created', 'response.queued', 'response.in_progress'])


/** The frame with `response.model` set to the client's name (lifecycle frames only; others pass untouched). */
function renamed(f: SseFrame, model: string): SseFrame {
	if (!LIFECYCLE.has(eventType(f))) return f
	try {
		const e = JSON.parse(f.data) as { response?: Record<string, unknown> }
		if (!e.response || typeof e.response !== 'object') return f
		return { ...f, data: JSON.stringify({ ...e, response: { ...e.response, model } }) }
	} catch {
		return f
	}
}

/** An error frame seen before anything was sent → a GatewayError another channel may not repeat. */
function errorOf(f: SseFrame): GatewayError {
	let message = 'upstream stream error'
	try {
		const e = JSON.parse(f.data) as { message?: string; response?: { error?: { message?: string } } }
		message = e.message ?? e.response?.error?.message ?? message
	} catch {
		// keep the default
	}
	return new GatewayError('upstream', message, { retryable: true, code: 'upstream_stream_error' })
}

export async function relayResponsesStream(a: NativeStream): Promise<Attempt> {
	const meter = createResponsesMeter()
	const it = parseSse(a.up.res.body!)[Symbol.asyncIterator]()
	const prefetched = await prefetch(it, (f) => PREAMBLE.has(eventType(f)), FIRST_EVENT_WINDOW_MS).catch(() => undefined)
	if (!prefetched) return failedBeforeContent(a.up)
	const pre = prefetched
	const failed = pre.buffered.find(isFailure)
	if (failed || (pre.done && !pre.buffered.length)) {
		a.up.abort()
		return { error: failed ? errorOf(failed) : new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' }) }
	}
	const rename = a.upstreamModel !== a.clientModel
	let cancelled = false
	async function* bytes(): AsyncGenerator<Uint8Array> {
		const emit = (f: SseFrame) => {
			meter.onFrame(f)
			return encodeSse(rename ? renamed(f, a.clientModel) : f)
		}
		try {
			for (const f of pre.buffered) yield emit(f)
			if (!pre.done) {
				let r = pre.pending ? await pre.pending : await it.next()
				while (!r.done) {
					yield emit(r.value)
					r = await it.next()
				}
			}
			if (meter.end() === 'cut') yield encodeSse(openaiResponses.encodeStreamError(new GatewayError('upstream', 'the upstream stream ended unexpectedly', { code: 'upstream_cut' })))
		} catch {
			if (!cancelled) yield encodeSse(openaiResponses.encodeStreamError(new GatewayError('upstream', 'the upstream stream failed', { code: 'upstream_stream_error' })))
		} finally {
			a.up.abort()
			const end = meter.end()
			await settle(a.info, a.budget, {
				usage: meter.usage(),
				estimateOutput: () => meter.countOutput(),
				status: 200,
				endReason: cancelled ? 'client_abort' : end === 'cut' ? 'upstream_cut' : end,
				channel: a.channel,
				upstreamModel: a.upstreamModel,
			}).catch((e) => a.info.svc.log.error('settle failed', { request_id: a.info.requestId, error: String(e) }))
		}
	}
	const cancel = () => {
		cancelled = true
		a.up.abort()
	}
	a.up.onClientGone(cancel)
	return { response: await sseResponse(bytes(), cancel, { 'x-request-id': a.info.requestId }, a.info.svc.env.keepaliveMs) }
}
