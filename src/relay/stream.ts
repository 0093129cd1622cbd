/**
 * Streaming answers. Fast path: upstream frames are forwarded as they are (only OpenAI's usage chunk is stripped when
 * the client did not ask for it) while a frame meter reads usage. Conversion: upstream frames → canonical events →
 * the client's encoder. Either way the first events are awaited briefly before the response starts, so an upstream
 * that fails at once can still fail over (WIRE-NOTES wire §21); the bill is settled when the byte source ends (before
 * its last chunk goes out) or when the client disconnects (the upstream call is aborted at once).
 * @module
 */
import { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import { formatSse, type SseFrame, sseBatchReader } from '../core/sse'
import type { ProtocolCodec, ProtocolName } from '../protocols/codec'
import type { FrameDecoder } from '../protocols/stream-machine'
import type { Channel } from '../routing/catalog'
import { type Budget, type CallInfo, type Outcome, settle } from './budget'
import type { ChatCall } from './chat'
import { countText } from './estimate'
import { renameModel, stripUsage } from './fast-path'
import { isBrokenFrame, isPreambleFrame } from './frame-checks'
import { createEventMeter, createFrameMeter, type StreamEnd } from './meter'
import { type ByteSource, sseResponse } from './sse-response'
import type { UpstreamCall } from './upstream-fetch'

/** How long to wait for the first content before committing to this channel. */
export const FIRST_EVENT_WINDOW_MS = 1_000

export type StreamAttempt = {
	call: ChatCall
	info: CallInfo
	budget: Budget
	up: UpstreamCall
	fast: boolean
	upstream: ProtocolCodec
	headers: Record<string, string>
	channel: Channel
	upstreamModel: string
}

type Attempt = { response: Response } | { error: GatewayError }

const endReason = (cancelled: boolean, end: StreamEnd) => (cancelled ? 'client_abort' : end === 'cut' ? 'upstream_cut' : end)

/**
 * The clock of the prefetch windows: one timer for every stream in its window rather than a timer set and cleared
 * per stream (most windows end at the first read). It ticks every WINDOW_TICK_MS while reads wait on it and stops at
 * a tick that finds none, so a window ends at most one tick late. Each waiting read registers its own resolver and
 * removes it when the read wins: a `Promise.race` against one shared tick promise would instead leave a reaction on
 * it per read, keeping every read's result (the upstream's first frames) alive until the tick (measured: 7 µs of CPU
 * per stream and ~25 MB of peak RSS at 64 streamed connections).
 */
const WINDOW_TICK_MS = 50
const waiting = new Set<(v: 'tick') => void>()
let clock: ReturnType<typeof setInterval> | undefined

function onTick() {
	if (waiting.size === 0) {
		clearInterval(clock)
		clock = undefined
		return
	}
	for (const resolve of waiting) resolve('tick')
	waiting.clear()
}

/** `next`'s result, or 'tick' if the clock ticks first. */
function untilTick<T>(next: Promise<T>): Promise<T | 'tick'> {
	const { promise, resolve, reject } = Promise.withResolvers<T | 'tick'>()
	waiting.add(resolve)
	clock ??= setInterval(onTick, WINDOW_TICK_MS)
	next.then(
		(v) => {
			waiting.delete(resolve)
			resolve(v)
		},
		(e) => {
			waiting.delete(resolve)
			reject(e)
		},
	)
	return promise
}

/** Reads items while they are only preamble (per `isPreamble`), up to the window. */
export async function prefetch<T>(it: AsyncIterator<T>, isPreamble: (v: T) => boolean, windowMs: number) {
	const buffered: T[] = []
	// Monotonic: a wall-clock change must not stretch or cut the window.
	const deadline = performance.now() + windowMs
	let next = it.next()
	while (true) {
		const r = await untilTick(next)
		if (r === 'tick') {
			if (performance.now() >= deadline) return { buffered, pending: next, done: false }
			continue
		}
		if (r.done) return { buffered, pending: undefined, done: true }
		buffered.push(r.value)
		if (!isPreamble(r.value)) return { buffered, pending: undefined, done: false }
		next = it.next()
	}
}

/** The reads after a prefetch window: the read it left running, if any, then the iterator's own. */
export function readsAfter<T, R>(pending: Promise<IteratorResult<T, R>> | undefined, it: AsyncIterator<T, R>): () => Promise<IteratorResult<T, R>> {
	return () => {
		const r = pending ?? it.next()
		pending = undefined
		return r
	}
}

/**
 * The prefetch window over an upstream's frame batches: `frames`, all it read; `head`, those up to the first that is
 * not preamble (only they decide failover, as when frames were awaited one at a time). Undefined when the upstream's
 * body failed inside the window.
 */
export async function prefetchFrames(it: AsyncIterator<SseFrame[], undefined>, isPreamble: (f: SseFrame) => boolean) {
	// Where content starts in the last batch the window looked at (-1: all preamble).
	let contentAt = -1
	const pre = await prefetch(it, (b) => (contentAt = b.findIndex((f) => !isPreamble(f))) === -1, FIRST_EVENT_WINDOW_MS).catch(() => undefined)
	if (!pre) return undefined
	const frames = pre.buffered.length === 1 ? pre.buffered[0]! : pre.buffered.flat()
	const lastBatch = pre.buffered.at(-1)?.length ?? 0
	const head = contentAt === -1 ? frames : frames.slice(0, frames.length - lastBatch + contentAt + 1)
	return { pre, frames, head }
}

export async function relayStream(a: StreamAttempt): Promise<Attempt> {
	return a.fast ? fastStream(a) : convertedStream(a)
}

function isErrorFrame(p: ProtocolName, f: SseFrame) {
	return p === 'anthropic-messages' ? f.event === 'error' : f.data.startsWith('{"error"')
}

/**
 * Frames are relayed in the batches the upstream's chunks delivered: one write per chunk rather than per frame, and
 * a frame nothing changes goes out as the upstream sent it. The response reads a plain iterator (no generators
 * between the upstream's reader and the client's stream: this path runs for every chunk of every stream).
 */
async function fastStream(a: StreamAttempt): Promise<Attempt> {
	const proto = a.call.client.name
	const meter = createFrameMeter(proto)
	const it = sseBatchReader(a.up.res.body!)
	const prefetched = await prefetchFrames(it, (f) => isPreambleFrame(proto, f))
	if (!prefetched) return failedBeforeContent(a.up)
	const { pre, frames, head } = prefetched
	const err = head.find((f) => isErrorFrame(proto, f))
	if (err || (pre.done && frames.length === 0)) {
		a.up.abort()
		return { error: err ? errorOfFrame(err) : new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' }) }
	}
	if (head.some(isBrokenFrame)) {
		a.up.abort()
		return { error: new GatewayError('upstream', 'upstream sent a malformed stream event', { retryable: true, code: 'upstream_malformed' }) }
	}
	const strip = proto === 'openai-chat' && !a.call.includeUsage
	// A model_map alias is shown to the client as it asked for it (OpenAI names the model on every chunk,
	// Anthropic only in message_start).
	const alias = a.upstreamModel !== a.call.ir.model ? a.call.ir.model : undefined
	const renames = (f: SseFrame) => (proto === 'openai-chat' ? f.data !== '[DONE]' : f.event === 'message_start')
	const stop = { cancelled: false }
	let broken = false
	const client = a.call.client
	const bill = biller(a, () => ({
		usage: meter.usage(),
		estimateOutput: () => countFrames(a.upstream, meter.kept()),
		endReason: broken && !stop.cancelled ? 'upstream_malformed' : endReason(stop.cancelled, meter.end()),
	}))
	const emit = (f: SseFrame): string => {
		meter.onFrame(f)
		let data = strip ? stripUsage(f.data) : f.data
		if (data !== undefined && alias !== undefined && renames(f)) data = renameModel(data, alias)
		if (data === undefined) return ''
		return data === f.data ? (f.raw ?? formatSse(f)) : formatSse({ event: f.event, id: f.id, data })
	}
	const streamError = (message: string, code: string) => formatSse(client.encodeStreamError(new GatewayError('upstream', message, { code })))

	// The relay's state between reads: the batch at hand, and a read the prefetch window left running.
	let batch: SseFrame[] | undefined = frames
	let upstreamDone = pre.done
	const nextBatch = readsAfter(pre.pending, it)
	const failed = () => (stop.cancelled ? '' : streamError('the upstream stream failed', 'upstream_stream_error'))
	const source = relaySource(a.up, bill, failed, nextBatch, async () => {
		let out = ''
		while (true) {
			if (batch) {
				let last = false
				for (const f of batch) {
					if (isBrokenFrame(f)) {
						broken = true
						break
					}
					out += emit(f)
					if ((last = isTerminal(proto, f))) break
				}
				batch = undefined
				// Nothing follows the terminator: the stream ends now rather than waiting for the upstream to close
				// (and sending keepalives after it).
				if (last) return { text: out, last: true, clean: true }
				if (broken) return { text: out + streamError('the upstream sent a malformed stream event', 'upstream_malformed'), last: true }
				if (out) return { text: out, last: false }
			}
			if (upstreamDone) return { text: meter.end() === 'cut' ? streamError('the upstream stream ended unexpectedly', 'upstream_cut') : '', last: true, clean: true }
			const r = await nextBatch()
			if (r.done) upstreamDone = true
			else batch = r.value
		}
	})
	return respond(a, source, stop, bill)
}

const DONE = { value: undefined, done: true } as const

/**
 * An upstream body's chunks run through the protocol's decoder, each chunk's events as one array: one await per
 * chunk (for the network), not a promise per event. Ends once the decoder is done (the upstream's terminator or an
 * error), without waiting for the body to close.
 */
function decodeChunks(decoder: FrameDecoder, batches: AsyncIterator<SseFrame[], undefined>): AsyncIterator<StreamEvent[], undefined> {
	return {
		async next() {
			while (!decoder.done) {
				const r = await batches.next()
				const events: StreamEvent[] = []
				if (r.done) decoder.end(events)
				else
					for (const f of r.value) {
						decoder.push(f, events)
						if (decoder.done) break
					}
				if (events.length) return { value: events, done: false }
			}
			return DONE
		},
		async return() {
			await batches.return?.()
			return DONE
		},
	}
}

const isPreambleEvent = (e: StreamEvent) => e.type === 'start' || e.type === 'ping' || e.type === 'usage'

/**
 * Conversion: upstream frames → the upstream protocol's decoder → canonical events (metered) → the client protocol's
 * encoder → client frames, all synchronous per upstream chunk (src/protocols/stream-machine.ts). A chunk's output
 * goes out in one write as soon as the chunk is converted.
 */
async function convertedStream(a: StreamAttempt): Promise<Attempt> {
	const meter = createEventMeter()
	const decoder = a.upstream.streamDecoder()
	const batches = sseBatchReader(a.up.res.body!)
	const chunks = decodeChunks(decoder, batches)
	const prefetched = await prefetch(chunks, (events) => events.every(isPreambleEvent), FIRST_EVENT_WINDOW_MS).catch(() => undefined)
	if (!prefetched) return failedBeforeContent(a.up)
	const pre = prefetched
	const head = pre.buffered.length === 1 ? pre.buffered[0]! : pre.buffered.flat()
	const err = head.find((e) => e.type === 'error')
	const sawContent = head.some((e) => e.type === 'block_start' || e.type === 'finish')
	if ((err && !sawContent) || (pre.done && head.length === 0)) {
		a.up.abort()
		const e = err?.type === 'error' ? err.error : undefined
		return { error: e ? new GatewayError(e.kind, e.message, { code: e.code, retryable: true }) : new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
	}
	const stop = { cancelled: false }
	const client = a.call.client
	const ctx = { model: a.call.ir.model, includeUsage: a.call.includeUsage, inputTokensEstimate: a.budget.countInput() }
	const bill = biller(a, () => ({ usage: meter.usage(), estimateOutput: () => countText(meter.text()), endReason: endReason(stop.cancelled, meter.end()) }))
	const encoder = client.streamEncoder(ctx)
	const frames: SseFrame[] = []
	/** The client text for a chunk's events (metered on the way); `last` closes the encoder (its terminator). */
	const encode = (events: StreamEvent[] | undefined, last: boolean): string => {
		if (events)
			for (const e of events) {
				meter.onEvent(e)
				encoder.push(e, frames)
			}
		if (last) encoder.end(frames)
		let text = ''
		for (const f of frames) text += formatSse(f)
		frames.length = 0
		return text
	}
	// The chunks the prefetch window read are replayed first; then a read it left running, then the rest.
	let replayed = 0
	let pending = pre.pending
	const failed = () => (stop.cancelled ? '' : formatSse(client.encodeStreamError(new GatewayError('upstream', 'the upstream stream failed', { code: 'upstream_stream_error' }))))
	const source = relaySource(a.up, bill, failed, () => batches.next(), async () => {
		while (true) {
			let events: StreamEvent[] | undefined
			let ended = false
			if (replayed < pre.buffered.length) events = pre.buffered[replayed++]
			else if (pre.done && !pending) ended = true
			else {
				const r = await (pending ?? chunks.next())
				pending = undefined
				if (r.done) ended = true
				else events = r.value
			}
			// The decoder is done with the events at hand (the upstream's terminator or an error): nothing follows, so
			// the stream ends now rather than waiting for the upstream to close.
			const last = ended || encoder.done || (decoder.done && replayed >= pre.buffered.length && !pending)
			const text = encode(events, last)
			// An error event also leaves the decoder done: only the terminator or the body's end leave the rest to drain.
			if (last) return { text, last, clean: ended || (decoder.done && meter.end() !== 'error') }
			if (text) return { text, last }
		}
	})
	return respond(a, source, stop, bill)
}

/**
 * One step of a relay: the next text to send (never empty unless it is the last), whether the stream ends with it,
 * and, when it does, whether the upstream's stream ended cleanly (its terminator, or its body's end): only then is
 * the rest of its body drained rather than the call aborted.
 */
export type RelayStep = { text: string; last: boolean; clean?: boolean }

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
export function releaseAfterEnd(up: Pick<UpstreamCall, 'abort' | 'release'>, next: () => Promise<IteratorResult<unknown>>, graceMs = DRAIN_GRACE_MS) {
	const deadline = performance.now() + graceMs
	draining++
	void (async () => {
		try {
			let read = next()
			while (true) {
				const r = await untilTick(read)
				if (r === 'tick') {
					if (performance.now() >= deadline) return up.abort()
					continue
				}
				if (r.done) return up.release()
				read = next()
			}
		} catch {
			up.abort()
		} finally {
			draining--
		}
	})()
}

/**
 * The client stream's byte source around a relay's `read` step. When the stream ends (or `read` throws: then
 * `failed()` gives the closing text), the upstream call is let go (the rest of its body drained through `rest` after a
 * clean end, aborted otherwise) and the bill settled before that last chunk goes out: a client may hang up as soon
 * as it has the terminator. A client that goes away (`return`) aborts the call and settles the same way.
 */
export function relaySource(
	up: Pick<UpstreamCall, 'abort' | 'release'>,
	bill: () => Promise<void>,
	failed: () => string,
	rest: () => Promise<IteratorResult<unknown>>,
	read: () => Promise<RelayStep>,
): ByteSource {
	let over = false
	const finish = async (clean: boolean) => {
		over = true
		if (clean) releaseAfterEnd(up, rest)
		else up.abort()
		await bill()
	}
	return {
		async next() {
			if (over) return DONE
			let step: RelayStep
			try {
				step = await read()
			} catch {
				step = { text: failed(), last: true }
			}
			if (step.last) await finish(step.clean === true)
			return step.text ? { value: step.text, done: false } : DONE
		},
		async return() {
			if (!over) await finish(false)
			return DONE
		},
		over: () => over,
	}
}

/** Starts the response; a client that goes away aborts the upstream at once and settles what was produced (also when
 * it left before the body was ever read, so the byte source never ended). */
async function respond(a: StreamAttempt, bytes: ByteSource, stop: { cancelled: boolean }, bill: () => Promise<void>): Promise<Attempt> {
	const cancel = () => {
		stop.cancelled = true
		a.up.abort()
		void bill()
	}
	a.up.onClientGone(cancel)
	return { response: await sseResponse(bytes, cancel, a.headers, a.call.svc.env.keepaliveMs) }
}

/**
 * The protocol's last frame. The bill is settled before it goes out: a client may hang up as soon as it has it (the
 * OpenAI SDK aborts the request right after `[DONE]`), which must not turn a finished stream into a client_abort,
 * and a client that has the whole stream can rely on its usage row being written.
 */
function isTerminal(p: ProtocolName, f: SseFrame): boolean {
	return p === 'openai-chat' ? f.data === '[DONE]' : p === 'anthropic-messages' && f.event === 'message_stop'
}

/** Settles the stream's bill once, with the outcome as it stands at the first call (later calls wait for it). */
function biller(a: StreamAttempt, outcome: () => Pick<Outcome, 'usage' | 'estimateOutput' | 'endReason'>): () => Promise<void> {
	let billed: Promise<void> | undefined
	const open = a.call.svc.metrics.openStreams
	open.inc()
	return () =>
		(billed ??= (open.dec(), settle(a.info, a.budget, { ...outcome(), status: 200, channel: a.channel, upstreamModel: a.upstreamModel }).then(
			() => undefined,
			(e) => a.call.svc.log.error('settle failed', { request_id: a.call.requestId, error: String(e) }),
		)))
}

/**
 * The upstream's body failed (a reset connection) while the window still held everything back: nothing reached the
 * client, so this is an upstream failure another channel may answer, not an internal error.
 */
export function failedBeforeContent(up: UpstreamCall): Attempt {
	up.abort()
	if (up.clientGone) return { error: new GatewayError('api_error', 'client closed the request', { code: 'client_closed' }) }
	return { error: new GatewayError('upstream', 'the upstream stream failed before any content', { retryable: true, code: 'upstream_cut' }) }
}

/** An error frame seen before anything was sent → a GatewayError that may fail over. */
function errorOfFrame(f: SseFrame): GatewayError {
	let message = 'upstream stream error'
	try {
		const b = JSON.parse(f.data) as { error?: { message?: string; type?: string } }
		message = b.error?.message ?? message
		if (b.error?.type === 'invalid_request_error') return new GatewayError('invalid_request', message)
	} catch {
		// keep the default message
	}
	return new GatewayError('upstream', message, { retryable: true })
}

/** Output tokens in relayed frames, decoded through the protocol's own decoder (only when usage was missing). */
function countFrames(codec: ProtocolCodec, frames: SseFrame[]): number {
	const meter = createEventMeter()
	const decoder = codec.streamDecoder()
	const events: StreamEvent[] = []
	for (const f of frames) {
		decoder.push(f, events)
		if (decoder.done) break
	}
	decoder.end(events)
	for (const e of events) meter.onEvent(e)
	return countText(meter.text())
}
