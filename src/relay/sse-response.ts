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

/**
 * What the response reads: an async generator, or a hand-written iterator with the same `next` and `return` and,
 * optionally, `over()`: true once the chunk just returned was the last, so the stream closes with it (one write and
 * the end together) instead of on a further read. Chunks may be text: the response encodes it natively.
 */
export type ByteSource = Pick<AsyncGenerator<Uint8Array | string, unknown, undefined>, 'next' | 'return'> & { over?(): boolean }

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
export async function sseResponse(gen: ByteSource, onCancel: () => void, headers: Record<string, string>, keepaliveMs = KEEPALIVE_MS): Promise<Response> {
	type Step = IteratorResult<Uint8Array | string, unknown>
	const first = gen.next()
	let head: Step | undefined
	await Promise.race([first.then((r) => (head = r)), nextTurn()]).catch(() => {})
	let closed = false
	let controller: ReadableStreamDirectController | undefined
	const self: Open = {
		lastSent: Date.now(),
		keepaliveMs,
		ping() {
			if (closed || !controller) return
			controller.write(SSE_KEEPALIVE)
			controller.flush()
			self.lastSent = Date.now()
		},
	}
	const stop = () => {
		if (closed) return
		closed = true
		unwatch(self)
	}
	const source: Bun.DirectUnderlyingSource = {
		type: 'direct',
		async pull(c) {
			controller = c
			watch(self)
			// The first chunk, when ready, is written without an await before it (see above).
			let ready = head
			let pending: Promise<Step> | undefined = head ? undefined : first
			try {
				while (true) {
					const { value, done } = ready ?? (await (pending ?? gen.next()))
					ready = pending = undefined
					if (closed) return
					if (done) break
					self.lastSent = Date.now()
					const written = c.write(value)
					if (gen.over?.()) break
					if (typeof written !== 'number') await written
					else c.flush()
				}
				stop()
				c.close()
			} catch (e) {
				stop()
				c.close(e as Error)
			}
		},
		cancel() {
			if (closed) return
			stop()
			onCancel()
			void gen.return(undefined)
		},
	}
	// The DOM library's ReadableStream constructor (also in scope) hides bun-types' overload for direct sources.
	return new Response(new ReadableStream(source as unknown as UnderlyingDefaultSource), { status: 200, headers: { ...SSE_HEADERS, ...headers } })
}
