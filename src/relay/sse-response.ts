/**
 * Turns a source of SSE chunks (an async generator, or the relay's byte source) into a streaming Response, read only
 * as fast as the client takes it (backpressure), with a keepalive comment whenever nothing was sent for a while (long
 * silent reasoning must not trip proxies' idle timeouts, WIRE-NOTES #19), and client disconnects reaching the source's
 * `return()`, which is where the relay settles the bill.
 * @module
 */
import { SSE_HEADERS, SSE_KEEPALIVE } from '../core/sse'

export const KEEPALIVE_MS = 15_000

type Open = { lastSent: number; keepaliveMs: number; ping(): void }

/**
 * One timer for every open stream rather than one per stream (most streams end long before their first keepalive,
 * and a timer per stream is a cost on each of them). It ticks at a third of the shortest keepalive in use, and stops
 * at a tick that finds no stream open (not when the last one closes: streams one after another would otherwise
 * create and clear it each time).
 */
const open = new Set<Open>()
let ticker: ReturnType<typeof setInterval> | undefined
let tickMs = 0

/** Streams open now (the idle collector waits for none: lib/idle-gc.ts). */
export const openStreams = () => open.size

function watch(s: Open) {
	open.add(s)
	const want = Math.max(50, Math.floor(s.keepaliveMs / 3))
	if (ticker && want >= tickMs) return
	if (ticker) clearInterval(ticker)
	tickMs = want
	ticker = setInterval(() => {
		if (open.size === 0) {
			clearInterval(ticker)
			ticker = undefined
			return
		}
		const now = Date.now()
		for (const o of open) if (now - o.lastSent >= o.keepaliveMs) o.ping()
	}, tickMs)
	;(ticker as { unref?: () => void }).unref?.()
}

function unwatch(s: Open) {
	open.delete(s)
}

/** The streams that end with their protocol's error event when the shutdown cuts them (`sseResponse`'s `shutdownEvent`). */
const cuttable = new Set<DirectSse>()

/**
 * Ends every such stream with its error event, as its client leaving ends it otherwise (its `onCancel`, then its
 * source's `return()`, where it is billed: recorded `shutdown` once `Ledger.cutForShutdown` ran). One promise per
 * stream, resolved once its source has ended. The relays' own streams are cut by `cutStreams` (stream-relay.ts); the
 * ends of the streams passing one on to its client (`passedOn`) are among the promises too.
 */
export const cutOpenStreams = (): Promise<void>[] => [...[...cuttable].map((s) => s.cut()), ...passing]

/** The ends of the streams `passedOn` is passing on now, each resolved once its client has read it to the end. */
const passing = new Set<Promise<void>>()

/**
 * `body` passed on to the client chunk by chunk, each once `hold` has resolved (when it returns a promise), as a stream
 * whose end the shutdown waits for (`cutOpenStreams`). What a route that holds back a relayed stream's chunks (a
 * converted answer's copy: responses/kept-first.ts; a conversation's turn) answers with: the shutdown ends the relay,
 * whose error event then still has to pass through this stream, and closing the connections as soon as the relay
 * ended reset the client before it came (QA: `/v1/responses` streams got ECONNRESET where chat got `shutting_down`).
 */
export function passedOn(body: ReadableStream<Uint8Array>, hold?: () => Promise<unknown> | undefined): ReadableStream<Uint8Array> {
	const reader = body.getReader()
	const { promise: ended, resolve } = Promise.withResolvers<void>()
	const over = () => {
		passing.delete(ended)
		resolve()
	}
	return new ReadableStream<Uint8Array>(
		{
			async pull(ctl) {
				// Once its client reads, as a direct stream is cut only once pulled: a response never sent is not waited for.
				passing.add(ended)
				try {
					const r = await reader.read()
					if (r.done) {
						ctl.close()
						return over()
					}
					const held = hold?.()
					if (held) await held
					ctl.enqueue(r.value)
				} catch (e) {
					ctl.error(e)
					over()
				}
			},
			cancel(reason) {
				over()
				return reader.cancel(reason)
			},
		},
		// Read from `body` only as the client reads (a queue here would hold chunks the shutdown does not wait for).
		{ highWaterMark: 0 },
	)
}

/**
 * What the response reads: an async generator (or an iterator with the same `next` and `return`), or a source that
 * writes itself (`PumpSource`). Chunks may be text: the response encodes it natively.
 */
export type ByteSource = Pick<AsyncGenerator<Uint8Array | string, unknown, undefined>, 'next' | 'return'> | PumpSource

/** `return()` runs when the client goes away, as for an iterator. */
export type PumpSource = { pump: Pump; return(value?: undefined): Promise<unknown> }

/**
 * Where a pumping source writes: each write goes out at once (flushed), or returns a promise while the client reads
 * slower than the source produces (await it: backpressure). `closed` once the client is gone. `end` writes the last
 * chunk and ends the response, both in one socket write.
 */
export type Sink = { write(chunk: Uint8Array | string): number | Promise<number>; end(last: Uint8Array | string): void; readonly closed: boolean }

/**
 * A source that writes its chunks itself instead of being read (the relays, src/relay/stream-relay.ts): one loop per
 * stream between the upstream's reads and the client's writes, where reading it through `next()` put an iterator and
 * its promises between them at every chunk. It writes the first chunk before anything it awaits when it has it at
 * hand (see `sseResponse`), and returns once the stream is over; `return()` still runs when the client goes away.
 */
export type Pump = (sink: Sink) => Promise<void>

/** One event-loop turn, shared by every response started in the same turn (see `sseResponse`). */
let turn: Promise<void> | undefined
const nextTurn = () =>
	(turn ??= new Promise<void>((resolve) =>
		setImmediate(() => {
			turn = undefined
			resolve()
		}),
	))

/**
 * A direct stream (Bun's `type: 'direct'`): chunks are written straight into the response with no queue between
 * (~3 µs less per stream than a pull stream's enqueue/read in a micro-benchmark; within noise in the gateway). `pull` runs
 * once and writes until the source ends; a write returns a promise when the client reads slower than we produce
 * (backpressure: await it) and 0 once the client is gone, when `cancel` has already run.
 *
 * The first chunk is asked for before the response starts, and written by `pull` before it awaits anything when it
 * was ready within the turn (no network wait: a relay's first chunk is usually what its prefetch window already
 * read): Bun then sends the status line, headers and that chunk in one write. A `pull` that awaits first makes it
 * send the headers alone, one more syscall and TCP segment per stream. A first chunk that needs the network does not
 * hold the headers back: the response starts after one turn, as before.
 */
export async function sseResponse(gen: ByteSource, onCancel: () => void, headers: Record<string, string>, keepaliveMs = KEEPALIVE_MS, shutdownEvent?: string): Promise<Response> {
	if ('pump' in gen) return pumpResponse(gen, onCancel, headers, keepaliveMs)
	const first = gen.next()
	let head: Step | undefined
	try {
		// nextTurn resolves to undefined, a source's step is an object.
		head = (await Promise.race([first, nextTurn()])) ?? undefined
	} catch {
		// `pull` meets the error again when it awaits `first`
	}
	return directResponse(new DirectSse(gen, onCancel, keepaliveMs, first, head, shutdownEvent), headers)
}

/**
 * A pumping source's response, made at once (no await: the relays start one per stream): the source writes its first
 * chunk itself, before it awaits anything.
 */
export function pumpResponse(source: PumpSource, onCancel: () => void, headers: Record<string, string>, keepaliveMs = KEEPALIVE_MS): Response {
	return directResponse(new DirectSse(source, onCancel, keepaliveMs, undefined, undefined), headers)
}

function directResponse(source: DirectSse, headers: Record<string, string>): Response {
	// The DOM library's ReadableStream constructor (also in scope) hides bun-types' overload for direct sources.
	return new Response(new ReadableStream(source as unknown as UnderlyingDefaultSource), { status: 200, headers: { ...SSE_HEADERS, ...headers } })
}

type Step = IteratorResult<Uint8Array | string, unknown>

/**
 * The direct stream's source, and its entry in the keepalive watch. A class: one is made per stream, and its state as
 * fields costs one object where closures cost a function and a scope each.
 */
class DirectSse implements Open, Sink {
	readonly type = 'direct'
	lastSent = Date.now()
	private isClosed = false
	private controller: ReadableStreamDirectController | undefined = undefined

	constructor(
		private readonly gen: ByteSource,
		private readonly onCancel: () => void,
		readonly keepaliveMs: number,
		/** The first step, asked for before the response started; `head` is its result when it was ready by then. */
		private first: Promise<Step> | undefined,
		private head: Step | undefined,
		/** What the stream ends with when the shutdown cuts it (its protocol's error event), if it may be cut so. */
		private readonly shutdownEvent?: string,
	) {}

	/** The shutdown's grace period is over: the stream ends with its error event, and its source as if the client left. */
	async cut(): Promise<void> {
		if (this.isClosed || !this.controller || this.shutdownEvent === undefined) return
		this.end(this.shutdownEvent)
		this.onCancel()
		await this.gen.return(undefined)
	}

	ping() {
		if (this.isClosed || !this.controller) return
		this.controller.write(SSE_KEEPALIVE)
		this.controller.flush()
		this.lastSent = Date.now()
	}

	private stop() {
		if (this.isClosed) return
		this.isClosed = true
		unwatch(this)
		cuttable.delete(this)
	}

	get closed() {
		return this.isClosed
	}

	write(chunk: Uint8Array | string): number | Promise<number> {
		if (this.isClosed) return 0
		this.lastSent = Date.now()
		const c = this.controller!
		const written = c.write(chunk)
		if (typeof written === 'number') c.flush()
		return written
	}

	/**
	 * The last chunk goes out with the end of the body (HTTP/1.1's terminating empty chunk): written unflushed, then
	 * closed, so Bun sends both in one write. Flushed on its own, then closed a turn later, each stream's end cost a
	 * second `sendto` (a loopback one runs the receiver's side too): ~11 µs of the stream's last chunk at one
	 * connection (bench/README).
	 */
	end(last: Uint8Array | string) {
		if (this.isClosed) return
		const c = this.controller!
		if (last.length) c.write(last)
		this.stop()
		c.close()
	}

	async pull(c: ReadableStreamDirectController) {
		this.controller = c
		watch(this)
		if (this.shutdownEvent !== undefined) cuttable.add(this)
		const gen = this.gen
		if ('pump' in gen) {
			try {
				await gen.pump(this)
				if (this.isClosed) return
				this.stop()
				c.close()
			} catch (e) {
				this.stop()
				c.close(e as Error)
			}
			return
		}
		// The first chunk, when ready, is written without an await before it (see sseResponse).
		let pending = this.head ? undefined : this.first
		// Also when it became ready after the response started (before the client began to read).
		let ready = this.head ?? (pending && Bun.peek.status(pending) === 'fulfilled' ? (Bun.peek(pending) as Step) : undefined)
		if (ready) pending = undefined
		this.head = this.first = undefined
		try {
			while (true) {
				const { value, done } = ready ?? (await (pending ?? gen.next()))
				ready = pending = undefined
				if (this.isClosed) return
				if (done) break
				const written = this.write(value as string | Uint8Array)
				if (typeof written !== 'number') await written
			}
			this.stop()
			c.close()
		} catch (e) {
			this.stop()
			c.close(e as Error)
		}
	}

	cancel() {
		if (this.isClosed) return
		this.stop()
		this.onCancel()
		void this.gen.return(undefined)
	}
}
