/**
 * What every relayed stream shares, whatever it does to its frames: it is the client response's byte source, takes
 * the bill in the turn its last chunk goes out, and lets go of the upstream call when it ends (the rest of the body
 * drained after a clean end, the call aborted otherwise and when the client goes away). The relays (src/relay/stream.ts,
 * src/modules/responses/stream.ts) extend it with how they read. Classes rather than closures: one relay runs per
 * stream, and its state as fields costs one object where closures cost a function and a scope each.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { SseBatchReader, SseFrame } from '../core/sse'
import type { ServiceTier } from '../core/ir'
import { type CallInfo, type Outcome, release, settle } from './budget'
import type { Budget } from './budget'
import type { Channel } from '../routing/catalog'
import { isBrokenFrame } from './frame-checks'
import { unwatchTicks, watchTicks } from './prefetch'
import { cutOpenStreams, type PumpSource, pumpResponse, type Sink } from './sse-response'
import type { UpstreamCall } from './upstream-fetch'

/**
 * One step of a relay: the next text to send, or the upstream's own bytes when they are that text (never empty unless
 * it is the last); whether the stream ends with it, and, when it does, whether the upstream's stream ended cleanly (its
 * terminator, or its body's end): only then is the rest of its body drained rather than the call aborted.
 */
export type RelayStep = { text: string | Uint8Array; last: boolean; clean?: boolean }

type Up = Pick<UpstreamCall, 'abort' | 'release'>

const DONE = { value: undefined, done: true } as const

/**
 * What a stream still running when the shutdown grace period ends (SHUTDOWN_GRACE_MS) closes with: the protocol's
 * error event (Anthropic `overloaded_error`, OpenAI a `service_unavailable_error` chunk), so the client learns its
 * answer is incomplete and may retry elsewhere, rather than meeting a bare connection reset.
 */
export const SHUTTING_DOWN = new GatewayError('overloaded', 'The gateway is restarting: this answer was cut short. Retry the request.', { code: 'shutting_down', retryable: true })

/** The relays writing to a client now, and the promise of each one's pump (`cutStreams`). */
const pumping = new Map<StreamRelay, Promise<void>>()

/**
 * Ends every stream being relayed with the protocol's error event (SHUTTING_DOWN) and aborts its upstream call, and
 * every other event stream that has one (images, Interactions, Responses replays, MCP: `cutOpenStreams`) likewise;
 * resolves once each has ended its response and taken its bill (recorded `shutdown`, as `Ledger.cutForShutdown` says),
 * or after `waitMs` (a client that does not read cannot be written to).
 */
export async function cutStreams(waitMs: number): Promise<void> {
	const all = [...pumping]
	for (const [relay] of all) relay.cutForShutdown()
	const others = cutOpenStreams()
	let timer: ReturnType<typeof setTimeout> | undefined
	const ended = [...all.map(([, p]) => p), ...others].map((p) => p.catch(() => {}))
	await Promise.race([Promise.all(ended), new Promise<void>((r) => (timer = setTimeout(r, waitMs)))])
	clearTimeout(timer)
}

export abstract class StreamRelay implements PumpSource {
	/** The client went away (or the shutdown cut the stream: billed as the client's leaving is). */
	protected cancelled = false
	private ended = false
	/** The shutdown is cutting this stream (`cutForShutdown`). */
	private cutting = false
	private billed: Promise<void> | undefined = undefined

	constructor(protected readonly up: Up) {}

	/**
	 * The next step; may throw (the upstream's body failed), and then `failed()` gives the closing text. A step at hand
	 * (the prefetch window's frames) may come back as it is rather than in a promise: the pump then writes it before
	 * it awaits anything, and Bun sends it with the response's headers.
	 */
	protected abstract read(): RelayStep | Promise<RelayStep>
	protected abstract failed(): string
	/** The client protocol's error event for `e`, as SSE text. */
	protected abstract errorEvent(e: GatewayError): string
	/** Reads the upstream's body on after a clean end (drained, so its connection goes back to the pool). */
	protected abstract rest(): Promise<IteratorResult<unknown>>
	/** Settles the bill with the outcome as it stands; called once. */
	protected abstract settle(): Promise<void>

	/** Settles once; later calls wait for the first. */
	bill(): Promise<void> {
		return (this.billed ??= this.settle())
	}

	/** The client went away: abort the upstream call at once and settle what was produced. */
	readonly cancel = (): void => {
		this.cancelled = true
		this.up.abort()
		void this.bill()
	}

	/** The client went away before the stream ended (DirectSse.cancel, after `cancel`). */
	async return(): Promise<IteratorResult<string, undefined>> {
		if (!this.ended) await this.finish(false)
		return DONE
	}

	/** The stream ended: nothing more will be written. */
	get over(): boolean {
		return this.ended
	}

	/**
	 * The shutdown's grace period is over: the upstream call is aborted, which ends the read under way, and the pump
	 * ends the stream with the protocol's error event (unless it was ending anyway).
	 */
	cutForShutdown(): void {
		if (this.ended || this.cutting) return
		this.cutting = true
		this.up.abort()
	}

	/**
	 * Writes the stream into the response until it ends (sse-response.ts, `Pump`): the client's stream runs this loop
	 * rather than reading the relay as an iterator, so each upstream chunk costs one await here and one in `read`.
	 */
	async pump(sink: Sink): Promise<void> {
		const p = this.run(sink)
		pumping.set(this, p)
		try {
			await p
		} finally {
			pumping.delete(this)
		}
	}

	private async run(sink: Sink): Promise<void> {
		while (!this.ended) {
			let step: RelayStep
			try {
				const r = this.read()
				step = r instanceof Promise ? await r : r
			} catch {
				step = this.cutting ? { text: '', last: false } : { text: this.failed(), last: true }
			}
			if (sink.closed) return
			if (this.cutting && !step.last) {
				if (step.text.length) {
					const written = sink.write(step.text)
					if (typeof written !== 'number') await written
					if (sink.closed) return
				}
				this.cancelled = true
				step = { text: this.errorEvent(SHUTTING_DOWN), last: true }
			}
			if (step.last) {
				// The last chunk goes out with the body's end (and with the headers when it was at hand), and the bill
				// is taken right after, in the same turn: nothing the client does can come between (see `finish`), and
				// the bill's own work is not on the way to the client's last byte (~13 µs at one connection). Not
				// awaited: the rest of the bill needs nothing from the response (and settleStream never rejects).
				sink.end(step.text)
				void this.finish(step.clean === true)
				return
			}
			const written = sink.write(step.text)
			if (typeof written !== 'number') await written
		}
	}

	/**
	 * The upstream call is let go and the bill settled in the turn the last chunk went out, before anything else runs:
	 * a client may hang up as soon as it has the terminator (the OpenAI SDK aborts the request right after `[DONE]`),
	 * which must not turn a finished stream into a client_abort, and a client that has the whole stream can rely on
	 * its usage row being recorded. Its hang-up, like its next request, is only seen in a later turn of the event loop.
	 */
	private finish(clean: boolean): Promise<void> {
		this.ended = true
		if (clean) releaseAfterEnd(this.up, () => this.rest())
		else this.up.abort()
		return this.bill()
	}

	/**
	 * Starts the client's response. A client that goes away aborts the upstream at once and settles what was produced
	 * (also when it left before the body was ever read, so this source never ended).
	 */
	respond(up: UpstreamCall, headers: Record<string, string>, keepaliveMs: number): Response {
		up.onClientGone(this.cancel)
		return pumpResponse(this, this.cancel, headers, keepaliveMs)
	}
}

/** What a stream's bill needs besides the outcome. */
export type StreamBilling = { info: CallInfo; budget: Budget; channel: Channel; upstreamModel: string; servedTier?: ServiceTier }

/** How a stream that had begun ended through the upstream's fault (the relays' `end_reason`s). */
const UPSTREAM_FAULTS = new Set(['upstream_cut', 'upstream_malformed', 'error'])

/**
 * Settles a stream's bill (never rejects: a failure is logged) and takes it off the open-streams gauge, which
 * `countOpen` put it on when its relay started. A stream the upstream failed (cut, stalled, broke or errored) before
 * any content reached the client is charged nothing, as a failure before the stream began is: the client got no
 * answer, only the stream's preamble (QA: a preamble sent at the end of the prefetch window, then a stall, was billed
 * its input).
 */
export async function settleStream(b: StreamBilling, o: Pick<Outcome, 'usage' | 'estimateOutput' | 'estimateReasoning' | 'endReason' | 'estimated' | 'stoppedEarly'>): Promise<void> {
	b.info.svc.metrics.openStreams.dec()
	judgeStream(b, o.endReason)
	try {
		if (UPSTREAM_FAULTS.has(o.endReason) && !o.usage?.imageOutput && !o.usage?.audioOutput && (await o.estimateOutput()) === 0) {
			b.info.billed?.()
			return await release(b.info, b.budget, 200, o.endReason, b.channel)
		}
		await settle(b.info, b.budget, { usage: o.usage, estimateOutput: o.estimateOutput, estimateReasoning: o.estimateReasoning, endReason: o.endReason, estimated: o.estimated, stoppedEarly: o.stoppedEarly, status: 200, channel: b.channel, upstreamModel: b.upstreamModel, servedTier: b.servedTier })
	} catch (e) {
		b.info.svc.log.error('settle failed', { request_id: b.info.requestId, error: String(e) })
		// Whoever waits for the usage billed (a stored completion's copy) waits no longer.
		b.info.billed?.()
	}
}

export const countOpen = (b: StreamBilling) => b.info.svc.metrics.openStreams.inc()


/**
 * The channel's circuit breaker hears how a stream ended (its attempt was `judgedAtEnd`, so nothing was said when it
 * began): a whole answer is a success; an upstream that cut, stalled, broke or failed the stream midway a failure, as it
 * would have been before the first byte; a client that left, or a shutdown, says nothing about the channel.
 */
export function judgeStream(b: Pick<StreamBilling, 'info' | 'channel'>, endReason: string | undefined): void {
	const { health, metrics } = b.info.svc
	if (endReason === 'ok') health.success(b.channel.id)
	else if (endReason !== undefined && UPSTREAM_FAULTS.has(endReason)) {
		health.failure(b.channel.id, `the stream ended midway (${endReason})`)
		metrics.upstreamErrors.inc({ channel: b.channel.name, kind: endReason })
	} else health.unclaim(b.channel.id)
}

/**
 * A relay of frame batches (the same-protocol fast path, the Responses verbatim relay): the window's frames first as
 * one batch, then the read the window left running, if any, then the reader's own. A relay says what step the frames
 * at hand make (`take`); reading more until they make one is shared.
 */
export abstract class FrameBatchRelay extends StreamRelay {
	protected batch: SseFrame[] | undefined
	protected upstreamDone: boolean
	private pending: Promise<IteratorResult<SseFrame[], undefined>> | undefined

	constructor(
		up: Up,
		protected readonly it: SseBatchReader,
		window: { frames: SseFrame[]; pre: { pending?: Promise<IteratorResult<SseFrame[], undefined>>; done: boolean } },
	) {
		super(up)
		this.batch = window.frames
		this.upstreamDone = window.pre.done
		this.pending = window.pre.pending
	}

	/**
	 * The step `batch` makes (taking it), or the end's once `upstreamDone`; undefined when neither makes one (every
	 * frame dropped, or nothing at hand).
	 */
	protected abstract take(): RelayStep | undefined

	protected read(): RelayStep | Promise<RelayStep> {
		return this.take() ?? this.readMore()
	}

	/**
	 * Reads until the upstream's frames make a step: the read the window left running first, then the body's reader
	 * itself (not through the batch reader's iterator). The upstream's read is chained to with methods made once per
	 * relay rather than awaited in an async function: this runs for every chunk of every stream, and an async call
	 * costs a frame object and a promise of its own each time.
	 */
	private readMore(): Promise<RelayStep> {
		const pending = this.pending
		if (pending) {
			this.pending = undefined
			return pending.then(this.onBatch)
		}
		return this.it.read().then(this.onChunk)
	}

	/** The window's running read ended: its frames, or the body's end. */
	private readonly onBatch = (r: IteratorResult<SseFrame[], undefined>): RelayStep | Promise<RelayStep> => {
		if (r.done) this.upstreamDone = true
		else this.batch = r.value
		return this.take() ?? this.readMore()
	}

	/** One read of the body: the frames it completed (often none), or its end. */
	private readonly onChunk = (r: Parameters<SseBatchReader['framesOf']>[0]): RelayStep | Promise<RelayStep> => {
		const frames = this.it.framesOf(r)
		if (this.it.ended) this.upstreamDone = true
		if (frames.length) this.batch = frames
		return this.take() ?? this.readMore()
	}

	protected rest(): Promise<IteratorResult<unknown>> {
		const r = this.pending ?? this.it.next()
		this.pending = undefined
		return r
	}
}

/**
 * A relay that forwards the upstream's frames as they came: each batch goes out as the upstream's own bytes when
 * `emit` changes none of its frames (the response would encode joined text again), the stream ends at the
 * protocol's terminator without waiting for the upstream to close, a broken frame ends it with an error event, and a
 * body that stopped without its terminator ends with `ending()`. The same-protocol chat relay and the legacy
 * completions relay are these.
 */
export abstract class PassthroughRelay extends FrameBatchRelay {
	/** A frame could not be read: the stream ended with an error event there. */
	protected broken = false
	/** Every chunk is rewritten (usage cut): a batch's bytes as received would go unused. */
	protected abstract readonly strip: boolean
	/** A frame's text for the client (empty to drop it); its meter reads it here. */
	protected abstract emit(f: SseFrame): string
	/** The protocol's last frame. */
	protected abstract isLast(f: SseFrame): boolean
	/** What closes a body that ended without the terminator: an error when it was cut, else the terminator it lacked. */
	protected abstract ending(): string
	/** An error event in the client's protocol. */
	protected streamError(message: string, code: string): string {
		return this.errorEvent(new GatewayError('upstream', message, { code }))
	}

	protected take(): RelayStep | undefined {
		const batch = this.batch
		if (batch) {
			this.batch = undefined
			const bytes = this.strip ? undefined : this.it.bytesOf(batch)
			let unchanged = bytes !== undefined
			let out = ''
			let last = false
			let n = 0
			for (; n < batch.length; n++) {
				const f = batch[n]!
				if (isBrokenFrame(f)) {
					this.broken = true
					break
				}
				const text = this.emit(f)
				unchanged &&= text === f.raw
				out += text
				if ((last = this.isLast(f))) {
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

	protected failed() {
		return this.cancelled ? '' : this.streamError('the upstream stream failed', 'upstream_stream_error')
	}
}

/** A relay made of functions (tests). */
class FnRelay extends StreamRelay {
	constructor(
		up: Up,
		private readonly billFn: () => Promise<void>,
		private readonly failedFn: () => string,
		private readonly restFn: () => Promise<IteratorResult<unknown>>,
		private readonly readFn: () => Promise<RelayStep>,
	) {
		super(up)
	}
	protected errorEvent(e: GatewayError) {
		return `error ${e.code}`
	}
	protected read() {
		return this.readFn()
	}
	protected failed() {
		return this.failedFn()
	}
	protected rest() {
		return this.restFn()
	}
	protected settle() {
		return this.billFn()
	}
}

/** A StreamRelay of the given steps (tests). */
export function relaySource(up: Up, bill: () => Promise<void>, failed: () => string, rest: () => Promise<IteratorResult<unknown>>, read: () => Promise<RelayStep>): StreamRelay {
	return new FnRelay(up, bill, failed, rest, read)
}

/** How long an upstream that sent its terminator may take to end its body before the call is aborted. */
export const DRAIN_GRACE_MS = 1_000

/**
 * Upstream bodies being drained after their stream ended. Each still holds its relay (the upstream's response, the
 * request, the metered frames), so the idle collector waits for these as for open streams (lib/idle-gc.ts): one
 * that ran while 1,000 streams' drains were pending found ~260,000 objects still reachable, which then stayed in
 * memory, as garbage, until something else brought a collection (seconds to never on an idle server).
 */
let draining = 0
export const drainingUpstreams = () => draining

/**
 * After the upstream's terminator its body usually ends at once (the last chunk of the chunked encoding, or HTTP/2's
 * end of stream), but the two may arrive in separate reads, and only a body read to its end lets the connection go
 * back to the pool: aborting the call closes it, and the next request to the vendor pays a new TCP and TLS handshake.
 * So what is left is read and dropped, and the call aborted only when the upstream holds its body open past the grace
 * (some servers close late, or send keepalives after the end) or the read fails.
 */
export function releaseAfterEnd(up: Up, next: () => Promise<IteratorResult<unknown>>, graceMs = DRAIN_GRACE_MS) {
	new Drain(up, next, performance.now() + graceMs).read()
}

/**
 * One drain: its reads chained with methods made once per drain, its deadline checked at the windows' clock ticks
 * (no promise per wait: most drains end at their first read).
 */
class Drain {
	private over = false

	constructor(
		private readonly up: Up,
		private readonly next: () => Promise<IteratorResult<unknown>>,
		private readonly deadline: number,
	) {
		draining++
		watchTicks(this.onTick)
	}

	read() {
		try {
			this.next().then(this.onRead, this.onFail)
		} catch {
			this.end(true)
		}
	}

	private readonly onRead = (r: IteratorResult<unknown>) => {
		if (this.over) return
		if (r.done) this.end(false)
		else this.read()
	}

	private readonly onFail = () => this.end(true)

	private readonly onTick = (now: number) => {
		if (now >= this.deadline) this.end(true)
	}

	private end(abort: boolean) {
		if (this.over) return
		this.over = true
		draining--
		unwatchTicks(this.onTick)
		if (abort) this.up.abort()
		else this.up.release()
	}
}
