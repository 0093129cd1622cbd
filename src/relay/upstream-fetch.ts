/**
 * One HTTP call to a vendor, with the timeouts a gateway needs: until the response headers (first byte) and idle
 * between body chunks, and cancellation when the client goes away. Failures become GatewayErrors that say whether
 * another channel may help.
 *
 * Both timeouts abort the call through its AbortController: first byte with a timer per call, cleared at the headers;
 * idle from one clock shared by every watched body (`IDLE_TICK_MS`), never early and at most two ticks late, with no
 * timer reset per chunk (see `sse`). Bun's own fetch `timeout` (https://bun.sh/reference/globals/BunFetchRequestInit/timeout)
 * is a socket idle timeout that also runs before the headers and fires only on a coarse clock (Bun 1.4.5, measured:
 * 1.5 s and 4 s both fire at 8 s, 20 s at 24 s; QA report item 7): it stays only as a backstop, set past both timeouts,
 * for bodies no relay code reads through the call (`sse`, `text`, `watched`): the task, file and batch APIs'.
 * @module
 */
import { clientClosedAfterSend, GatewayError } from '../core/errors'
import { type SseBatchReader, sseBatchReader } from '../core/sse'
import { multipartBody } from '../http/multipart'
import { piecesStream, TextPieces } from './text-pieces'
import type { CallHooks, CallVia, UpstreamRequest } from '../providers/adapter'
import type { Channel } from '../routing/catalog'
import { sentCredentials, withoutSentCredentials } from './sent-credentials'

/**
 * The idle watch's own clock (every IDLE_TICK_MS while any body is watched), apart from the prefetch windows' clock
 * (relay/prefetch.ts): sharing that one kept it ticking for every open stream, and a window's read then met a tick
 * at any moment rather than a full tick after it began (paired in one process, streamed chat at 64 connections:
 * ~4 µs more CPU per request).
 */
const IDLE_TICK_MS = 50
const idleWatchers = new Set<(now: number) => void>()
let idleClock: ReturnType<typeof setInterval> | undefined

function onIdleTick() {
	if (idleWatchers.size === 0) {
		clearInterval(idleClock)
		idleClock = undefined
		return
	}
	// One clock read per tick, not one per watcher: thousands of open streams each watch it.
	const now = performance.now()
	for (const watch of idleWatchers) watch(now)
}

function watchTicks(fn: (now: number) => void) {
	idleWatchers.add(fn)
	if (!idleClock) {
		idleClock = setInterval(onIdleTick, IDLE_TICK_MS)
		;(idleClock as { unref?: () => void }).unref?.()
	}
}

const unwatchTicks = (fn: (now: number) => void) => void idleWatchers.delete(fn)

export type Timeouts = { firstByteMs: number; idleMs: number }

export const DEFAULT_TIMEOUTS: Timeouts = { firstByteMs: 120_000, idleMs: 300_000 }

/**
 * How long a call whose headers come with its whole answer (non-streamed model work: a reasoning model's answer, an
 * image, a transcript) may take by default: the 10 minutes the vendors' SDKs wait. Their wait for the first byte is
 * the whole generation, which a reasoning model can spend minutes on; cut at `firstByteMs`, the answer was lost, the
 * vendor billed it anyway, and a failover paid for it twice.
 */
export const DEFAULT_ANSWER_MS = 600_000

/** What a call waits for before its first byte: only the headers (a stream, a lookup), or the whole answer. */
export type Waits = 'headers' | 'answer'

export type UpstreamCall = {
	res: Response
	/** Releases the call (the relay is done with it) and stops watching the client. */
	abort(): void
	/**
	 * The body was read to its end: stops watching the client and aborts nothing, so the connection goes back to the
	 * pool (an abort before the body's end closes it).
	 */
	release(): void
	/**
	 * Runs `fn` when the client goes away before `abort()`, after the upstream call was aborted: the one listener on
	 * the client's signal serves the relay too (a second listener per request costs as much as the rest of the
	 * bookkeeping around it). Runs it at once when the client is already gone.
	 */
	onClientGone(fn: () => void): void
	/** The client went away (its request was aborted). */
	readonly clientGone: boolean
	/** One of the call's timeouts fired (first byte, or idle in `sse`): the upstream did not answer in time (504). */
	readonly timedOut: boolean
	/**
	 * The response body as SSE frame batches, watched for silence: once a read has waited `idleMs` with nothing
	 * arriving (from the headers on), the call is aborted and the read fails, as a cut connection does. Time the relay
	 * spends not reading (a slow client holding it back) does not count: the upstream is not silent then.
	 */
	sse(keepRaw?: boolean): SseBatchReader
	/**
	 * The response body read whole, watched for silence as `sse` is: a body that stops arriving for `idleMs` fails
	 * with the upstream's timeout (504) then, not at Bun's backstop seconds later. Rejects as `res.text()` would for a
	 * body cut short.
	 */
	text(): Promise<string>
	/**
	 * The response with its body watched for silence as it is read, for code that reads or pipes a Response (the
	 * passthrough routes): the same status and headers, the body pulled from the upstream only as it is read.
	 */
	watched(): Response
}

/** What the idle watch reads of a body: reads asked of it and answered, and whether it ended. */
type WatchedBody = { readonly asked: number; readonly got: number; readonly ended: boolean }

/**
 * The reason given when the relay is done with an upstream call (every call ends so, most after the body was read
 * whole): one shared value, because `abort()` without a reason builds a DOMException with a stack trace each time.
 */
const RELEASED = new GatewayError('api_error', 'upstream call released by the relay', { code: 'released' })

/**
 * Bun's fetch `timeout` past both of ours (see the module comment): it fires at the earliest at its value, rounded up
 * to its clock, so ours always fire first where they watch.
 */
const BACKSTOP_MARGIN_MS = 1_000

/**
 * Per-channel overrides from `settings.timeouts` ({first_byte_ms, answer_ms, idle_ms}). A call that `waits` for its
 * whole answer gets `answer_ms`, else a `first_byte_ms` the operator set (as before `answer_ms` existed), else
 * DEFAULT_ANSWER_MS.
 * @example channelTimeouts({}, 'answer').firstByteMs === 600_000
 */
export function channelTimeouts(settings: Record<string, unknown>, waits: Waits = 'headers'): Timeouts {
	const t = (settings.timeouts ?? {}) as Record<string, unknown>
	const pick = (v: unknown, d: number) => (typeof v === 'number' && v > 0 ? v : d)
	const firstByteMs = pick(t.first_byte_ms, DEFAULT_TIMEOUTS.firstByteMs)
	return { firstByteMs: waits === 'answer' ? pick(t.answer_ms, pick(t.first_byte_ms, DEFAULT_ANSWER_MS)) : firstByteMs, idleMs: pick(t.idle_ms, DEFAULT_TIMEOUTS.idleMs) }
}

/** What a model call waits for: its headers when it streams, else its whole answer. */
export const waitsFor = (stream: boolean | undefined): Waits => (stream ? 'headers' : 'answer')

/**
 * @param init.adapter with `init.ch`, the adapter and channel of a chat call: the adapter's hooks reshape the body, set
 * credentials from the final request and turn the answer into the protocol's wire (providers/adapter.ts); for a call
 * that is not chat, the channel's credential hooks alone (passthrough/upstream.ts `credentialHooks`: an Azure
 * channel's Entra ID token). Two fields of the init rather than an object: nothing more is made per call for the
 * adapters without hooks.
 */
export async function fetchUpstream(
	url: string,
	init: { method?: string; headers: Record<string, string>; body?: BodyInit | TextPieces } & CallVia,
	timeouts: Timeouts,
	clientSignal: AbortSignal,
): Promise<UpstreamCall> {
	const { adapter, ch } = init
	let req: UpstreamRequest | undefined
	if (ch && (adapter?.reshape || adapter?.authorize)) {
		// A hook may sign or reshape the text: a body in pieces is joined for it.
		const body = init.body instanceof TextPieces ? String(init.body) : init.body
		req = await prepared(url, body === init.body ? (init as typeof init & { body?: BodyInit }) : { ...init, body }, ch, adapter, clientSignal)
		// A body that is not text (a multipart form) goes as it came: only the credentials were set.
		init = typeof body === 'string' || body === undefined ? req : { ...req, body }
	}
	// The url the hooks settled (Vertex AI's project, when the metadata server names it).
	const target = req?.url ?? url
	const call = new Call(clientSignal, timeouts.idleMs)
	if (clientSignal.aborted) call.onClientAbort()
	else clientSignal.addEventListener('abort', call.onClientAbort, { once: true })
	// A timer per call, not per chunk: cleared when the headers arrive.
	const timer = setTimeout(firstByteTimeout, timeouts.firstByteMs, call)
	try {
		call.res = await send(target, init, call, timeouts)
		// After `answer`, whose status is the honest one (Bedrock's 403 ExpiredTokenException is a 401).
		if (adapter?.answer) call.res = adapter.answer(call.res, ch)
		// Credentials the vendor stopped taking (a cached OAuth token, a role's expired keys): renewed once, and the call made again.
		if (call.res.status === 401 && req && adapter?.reauthorize?.(ch!, req)) {
			await call.res.body?.cancel().catch(() => {})
			// `init` sends `req.headers`, which authorize sets again.
			await adapter.authorize?.(ch!, req, clientSignal)
			call.res = await send(target, init, call, timeouts)
			if (adapter.answer) call.res = adapter.answer(call.res, ch)
		}
		// A request the vendor refused for something the adapter can leave out (a beta a cloud does not take): changed, signed and made again.
		for (let again = 0; again < 2 && call.res.status === 400 && req && adapter?.refused && (await adapter.refused(ch!, req, call.res.clone())); again++) {
			await call.res.body?.cancel().catch(() => {})
			await adapter.authorize?.(ch!, req, clientSignal)
			call.res = await send(target, init, call, timeouts)
			if (adapter.answer) call.res = adapter.answer(call.res, ch)
		}
		// An error may repeat the call's key (sent-credentials.ts); answers (2xx) go on untouched, unslowed.
		if (call.res.status >= 400) call.res = withoutSentCredentials(call.res, sentCredentials(target, init.headers))
		return call
	} catch (e) {
		clientSignal.removeEventListener('abort', call.onClientAbort)
		if (call.timedOut) throw upstreamTimeout(`upstream did not answer within ${timeouts.firstByteMs} ms`)
		// The request went out (`send` had been called): the vendor may bill it.
		if (clientSignal.aborted) throw clientClosedAfterSend()
		// The credentials renewed after a 401 could not be had (the token endpoint refused them): said as they are.
		if (e instanceof GatewayError) throw e
		// Why (a DNS name not found, a refused address) names the channel's host: the operator's to read, not the caller's.
		throw new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, code: 'upstream_unreachable', detail: `cannot reach upstream: ${(e as Error).message ?? e}`, cause: e })
	} finally {
		clearTimeout(timer)
	}
}

function send(url: string, init: { method?: string; headers: Record<string, string>; body?: BodyInit | TextPieces }, call: Call, timeouts: Timeouts) {
	// A form goes as a stream of its parts (http/multipart.ts): Bun would serialise it whole first, holding the loop.
	const form = init.body instanceof FormData ? multipartBody(init.body) : undefined
	// A large body in pieces as a stream of them, sized (text-pieces.ts): joined, it would be made on the loop.
	const pieces = init.body instanceof TextPieces ? piecesStream(init.body) : undefined
	return fetch(url, {
		method: init.method ?? 'POST',
		headers: form ? { ...withoutBodyHeaders(init.headers), ...form.headers } : pieces ? { ...init.headers, 'content-length': String(pieces.length) } : init.headers,
		body: form ? form.body : pieces ? pieces.body : (init.body as BodyInit | undefined),
		signal: call.ctl.signal,
		// Before the headers, Bun's idle timeout would cut a slow first byte at `idleMs` (a non-streamed answer
		// sends its headers only when it is complete): so it is past both of ours.
		timeout: Math.max(timeouts.firstByteMs, timeouts.idleMs) + BACKSTOP_MARGIN_MS,
		redirect: 'manual',
	})
}

/** The headers of a request without those of its body (a form's are set anew). */
function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
	const out: Record<string, string> = {}
	for (const [k, v] of Object.entries(headers)) if (!/^content-(type|length)$/i.test(k)) out[k] = v
	return out
}

/**
 * `init` after the adapter's hooks: the body reshaped, then the credentials set from the final request. A body that
 * is not text is for credentials set without it (a bearer token), never for a reshape or a signature over it.
 */
async function prepared(url: string, init: { method?: string; headers: Record<string, string>; body?: BodyInit }, ch: Channel, hooks: CallHooks, clientSignal: AbortSignal) {
	const text = init.body === undefined || typeof init.body === 'string'
	if (!text && hooks.reshape) throw new TypeError('a call reshaped by an adapter sends a text body')
	const req: UpstreamRequest = { url, method: init.method ?? 'POST', headers: { ...init.headers }, body: text ? (init.body as string | undefined) : undefined }
	hooks.reshape?.(ch, req)
	await hooks.authorize?.(ch, req, clientSignal)
	return req
}

/** The upstream did not answer in time: 504 `upstream_timeout`, which another channel may answer. */
export const upstreamTimeout = (message: string) => new GatewayError('timeout', message, { retryable: true, code: 'upstream_timeout' })

/**
 * A body read whole that failed because it went silent: past `idle_ms` (read through the call), or until Bun's socket
 * timeout (the backstop above) fired. The upstream's timeout (504), not a cut (502); undefined for any other failure.
 */
export function bodyTimeout(e: unknown): GatewayError | undefined {
	if (e instanceof DOMException && e.name === 'TimeoutError') return upstreamTimeout('upstream stopped sending its answer before it was complete')
	return e instanceof GatewayError && e.kind === 'timeout' ? e : undefined
}

/** An answer that does not parse: the upstream's fault (502), which another channel may answer. */
export const malformedAnswer = () => new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed' })

/** Why a whole answer could not be read or parsed: it stalled past the backstop (504, `bodyTimeout`), else it is malformed (502). */
export const unreadableAnswer = (e: unknown): GatewayError => bodyTimeout(e) ?? malformedAnswer()

/**
 * A body read whole, '' when it cannot be read (the caller's parse then calls it malformed, or its error status speaks
 * for it); but an answer (2xx) that stalled past the backstop throws the upstream's timeout (504, `bodyTimeout`).
 */
export async function answerText(from: Response | UpstreamCall): Promise<string> {
	try {
		return await from.text()
	} catch (e) {
		const timedOut = (from instanceof Response ? from.ok : from.res.ok) ? bodyTimeout(e) : undefined
		if (timedOut) throw timedOut
		return ''
	}
}

function firstByteTimeout(call: Call) {
	call.timedOut = true
	call.ctl.abort()
}

/** A class: one is made per upstream call, and its methods cost nothing per instance (only the listener does). */
class Call implements UpstreamCall {
	res!: Response
	readonly ctl = new AbortController()
	timedOut = false
	private released = false
	private gone: (() => void) | undefined = undefined
	/** The body being watched for silence (`sse`), its read counts at the last tick, and since when nothing moved. */
	private watching: WatchedBody | undefined = undefined
	private tick: ((now: number) => void) | undefined = undefined
	private seen = 0
	private quietSince = 0

	constructor(
		private readonly clientSignal: AbortSignal,
		private readonly idleMs: number,
	) {}

	/** The listener on the client's signal. */
	readonly onClientAbort = () => {
		this.ctl.abort(new GatewayError('api_error', 'client closed the request'))
		this.gone?.()
	}

	abort() {
		this.release()
		this.ctl.abort(RELEASED)
	}

	release() {
		this.released = true
		this.clientSignal.removeEventListener('abort', this.onClientAbort)
		if (this.tick) unwatchTicks(this.tick)
	}

	sse(keepRaw = true): SseBatchReader {
		const it = sseBatchReader(this.res.body!, keepRaw)
		if (this.released) return it
		const tick = this.watch(it)
		it.onEnd = () => unwatchTicks(tick)
		return it
	}

	async text(): Promise<string> {
		const { res } = this
		if (this.released) return res.text()
		// A body of announced length was whole when the upstream sent its headers (one that trickles bytes to keep the
		// connection open cannot know its length): read natively, it must arrive within idle_ms, a wait that never
		// looks moved. Read by counted reads otherwise, which cost ~4 µs more per answer (bench/README).
		const sized = res.headers.has('content-length')
		const body = sized ? new SizedBody() : res.body && new WholeBody(res.body.getReader())
		if (!body) return res.text()
		const tick = this.watch(body)
		try {
			return await (body instanceof SizedBody ? res.text() : body.read())
		} finally {
			body.ended = true
			unwatchTicks(tick)
		}
	}

	watched(): Response {
		const { res } = this
		if (!res.body || this.released) return res
		const reader = res.body.getReader()
		const counts = { asked: 0, got: 0, ended: false }
		// Watched from the first read: a body the route never reads (nor cancels) leaves nothing on the clock.
		let tick: ((now: number) => void) | undefined
		const end = () => {
			counts.ended = true
			if (tick) unwatchTicks(tick)
		}
		// No high-water mark: a read reaches the upstream only when the reader asks, so a slow reader is not a silent upstream.
		const body = new ReadableStream<Uint8Array>(
			{
				pull: async (ctl) => {
					tick ??= this.watch(counts)
					counts.asked++
					try {
						const r = await reader.read()
						counts.got++
						if (r.done) {
							end()
							ctl.close()
						} else ctl.enqueue(r.value)
					} catch (e) {
						end()
						ctl.error(e)
					}
				},
				cancel: (reason) => {
					end()
					return reader.cancel(reason)
				},
			},
			{ highWaterMark: 0 },
		)
		return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
	}

	/** Watches `body` for silence at the idle clock's ticks; the tick function is made only for a watched body, not for every call. */
	private watch(body: WatchedBody) {
		this.watching = body
		const tick = (now: number) => this.checkIdle(now)
		this.tick = tick
		watchTicks(tick)
		return tick
	}

	/**
	 * At each tick of the idle clock (every IDLE_TICK_MS): a read asked or answered since the last tick, or none waiting,
	 * restarts the quiet time; a read still waiting once it reaches `idleMs` aborts the call. The quiet time starts at
	 * the first tick that sees the last change, so the call is never cut early and at most two ticks late. Why counters
	 * and a shared clock rather than a timer reset per chunk (`timer.refresh()`) or a timestamp per chunk: a chunk then
	 * costs two increments (no measurable change per chunk, bench: 0.28 µs per chunk of the batch reader either way),
	 * and the clock costs under 10 µs per 1,000 open streams per tick (0.2 ms of CPU a second).
	 */
	private checkIdle(now: number) {
		const it = this.watching!
		if (it.ended) return unwatchTicks(this.tick!)
		const moved = it.asked + it.got
		if (moved !== this.seen || it.asked === it.got) {
			this.seen = moved
			this.quietSince = now
		} else if (now - this.quietSince >= this.idleMs) {
			unwatchTicks(this.tick!)
			this.timedOut = true
			this.ctl.abort(upstreamTimeout(`upstream sent nothing for ${this.idleMs} ms`))
		}
	}

	onClientGone(fn: () => void) {
		if (this.released) return
		if (this.clientSignal.aborted) return fn()
		this.gone = fn
	}

	get clientGone() {
		return this.clientSignal.aborted
	}
}

const utf8 = new TextDecoder()

/** A body read natively (`res.text()`), whose progress nothing sees: one read asked and not answered until it ends. */
class SizedBody implements WatchedBody {
	readonly asked = 1
	readonly got = 0
	ended = false
}

/** A body read to its end by reads the idle watch counts (`res.text()` reads it where nothing can watch it move). */
class WholeBody implements WatchedBody {
	asked = 0
	got = 0
	ended = false

	constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

	async read(): Promise<string> {
		const parts: Uint8Array[] = []
		let size = 0
		try {
			for (;;) {
				this.asked++
				const r = await this.reader.read()
				this.got++
				if (r.done) break
				parts.push(r.value)
				size += r.value.byteLength
			}
		} finally {
			this.ended = true
		}
		if (parts.length === 1) return utf8.decode(parts[0])
		const all = new Uint8Array(size)
		let at = 0
		for (const p of parts) {
			all.set(p, at)
			at += p.byteLength
		}
		return utf8.decode(all)
	}
}
