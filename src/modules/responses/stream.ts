/**
 * A Responses stream relayed verbatim from an OpenAI channel. The first frames are awaited briefly before the
 * response starts (only the lifecycle preamble is buffered), so an upstream that fails at once can still fail over
 * (WIRE-NOTES wire §21). Frames go out as the upstream sent them, one write per upstream chunk; the bill is settled
 * when the stream ends (before its last chunk goes out) or when the client disconnects.
 * When `model_map` renamed the model, lifecycle frames name the model the client asked for.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { formatSse, type SseFrame, sseBatchReader } from '../../core/sse'
import { openaiResponses } from '../../protocols/openai-responses'
import type { Budget, CallInfo } from '../../relay/budget'
import { settle } from '../../relay/budget'
import { sseResponse } from '../../relay/sse-response'
import { failedBeforeContent, prefetchFrames, readsAfter, relaySource } from '../../relay/stream'
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

/** Lifecycle events that end a Responses stream: nothing follows them. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])

export async function relayResponsesStream(a: NativeStream): Promise<Attempt> {
	const meter = createResponsesMeter()
	const it = sseBatchReader(a.up.res.body!)
	const prefetched = await prefetchFrames(it, (f) => PREAMBLE.has(eventType(f)))
	if (!prefetched) return failedBeforeContent(a.up)
	const { pre, frames, head } = prefetched
	const failed = head.find(isFailure)
	if (failed || (pre.done && !frames.length)) {
		a.up.abort()
		return { error: failed ? errorOf(failed) : new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' }) }
	}
	const rename = a.upstreamModel !== a.clientModel
	let cancelled = false
	let terminal = false
	/** A frame's bytes for the client: as the upstream sent them, unless the model name is rewritten. */
	const emit = (f: SseFrame): string => {
		meter.onFrame(f)
		const type = eventType(f)
		if (TERMINAL.has(type)) terminal = true
		const out = rename ? renamed(f, a.clientModel) : f
		return out === f ? (f.raw ?? formatSse(f)) : formatSse({ event: out.event, id: out.id, data: out.data })
	}
	let billed: Promise<void> | undefined
	/** Settles the bill once, with the outcome as it stands at the first call. */
	const bill = () =>
		(billed ??= settle(a.info, a.budget, {
			usage: meter.usage(),
			estimateOutput: () => meter.countOutput(),
			status: 200,
			endReason: cancelled ? 'client_abort' : meter.end() === 'cut' ? 'upstream_cut' : meter.end(),
			channel: a.channel,
			upstreamModel: a.upstreamModel,
		}).then(
			() => undefined,
			(e) => a.info.svc.log.error('settle failed', { request_id: a.info.requestId, error: String(e) }),
		))
	const streamError = (message: string, code: string) => formatSse(openaiResponses.encodeStreamError(new GatewayError('upstream', message, { code })))
	// The batches the window read are replayed first; then a read it left running, then the rest. Each upstream chunk
	// goes out in one write; the bill is settled before the last one (relaySource).
	let replayed = 0
	let upstreamDone = pre.done
	const failedText = () => (cancelled ? '' : streamError('the upstream stream failed', 'upstream_stream_error'))
	const nextBatch = readsAfter(pre.pending, it)
	const source = relaySource(a.up, bill, failedText, nextBatch, async () => {
		let text = ''
		while (true) {
			let batch: SseFrame[] | undefined
			if (replayed < pre.buffered.length) batch = pre.buffered[replayed++]
			else if (!upstreamDone) {
				const r = await nextBatch()
				if (r.done) upstreamDone = true
				else batch = r.value
			}
			if (batch) for (const f of batch) text += emit(f)
			// After the terminal event nothing follows: the stream ends now, not when the upstream closes.
			if (terminal || (upstreamDone && replayed >= pre.buffered.length)) {
				if (meter.end() === 'cut') text += streamError('the upstream stream ended unexpectedly', 'upstream_cut')
				return { text, last: true, clean: true }
			}
			if (text) return { text, last: false }
		}
	})
	const cancel = () => {
		cancelled = true
		a.up.abort()
		void bill()
	}
	a.up.onClientGone(cancel)
	return { response: await sseResponse(source, cancel, { 'x-request-id': a.info.requestId }, a.info.svc.env.keepaliveMs) }
}
