/**
 * A streamed legacy completion, relayed frame for frame as the chat fast path relays OpenAI chunks
 * (relay/stream.ts): the first frames held in the prefetch window so a failure there still fails over; the usage
 * chunk (asked for by the relay) and every chunk's `"usage":null` cut when the client did not ask for them; the model
 * renamed back for a model_map alias; `data: [DONE]` ends the stream, and one the upstream left out is added (an
 * error frame instead when it was cut). Metered by the chat meter, whose reading (usage, `[DONE]`, a finish reason,
 * error frames) holds for `text_completion` chunks; only the estimate for missing usage reads `choices[].text`.
 * @module
 */
import { GatewayError, upstreamRateLimited } from '../../core/errors'
import { formatSse, type SseBatchReader, type SseFrame } from '../../core/sse'
import { openaiChat } from '../../protocols/openai-chat'
import type { Budget, CallInfo } from '../../relay/budget'
import { countText } from '../../relay/estimate'
import { renameModel, stripUsage } from '../../relay/fast-path'
import { isBrokenFrame } from '../../relay/frame-checks'
import { createFrameMeter, type FrameMeter } from '../../relay/meter'
import { type FramesPrefetched, prefetchFrames } from '../../relay/prefetch'
import { failedBeforeContent } from '../../relay/stream'
import { countOpen, FrameBatchRelay, type RelayStep, settleStream } from '../../relay/stream-relay'
import type { UpstreamCall } from '../../relay/upstream-fetch'
import type { ResponseAttempt as Attempt } from '../../routing/attempts'
import type { Channel } from '../../routing/catalog'
import { choiceText } from './prompt'

export type CompletionStream = {
	info: CallInfo
	budget: Budget
	up: UpstreamCall
	channel: Channel
	upstreamModel: string
	/** The model the client named. */
	model: string
	/** The client asked for the usage chunk. */
	includeUsage: boolean
	headers: Record<string, string>
}

/** Every completion chunk carries text (possibly empty): none is preamble, so the window ends at the first frame. */
const noPreamble = () => false

export async function relayCompletionStream(s: CompletionStream): Promise<Attempt> {
	const it = s.up.sse(s.includeUsage)
	const prefetched = await prefetchFrames(it, noPreamble)
	if (!prefetched) return failedBeforeContent(s.up)
	const { pre, frames, head } = prefetched
	const err = head.find((f) => f.data.startsWith('{"error"'))
	if (err || (pre.done && frames.length === 0)) {
		s.up.abort()
		return { error: err ? errorOfFrame(err) : new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' }) }
	}
	if (head.some(isBrokenFrame)) {
		s.up.abort()
		return { error: new GatewayError('upstream', 'upstream sent a malformed stream event', { retryable: true, code: 'upstream_malformed' }) }
	}
	return { ok: new CompletionRelay(s, it, prefetched).respond(s.up, s.headers, s.info.svc.env.keepaliveMs) }
}

/** An OpenAI error frame before anything was sent: a rate limit is 429 as at the HTTP level; anything else fails over. */
function errorOfFrame(f: SseFrame): GatewayError {
	let message = 'upstream stream error'
	try {
		const e = (JSON.parse(f.data) as { error?: { message?: string; code?: unknown; type?: unknown } }).error
		message = e?.message ?? message
		if (e?.code === 'rate_limit_exceeded' || e?.type === 'rate_limit_error') return upstreamRateLimited(message)
	} catch {
		// keep the default message
	}
	return new GatewayError('upstream', message, { retryable: true })
}

const DONE_FRAME = formatSse({ data: '[DONE]' })

class CompletionRelay extends FrameBatchRelay {
	private readonly meter: FrameMeter = createFrameMeter('openai-chat')
	private readonly strip: boolean
	private readonly alias: string | undefined
	private broken = false

	constructor(
		private readonly s: CompletionStream,
		it: SseBatchReader,
		window: FramesPrefetched,
	) {
		super(s.up, it, window)
		this.strip = !s.includeUsage
		this.alias = s.upstreamModel !== s.model ? s.model : undefined
		countOpen(s)
	}

	protected take(): RelayStep | undefined {
		const batch = this.batch
		if (batch) {
			this.batch = undefined
			// A batch no frame of which changes goes out as the upstream's own bytes.
			const bytes = this.strip ? undefined : this.it.bytesOf(batch)
			let unchanged = bytes !== undefined
			let out = ''
			let n = 0
			let last = false
			for (; n < batch.length; n++) {
				const f = batch[n]!
				if (isBrokenFrame(f)) {
					this.broken = true
					break
				}
				const text = this.emit(f)
				unchanged &&= text === f.raw
				out += text
				if ((last = f.data === '[DONE]')) {
					n++
					break
				}
			}
			const step = unchanged && n === batch.length ? bytes! : out
			if (last) return { text: step, last: true, clean: true }
			if (this.broken) return { text: out + this.streamError('the upstream sent a malformed stream event', 'upstream_malformed'), last: true }
			if (step.length) return { text: step, last: false }
		}
		if (this.upstreamDone) return { text: this.ending(), last: true, clean: true }
		return undefined
	}

	/** A frame's text for the client: as the upstream sent it unless usage is cut or the model renamed. */
	private emit(f: SseFrame): string {
		this.meter.onFrame(f)
		let data = this.strip ? stripUsage(f.data) : f.data
		if (data === undefined) return ''
		if (this.alias !== undefined && data !== '[DONE]') data = renameModel(data, this.alias)
		return data === f.data ? (f.raw ?? formatSse(f)) : formatSse({ event: f.event, id: f.id, data })
	}

	/** The body ended without `[DONE]`: an error when it was cut, else the terminator the whole answer lacked. */
	private ending(): string {
		const end = this.meter.end()
		if (end === 'cut') return this.streamError('the upstream stream ended unexpectedly', 'upstream_cut')
		return end === 'error' ? '' : DONE_FRAME
	}

	private streamError(message: string, code: string) {
		return formatSse(openaiChat.encodeStreamError(new GatewayError('upstream', message, { code })))
	}

	protected failed() {
		return this.cancelled ? '' : this.streamError('the upstream stream failed', 'upstream_stream_error')
	}

	protected settle() {
		const meter = this.meter
		const end = meter.end()
		return settleStream(this.s, {
			usage: meter.usage(),
			estimateOutput: () => countText(meter.kept().map(keptText).join('')),
			endReason: this.broken && !this.cancelled ? 'upstream_malformed' : this.cancelled ? 'client_abort' : end === 'cut' ? 'upstream_cut' : end,
		})
	}
}

/** The completion text a kept chunk carried. */
function keptText(f: SseFrame): string {
	if (f.data === '[DONE]' || !f.data.includes('"text"')) return ''
	try {
		return choiceText((JSON.parse(f.data) as { choices?: unknown }).choices)
	} catch {
		return ''
	}
}
