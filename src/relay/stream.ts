/**
 * Streaming answers. Fast path: upstream frames are forwarded as they are (only OpenAI's usage chunk is stripped when
 * the client did not ask for it) while a frame meter reads usage. Conversion: upstream frames → canonical events →
 * the client's encoder. Either way the first events are awaited briefly before the response starts, so an upstream
 * that fails at once can still fail over (WIRE-NOTES wire §21); the bill is settled when the byte source ends (in the
 * turn its last chunk goes out) or when the client disconnects (the upstream call is aborted at once).
 * @module
 */
import { clientClosedAfterSend, GatewayError, upstreamRateLimited } from '../core/errors'
import type { StreamEvent } from '../core/events'
import type { ServiceTier } from '../core/ir'
import { formatSse, type SseBatchReader, type SseFrame } from '../core/sse'
import { CodeOutputScanner } from '../protocols/anthropic-messages/code-outputs'
import type { ProtocolName, UpstreamCodec } from '../protocols/codec'
import type { EventEncoder, FrameDecoder } from '../protocols/stream-machine'
import type { Channel } from '../routing/catalog'
import { type Budget, type CallInfo, countedUsage, threadSize } from './budget'
import type { ChatCall, OutputTerms } from './chat'
import { countText } from './estimate'
import { renameModel, renameModelVersion, stripUsage } from './fast-path'
import { isBrokenFrame, isPreambleFrame } from './frame-checks'
import { createEventMeter, createFrameMeter, type FrameMeter, type StreamEnd } from './meter'
import { FIRST_EVENT_WINDOW_MS, type FramesPrefetched, prefetch, prefetchFrames } from './prefetch'
import { countOpen, PassthroughRelay, type RelayStep, settleStream, StreamRelay } from './stream-relay'
import { StopCutter } from './stop-sequences'
import { type UpstreamCall, upstreamTimeout } from './upstream-fetch'
import { type ResponseAttempt as Attempt, revealsChannel, withoutSecrets } from '../routing/attempts'

export { FIRST_EVENT_WINDOW_MS, prefetch, prefetchFrames } from './prefetch'
export { DRAIN_GRACE_MS, drainingUpstreams, type RelayStep, relaySource, releaseAfterEnd } from './stream-relay'

export type StreamAttempt = {
	call: ChatCall
	info: CallInfo
	budget: Budget
	up: UpstreamCall
	fast: boolean
	upstream: UpstreamCodec
	headers: Record<string, string>
	channel: Channel
	upstreamModel: string
	/** Stop sequences the vendor was not sent, enforced on the converted stream (stop-sequences.ts). */
	stops?: string[]
	/** The tier the upstream's response header named (served-tier.ts), billed when the stream's usage names none. */
	servedTier?: ServiceTier
}

/**
 * The usage row's end: an upstream's error event that went out ends it as `error` even when the client left after
 * it (the SDKs stop reading at an error event, and hang up before the upstream ends its body).
 */
const endReason = (cancelled: boolean, end: StreamEnd) => (end === 'error' ? 'error' : cancelled ? 'client_abort' : end === 'cut' ? 'upstream_cut' : end)

export function relayStream(a: StreamAttempt): Promise<Attempt> {
	return a.fast ? fastStream(a) : convertedStream(a)
}

/** The first error frame among `frames`, if any. */
function errorFrameIn(p: ProtocolName, frames: SseFrame[]): SseFrame | undefined {
	for (const f of frames) if (p === 'anthropic-messages' ? f.event === 'error' : f.data.startsWith('{"error"')) return f
	return undefined
}

/**
 * Frames are relayed in the batches the upstream's chunks delivered: one write per chunk rather than per frame, and
 * a frame nothing changes goes out as the upstream sent it. The response reads the relay itself (no generators
 * between the upstream's reader and the client's stream: this path runs for every chunk of every stream).
 */
async function fastStream(a: StreamAttempt): Promise<Attempt> {
	const proto = a.call.client.name
	// Stripping usage rewrites every chunk but the terminator: their text as received would go unused.
	const it = a.up.sse(!stripsUsage(a))
	const opened = await openRelayed(a.up, it, proto === 'openai-chat' ? isOpenAIPreamble : proto === 'anthropic-messages' ? isAnthropicPreamble : isGeminiPreamble, proto)
	if ('error' in opened) return opened
	const relay = a.call.outputs ? new CodeOutputsRelay(a, it, opened, a.call.outputs) : new FastRelay(a, it, opened)
	return { ok: relay.respond(a.up, a.headers, a.call.svc.env.keepaliveMs), judgedAtEnd: true }
}

/**
 * The prefetch window of a stream relayed as it comes, or the failure that ends the attempt before anything was sent
 * (and may fail over): the body failed or ended empty, an error event came first, or a frame could not be read.
 */
export async function openRelayed(up: UpstreamCall, it: SseBatchReader, isPreamble: (f: SseFrame) => boolean, proto: ProtocolName): Promise<FramesPrefetched | { error: GatewayError }> {
	const prefetched = await prefetchFrames(it, isPreamble)
	if (!prefetched) return failedBeforeContent(up) as { error: GatewayError }
	const { pre, frames, head } = prefetched
	const err = errorFrameIn(proto, head)
	// Ended inside the window with nothing but preamble (the window reads on only while it is): a cut before content.
	// So is OpenAI's terminator right after it, with no chunk that finished the answer (the preamble test runs again
	// only for a head holding the terminator: a short answer, or none).
	if (err || pre.done || endsBeforeContent(head, isPreamble)) {
		up.abort()
		return { error: err ? errorOfFrame(err) : new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' }) }
	}
	if (head.some(isBrokenFrame)) {
		up.abort()
		return { error: new GatewayError('upstream', 'upstream sent a malformed stream event', { retryable: true, code: 'upstream_malformed' }) }
	}
	return prefetched
}

/** Whether `head` reaches OpenAI's `[DONE]` with nothing but preamble before it. */
function endsBeforeContent(head: SseFrame[], isPreamble: (f: SseFrame) => boolean): boolean {
	const done = head.findIndex((f) => f.data === '[DONE]')
	if (done === -1) return false
	for (let i = 0; i < done; i++) if (!isPreamble(head[i]!)) return false
	return true
}

/** The client did not ask for usage: its chunk and every chunk's `"usage":null` are cut (WIRE-NOTES §12). */
const stripsUsage = (a: StreamAttempt) => a.call.client.name === 'openai-chat' && !a.call.includeUsage

const isOpenAIPreamble = (f: SseFrame) => isPreambleFrame('openai-chat', f)
const isAnthropicPreamble = (f: SseFrame) => isPreambleFrame('anthropic-messages', f)
const isGeminiPreamble = (f: SseFrame) => isPreambleFrame('gemini', f)

class FastRelay extends PassthroughRelay {
	private readonly proto: ProtocolName
	private readonly meter: FrameMeter
	/** Usage is cut (`stripsUsage`). */
	protected readonly strip: boolean
	/** A model_map alias is shown to the client as it asked for it (OpenAI names the model on every chunk, Anthropic
	 * only in message_start, Gemini on every chunk as `modelVersion`). */
	private readonly alias: string | undefined

	constructor(
		protected readonly a: StreamAttempt,
		it: SseBatchReader,
		window: FramesPrefetched,
	) {
		super(a.up, it, window)
		this.proto = a.call.client.name
		this.meter = createFrameMeter(this.proto)
		this.strip = stripsUsage(a)
		this.alias = a.upstreamModel !== a.call.ir.model ? a.call.ir.model : undefined
		countOpen(a)
	}

	protected isLast(f: SseFrame): boolean {
		return isTerminal(this.proto, f)
	}

	/** Vendors that stop after the finish reason get the terminator a whole answer lacked, so clients waiting for it see the end. */
	protected ending(): string {
		const end = this.meter.end()
		if (end === 'cut') return this.streamError('the upstream stream ended unexpectedly', 'upstream_cut')
		if (end === 'error') return ''
		return this.proto === 'anthropic-messages' ? MESSAGE_STOP : this.proto === 'openai-chat' ? DONE_FRAME : ''
	}

	/** A frame's text for the client: as the upstream sent it unless usage is stripped or the model renamed. */
	protected emit(f: SseFrame): string {
		this.meter.onFrame(f)
		// An error after content (the meter's end turns 'error' with it; one comparison for every other frame): a rate
		// limit goes out in the gateway's words, as at the HTTP level, since the vendor's name the gateway's account.
		if (this.meter.end() === 'error' && errorFrameIn(this.proto, [f]) === f) {
			const e = errorOfFrame(f)
			if (e.kind === 'rate_limit') return formatSse(this.a.call.client.encodeStreamError(e))
			// One naming the channel's key or host goes out in the gateway's words with those cut, as before the stream.
			if (revealsChannel(f.data, this.a.channel)) return formatSse(this.a.call.client.encodeStreamError(withoutSecrets(e, this.a.channel)))
		}
		let data = this.strip ? stripUsage(f.data) : f.data
		if (data !== undefined && this.alias !== undefined) {
			if (this.proto === 'gemini') data = renameModelVersion(data, this.alias)
			else if (this.proto === 'openai-chat' ? f.data !== '[DONE]' : f.event === 'message_start') data = renameModel(data, this.alias)
		}
		if (data === undefined) return ''
		return data === f.data ? (f.raw ?? formatSse(f)) : formatSse({ event: f.event, id: f.id, data })
	}

	protected errorEvent(e: GatewayError) {
		return formatSse(this.a.call.client.encodeStreamError(e))
	}

	protected override read(): RelayStep | Promise<RelayStep> {
		const step = super.read()
		if (!this.a.call.thread) return step
		return step instanceof Promise ? step.then(this.keepThread) : this.keepThread(step)
	}

	/**
	 * A message thread's reply is recorded before the stream's last chunk goes out, not at settlement after it: the
	 * client may continue the thread as soon as it has the end (a tool runner's next turn).
	 */
	private readonly keepThread = (step: RelayStep): RelayStep | Promise<RelayStep> => {
		const thread = this.a.call.thread
		const id = this.meter.messageId()
		if (!step.last || !thread || id === undefined || this.cancelled || this.broken || this.meter.end() !== 'ok') return step
		return thread.keep(id, this.a.channel.id, threadSize(this.meter.usage(), this.a.budget)).then(() => step)
	}

	/** The relayed frames' output and thinking, counted once, when the upstream reported no usage. */
	private counts?: { output: number; reasoning: number }
	private counted() {
		return (this.counts ??= countFrames(this.a.upstream, this.meter.kept()))
	}

	protected settle() {
		const meter = this.meter
		return settleStream(this.a, {
			usage: meter.usage(),
			estimateOutput: () => this.counted().output,
			estimateReasoning: () => this.counted().reasoning,
			endReason: this.broken && !this.cancelled ? 'upstream_malformed' : endReason(this.cancelled, meter.end()),
		})
	}
}

/**
 * The fast relay of a request offering Claude's code execution tool (the only one that gets it): the files the code
 * wrote and its container are recorded before the chunk naming them goes out, so the client can download a file as
 * soon as it sees its id. The frames still pass as they came; only a tool result's start and the message's start and
 * delta are parsed.
 */
class CodeOutputsRelay extends FastRelay {
	private readonly scanner = new CodeOutputScanner()

	constructor(
		a: StreamAttempt,
		it: SseBatchReader,
		window: FramesPrefetched,
		private readonly outputs: OutputTerms,
	) {
		super(a, it, window)
	}

	protected override emit(f: SseFrame): string {
		this.scanner.onFrame(f)
		return super.emit(f)
	}

	protected override read(): RelayStep | Promise<RelayStep> {
		const step = super.read()
		return step instanceof Promise ? step.then(this.keepOutputs) : this.keepOutputs(step)
	}

	private readonly keepOutputs = (step: RelayStep): RelayStep | Promise<RelayStep> => {
		const found = this.scanner.take()
		return found ? this.outputs.keep(found, this.a.channel.id).then(() => step) : step
	}
}

const DONE = { value: undefined, done: true } as const
const MESSAGE_STOP = formatSse({ event: 'message_stop', data: '{"type":"message_stop"}' })
const DONE_FRAME = formatSse({ data: '[DONE]' })

/**
 * An upstream body's chunks run through the protocol's decoder, each chunk's events as one array: one await per
 * chunk (for the network), not a promise per event. Ends once the decoder is done (the upstream's terminator or an
 * error), without waiting for the body to close.
 */
function decodeChunks(decoder: FrameDecoder, batches: AsyncIterator<SseFrame[], undefined>): AsyncIterator<StreamEvent[], undefined> {
	// Chained to the batch's read rather than awaited in an async `next` per chunk (a frame object each).
	const next = (): Promise<IteratorResult<StreamEvent[], undefined>> => (decoder.done ? Promise.resolve(DONE) : batches.next().then(decode))
	const decode = (r: IteratorResult<SseFrame[], undefined>): IteratorResult<StreamEvent[], undefined> | Promise<IteratorResult<StreamEvent[], undefined>> => {
		const events: StreamEvent[] = []
		if (r.done) decoder.end(events)
		else
			for (const f of r.value) {
				decoder.push(f, events)
				if (decoder.done) break
			}
		return events.length ? { value: events, done: false } : next()
	}
	return {
		next,
		async return() {
			await batches.return?.()
			return DONE
		},
	}
}

/**
 * The failure of a converted stream that sent an error event (or nothing) before any content: one that may fail over,
 * a rate limit answered 429 `upstream_rate_limited` as at the HTTP level.
 */
export function beforeContentError(e: GatewayError | undefined): GatewayError {
	if (!e) return new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true })
	// The decoders already make a vendor's rate limit the gateway's own (upstreamRateLimited).
	if (e.kind === 'rate_limit') return e
	return isRateLimit(e) ? upstreamRateLimited(e.message) : new GatewayError(e.kind, e.message, { code: e.code, retryable: true })
}

export const isPreambleEvent = (e: StreamEvent) => e.type === 'start' || e.type === 'ping' || e.type === 'usage'

/**
 * Conversion: upstream frames → the upstream protocol's decoder → canonical events (metered) → the client protocol's
 * encoder → client frames, all synchronous per upstream chunk (src/protocols/stream-machine.ts). A chunk's output
 * goes out in one write as soon as the chunk is converted.
 */
async function convertedStream(a: StreamAttempt): Promise<Attempt> {
	const decoder = a.upstream.streamDecoder()
	const batches = a.up.sse()
	const chunks = decodeChunks(decoder, batches)
	const pre = await prefetch(chunks, (events) => events.every(isPreambleEvent), FIRST_EVENT_WINDOW_MS).catch(() => undefined)
	if (!pre) return failedBeforeContent(a.up)
	const head = pre.buffered.length === 1 ? pre.buffered[0]! : pre.buffered.flat()
	const err = head.find((e) => e.type === 'error')
	const sawContent = head.some((e) => e.type === 'block_start' || e.type === 'finish')
	if ((err && !sawContent) || (pre.done && head.length === 0)) {
		a.up.abort()
		return { error: beforeContentError(err?.type === 'error' ? err.error : undefined) }
	}
	return { ok: new ConvertedRelay(a, decoder, batches, chunks, pre).respond(a.up, a.headers, a.call.svc.env.keepaliveMs), judgedAtEnd: true }
}

type ChunksPrefetched = { buffered: StreamEvent[][]; pending: Promise<IteratorResult<StreamEvent[], undefined>> | undefined; done: boolean }

class ConvertedRelay extends StreamRelay {
	private readonly meter = createEventMeter()
	private readonly encoder: EventEncoder
	private readonly frames: SseFrame[] = []
	/** Enforces the stop sequences the vendor was not sent, if any; its events go to the encoder. */
	private readonly cutter: StopCutter | undefined
	private readonly cut: StreamEvent[] = []
	/** The chunks the prefetch window read are replayed first; then a read it left running, then the rest. */
	private replayed = 0
	private pending: Promise<IteratorResult<StreamEvent[], undefined>> | undefined

	constructor(
		private readonly a: StreamAttempt,
		private readonly decoder: FrameDecoder,
		private readonly batches: AsyncIterator<SseFrame[], undefined>,
		private readonly chunks: AsyncIterator<StreamEvent[], undefined>,
		private readonly pre: ChunksPrefetched,
	) {
		super(a.up)
		this.pending = pre.pending
		this.encoder = a.call.client.streamEncoder({
			model: a.call.ir.model,
			includeUsage: a.call.includeUsage,
			includeThoughts: a.call.ir.reasoning?.includeThoughts,
			countInputTokens: a.budget.countInput,
		})
		if (a.stops?.length) this.cutter = new StopCutter(a.stops)
		countOpen(a)
	}

	/** The client text for a chunk's events (metered on the way); `last`, or a stop sequence matched, closes the encoder (its terminator). */
	private encode(events: StreamEvent[] | undefined, last: boolean): string {
		const frames = this.frames
		const cutter = this.cutter
		if (events)
			for (const got of events) {
				// A vendor's error mid-stream is its own words: the channel's key and host are cut, as before the stream.
				const e = got.type === 'error' ? { ...got, error: withoutSecrets(got.error, this.a.channel) } : got
				if (cutter) {
					// Metered as the vendor produced them (the whole delta a sequence matched in, usage that follows it).
					if (!cutter.done || e.type === 'usage') this.meter.onEvent(e)
					cutter.push(e, this.cut)
					this.encodeCut(frames)
					continue
				}
				this.meter.onEvent(e)
				if (e.type === 'finish') this.showEstimate(frames)
				// A stream failing midway is billed on what was counted (settle's rule for an early end): its error event
				// (Responses' `response.failed` carries usage) shows the same counts.
				else if (e.type === 'error') this.showEstimate(frames, true)
				this.encoder.push(e, frames)
			}
		// A sequence matched: the answer ends with this chunk (its `finish` after the chunk's usage).
		if (cutter?.done) {
			cutter.end(this.cut)
			this.encodeCut(frames, !this.decoder.done)
		}
		if (last || cutter?.done) this.encoder.end(frames)
		let text = ''
		for (const f of frames) text += formatSse(f)
		frames.length = 0
		return text
	}

	/**
	 * The cutter's events to the encoder. Its own `finish` is metered too (the stream ended as a stop sequence ends it);
	 * `early`: before the upstream's end, so the output is shown as it is billed (counted, as on an abort).
	 */
	private encodeCut(frames: SseFrame[], early = false) {
		for (const e of this.cut) {
			if (e.type === 'finish') {
				this.meter.onEvent(e)
				this.showEstimate(frames, early)
			}
			this.encoder.push(e, frames)
		}
		this.cut.length = 0
	}

	/**
	 * An upstream that reported no usage (some OpenAI-compatible servers) is billed on counts (budget.ts `settle`): the
	 * client is shown the same counts rather than zeros (WIRE-NOTES #12). Not metered, so the bill still says estimated.
	 */
	private showEstimate(frames: SseFrame[], early = false) {
		const usage = countedUsage(this.meter.usage(), () => this.a.budget.countInput(), () => countText(this.meter.text()), early)
		if (usage) this.encoder.push({ type: 'usage', usage }, frames)
	}

	/** The chunks the window read are converted without an await (the pump then writes them with the headers). */
	protected read(): RelayStep | Promise<RelayStep> {
		const pre = this.pre
		while (this.replayed < pre.buffered.length || (pre.done && !this.pending)) {
			const ended = this.replayed >= pre.buffered.length
			const step = this.stepOf(ended ? undefined : pre.buffered[this.replayed++], ended)
			if (step) return step
		}
		return this.readMore()
	}

	/** The next chunk's step, chained to its read (see FrameBatchRelay.readMore). */
	private readMore(): Promise<RelayStep> {
		const read = this.pending ?? this.chunks.next()
		this.pending = undefined
		return read.then(this.onChunk)
	}

	private readonly onChunk = (r: IteratorResult<StreamEvent[], undefined>): RelayStep | Promise<RelayStep> =>
		(r.done ? this.stepOf(undefined, true) : this.stepOf(r.value, false)) ?? this.readMore()

	/** The step a chunk's events make (none when they encode to nothing); `ended`: the upstream's body ended. */
	private stepOf(events: StreamEvent[] | undefined, ended: boolean): RelayStep | undefined {
		// The decoder is done with the events at hand (the upstream's terminator or an error): nothing follows, so the
		// stream ends now rather than waiting for the upstream to close.
		const ending = ended || this.encoder.done || (this.decoder.done && this.replayed >= this.pre.buffered.length && !this.pending)
		const text = this.encode(events, ending)
		// A stop sequence the gateway enforces matched: the stream ends too, and the upstream call is aborted (not clean).
		const last = ending || this.cutter?.done === true
		// An error event also leaves the decoder done: only the terminator or the body's end leave the rest to drain.
		if (last) return { text, last, clean: ended || (this.decoder.done && this.meter.end() !== 'error') }
		if (text) return { text, last }
		return undefined
	}

	protected failed() {
		return this.cancelled ? '' : this.errorEvent(new GatewayError('upstream', 'the upstream stream failed', { code: 'upstream_stream_error' }))
	}

	protected errorEvent(e: GatewayError) {
		return formatSse(this.a.call.client.encodeStreamError(e))
	}

	protected rest() {
		return this.batches.next()
	}

	protected settle() {
		const meter = this.meter
		const end = meter.malformed() && !this.cancelled ? 'upstream_malformed' : endReason(this.cancelled, meter.end())
		const stoppedEarly = this.cutter?.done === true && !this.decoder.done
		return settleStream(this.a, { usage: meter.usage(), estimateOutput: () => countText(meter.text()), estimateReasoning: () => countText(meter.reasoningText()), endReason: end, stoppedEarly })
	}
}

/**
 * The protocol's last frame: the stream ends with it, and the bill is settled in the same turn (StreamRelay.finish),
 * without waiting for the upstream to close its body.
 */
function isTerminal(p: ProtocolName, f: SseFrame): boolean {
	return p === 'openai-chat' ? f.data === '[DONE]' : p === 'anthropic-messages' && f.event === 'message_stop'
}

/**
 * The upstream's body failed (a reset connection) while the window still held everything back: nothing reached the
 * client, so this is an upstream failure another channel may answer, not an internal error.
 */
export function failedBeforeContent(up: UpstreamCall): { error: GatewayError } {
	up.abort()
	if (up.clientGone) return { error: clientClosedAfterSend() }
	// Silent past `idle_ms` before any content: the upstream did not answer in time (504), as a first byte that never came.
	if (up.timedOut) return { error: upstreamTimeout('upstream sent no content within its idle timeout') }
	return { error: new GatewayError('upstream', 'the upstream stream failed before any content', { retryable: true, code: 'upstream_cut' }) }
}

/**
 * An error frame seen before anything was sent → a GatewayError that may fail over. An overload (Anthropic
 * `overloaded_error`, Gemini 503 `UNAVAILABLE`) is answered 503 and a rate limit 429 `upstream_rate_limited`, as the
 * same errors at the HTTP level are.
 */
function errorOfFrame(f: SseFrame): GatewayError {
	try {
		return streamErrorOf((JSON.parse(f.data) as { error?: StreamErrorBody }).error)
	} catch {
		return streamErrorOf(undefined)
	}
}

type StreamErrorBody = { message?: string; type?: string; status?: string; code?: unknown }

/**
 * What a vendor's in-stream error object (its `message` and its `type`, `status` or `code`) becomes before anything
 * was sent. Also the Responses API's fast path's (modules/responses/stream.ts), whose error event and
 * `response.failed` carry the same words at other places.
 * @param fallbackCode the code of an error of no kind recognised
 */
export function streamErrorOf(e: StreamErrorBody | undefined, fallbackCode?: string): GatewayError {
	const message = (typeof e?.message === 'string' && e.message) || 'upstream stream error'
	if (isRateLimit(e)) return upstreamRateLimited(message)
	if (e?.type === 'invalid_request_error') return new GatewayError('invalid_request', message)
	if (e?.type === 'overloaded_error' || e?.status === 'UNAVAILABLE' || e?.code === 503) return new GatewayError('overloaded', message, { retryable: true })
	return new GatewayError('upstream', message, { retryable: true, ...(fallbackCode && { code: fallbackCode }) })
}

/**
 * Whether an upstream's in-stream error (its frame's `error` object, or the GatewayError a decoder made of it, whose
 * `code` keeps the vendor's word) says it is rate limited: Anthropic `rate_limit_error`, Gemini `RESOURCE_EXHAUSTED`
 * (code 429), OpenAI `rate_limit_exceeded`.
 */
const isRateLimit = (e: { type?: unknown; status?: unknown; code?: unknown } | undefined) =>
	e !== undefined && (e.type === 'rate_limit_error' || e.status === 'RESOURCE_EXHAUSTED' || e.code === 429 || RATE_LIMIT_CODES.has(e.code))

const RATE_LIMIT_CODES = new Set<unknown>(['rate_limit_error', 'RESOURCE_EXHAUSTED', 'rate_limit_exceeded', '429'])

/** Output tokens in relayed frames, and the thinking among them, decoded through the protocol's own decoder (only when usage was missing). */
function countFrames(codec: UpstreamCodec, frames: SseFrame[]): { output: number; reasoning: number } {
	const meter = createEventMeter()
	const decoder = codec.streamDecoder()
	const events: StreamEvent[] = []
	for (const f of frames) {
		decoder.push(f, events)
		if (decoder.done) break
	}
	decoder.end(events)
	for (const e of events) meter.onEvent(e)
	return { output: countText(meter.text()), reasoning: countText(meter.reasoningText()) }
}
