/**
 * A Responses stream relayed verbatim from an OpenAI channel. The first frames are awaited briefly before the
 * response starts (only the lifecycle preamble is buffered), so an upstream that fails at once can still fail over
 * (WIRE-NOTES wire §21). Frames go out as the upstream sent them, one write per upstream chunk; the bill is settled
 * when the stream ends (in the turn its last chunk goes out) or when the client disconnects.
 * When `model_map` renamed the model, lifecycle frames name the model the client asked for; a turn of one of this
 * gateway's conversations (sent upstream as plain input) names its conversation there, as OpenAI's own does. Only
 * those few frames are rewritten: every other frame goes out as the upstream's bytes.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { formatSse, type SseBatchReader, type SseFrame } from '../../core/sse'
import { openaiResponses } from '../../protocols/openai-responses'
import type { Budget, CallInfo } from '../../relay/budget'
import { type FramesPrefetched, prefetchFrames } from '../../relay/prefetch'
import { isBrokenFrame } from '../../relay/frame-checks'
import { failedBeforeContent, streamErrorOf } from '../../relay/stream'
import { countOpen, FrameBatchRelay, judgeStream, type RelayStep, settleStream } from '../../relay/stream-relay'
import type { UpstreamCall } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import { createResponsesMeter, eventType, isFailure, LIFECYCLE } from './meter'
import { createdResponseId, outputItemIds } from './ownership'
import { chargeBackgroundStream } from './background'
import type { ResponseAttempt as Attempt } from '../../routing/attempts'

export type NativeStream = {
	info: CallInfo
	budget: Budget
	up: UpstreamCall
	channel: Channel
	upstreamModel: string
	clientModel: string
	/** The conversation this response is a turn of (modules/conversations), shown as `response.conversation`. */
	conversation?: string
	/** Records the response's id (from `response.created`) before the client sees it: a stored response. */
	record?: (id: string) => Promise<void>
	/** Records a stored response's output items (from its terminal event) before that event goes out. */
	recordItems?: (ids: string[]) => Promise<void>
	/** A background response (`background: true`): it runs on upstream when its stream ends early. */
	background?: boolean
}

const PREAMBLE = new Set(['response.created', 'response.queued', 'response.in_progress'])

/**
 * Items and parts that open empty, their content following in deltas: a message with no content yet, a reasoning item
 * with no summary yet, an empty text or summary part. A failure right after them is still before content, and may
 * fail over (QA: a cut there reached the client as an error, billed). A function call's item names its tool: content.
 */
const OPENS_EMPTY: Record<string, string[]> = {
	'response.output_item.added': ['"type":"message"', '"content":[]'],
	'response.content_part.added': ['"text":""'],
	'response.reasoning_summary_part.added': ['"text":""'],
}

/** The frame with `fields` set on its `response` (lifecycle frames only; others pass untouched). */
function patched(f: SseFrame, fields: Record<string, unknown>): SseFrame {
	if (!LIFECYCLE.has(eventType(f))) return f
	try {
		const e = JSON.parse(f.data) as { response?: Record<string, unknown> }
		if (!e.response || typeof e.response !== 'object') return f
		return { ...f, data: JSON.stringify({ ...e, response: { ...e.response, ...fields } }) }
	} catch {
		return f
	}
}

const HAS_COMMENT = /(?:^|[\r\n]):/

/** The comment lines of a frame as received (`: …`), which formatting it afresh would lose: they go out before it. */
const commentsOf = (raw: string | undefined): string =>
	raw === undefined || !HAS_COMMENT.test(raw) ? '' : raw.split(/\r\n|\r|\n/).filter((l) => l.startsWith(':')).map((l) => `${l}\n`).join('')

/**
 * An error frame seen before anything was sent → a GatewayError another channel may not repeat: the `error` event
 * carries its `code` and `message` at the top, `response.failed` in `response.error`. A rate limit is 429
 * `upstream_rate_limited` in the gateway's words (OpenAI's names its organization), as on the other fast paths.
 */
function errorOf(f: SseFrame): GatewayError {
	try {
		const e = JSON.parse(f.data) as { type?: string; code?: unknown; message?: string; response?: { error?: { code?: unknown; message?: string } } }
		return streamErrorOf(e.type === 'error' ? { code: e.code, message: e.message } : e.response?.error, 'upstream_stream_error')
	} catch {
		return streamErrorOf(undefined, 'upstream_stream_error')
	}
}

/** Lifecycle events that end a Responses stream: nothing follows them. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])

export async function relayResponsesStream(a: NativeStream): Promise<Attempt> {
	const it = a.up.sse()
	const prefetched = await prefetchFrames(it, isPreamble)
	if (!prefetched) return failedBeforeContent(a.up)
	const { pre, frames, head } = prefetched
	const failed = head.find(isFailure)
	// Ended inside the window with nothing but preamble (the window reads on only while it is): a cut before content.
	if (failed || pre.done) {
		a.up.abort()
		return { error: failed ? errorOf(failed) : new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' }) }
	}
	// A frame that cannot be read before anything went out fails the attempt, as on the chat fast path (relay/stream.ts).
	if (head.some(isBrokenFrame)) {
		a.up.abort()
		return { error: new GatewayError('upstream', 'upstream sent a malformed stream event', { retryable: true, code: 'upstream_malformed' }) }
	}
	const id = a.record || a.background ? head.map(createdResponseId).find((x) => x !== undefined) : undefined
	if (id && a.record) await a.record(id)
	return { ok: new ResponsesRelay(a, it, prefetched, id).respond(a.up, { 'x-request-id': a.info.requestId }, a.info.svc.env.keepaliveMs), judgedAtEnd: true }
}

function isPreamble(f: SseFrame): boolean {
	const type = eventType(f)
	if (PREAMBLE.has(type)) return true
	const empty = OPENS_EMPTY[type]
	if (empty) return empty.every((m) => f.data.includes(m))
	// A reasoning item opens with its summary empty (and, asked for, its encrypted content, which the client only keeps).
	return type === 'response.output_item.added' && f.data.includes('"type":"reasoning"') && f.data.includes('"summary":[]')
}

/** Each upstream chunk goes out in one write; the bill is settled as the last one goes (StreamRelay). */
class ResponsesRelay extends FrameBatchRelay {
	private readonly meter = createResponsesMeter()
	/** What the lifecycle frames' `response` gets (the client's model name, the conversation), if anything. */
	private readonly patch: Record<string, unknown> | undefined
	private terminal = false
	/** A frame could not be read: the stream ended with an error event there rather than relaying it. */
	private broken = false

	constructor(
		private readonly a: NativeStream,
		it: SseBatchReader,
		window: FramesPrefetched,
		private readonly id: string | undefined,
	) {
		super(a.up, it, window)
		const patch: Record<string, unknown> = {}
		if (a.upstreamModel !== a.clientModel) patch.model = a.clientModel
		if (a.conversation) patch.conversation = { id: a.conversation }
		this.patch = Object.keys(patch).length ? patch : undefined
		countOpen(a)
	}

	protected take(): RelayStep | undefined {
		let text = ''
		const batch = this.batch
		this.batch = undefined
		if (batch)
			for (const f of batch) {
				// Relayed, a broken frame makes the SDK throw a SyntaxError, and the stream was billed as whole.
				if (isBrokenFrame(f)) {
					this.broken = true
					return { text: text + streamError('the upstream sent a malformed stream event', 'upstream_malformed'), last: true }
				}
				text += this.emit(f)
			}
		// After the terminal event nothing follows: the stream ends now, not when the upstream closes.
		if (this.terminal || this.upstreamDone) {
			if (this.meter.end() === 'cut') text += streamError('the upstream stream ended unexpectedly', 'upstream_cut')
			return { text, last: true, clean: true }
		}
		return text ? { text, last: false } : undefined
	}

	/** A frame's bytes for the client: as the upstream sent them, unless its `response` is patched. */
	private emit(f: SseFrame): string {
		this.meter.onFrame(f)
		if (TERMINAL.has(eventType(f))) this.terminal = true
		const out = this.patch ? patched(f, this.patch) : f
		return out === f ? (f.raw ?? formatSse(f)) : commentsOf(f.raw) + formatSse({ event: out.event, id: out.id, data: out.data })
	}

	protected override read(): RelayStep | Promise<RelayStep> {
		const step = super.read()
		if (!this.a.recordItems) return step
		return step instanceof Promise ? step.then(this.keepItems) : this.keepItems(step)
	}

	/**
	 * A stored response's output items (its terminal event's, as the meter read it) are the account's before the end
	 * goes out: the client may name them by `item_reference` as soon as it has it.
	 */
	private readonly keepItems = (step: RelayStep): RelayStep | Promise<RelayStep> => {
		const ids = step.last ? outputItemIds(this.meter.final()) : []
		return ids.length ? this.a.recordItems!(ids).then(() => step) : step
	}

	protected failed() {
		return this.cancelled ? '' : streamError('the upstream stream failed', 'upstream_stream_error')
	}

	protected errorEvent(e: GatewayError) {
		return formatSse(openaiResponses.encodeStreamError(e))
	}

	protected settle() {
		const meter = this.meter
		// A background response's stream that ended before its terminal event (the client left, or the connection was
		// cut) does not end the response: OpenAI runs it on, and it is billed when it ends (background.ts).
		if (this.a.background && this.id && meter.end() === 'cut') {
			// The response is still running upstream: no verdict on the channel from this stream.
			judgeStream(this.a, 'client_abort')
			return chargeBackgroundStream(this.a, this.id)
		}
		return settleStream(this.a, {
			usage: meter.usage(),
			estimateOutput: () => meter.countOutput(),
			// An error event that went out ends the row as `error`, also when the client left after it (relay/stream.ts).
			endReason: meter.end() === 'error' ? 'error' : this.cancelled ? 'client_abort' : this.broken ? 'upstream_malformed' : meter.end() === 'cut' ? 'upstream_cut' : meter.end(),
		})
	}
}

const streamError = (message: string, code: string) => formatSse(openaiResponses.encodeStreamError(new GatewayError('upstream', message, { code })))
