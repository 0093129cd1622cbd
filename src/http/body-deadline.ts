/**
 * A total deadline on reading a request's body (BODY_READ_TIMEOUT_MS). Bun's `idleTimeout` starts again at every byte,
 * so a client sending its body a byte every few seconds held a connection, and the request, as long as it liked. Every
 * body is read under this deadline, before anything is reserved: by the hot routes (hot-route.ts) as they read it, and
 * on the Elysia routes by whatever reads it (request-guard.ts: its own reads of a clone, and the request's own `text`,
 * `json`, `formData`… that Elysia's parsers and the handlers call). Past it the caller gets 408 in its protocol's
 * shape and the connection is closed (the rest of the body is never read).
 *
 * How it costs nothing measurable per request: a sized body is read natively (`request.text()`), with no per-chunk
 * callback to check a clock in, and reading it as a stream instead would cost more than the native read; a timer per
 * request would be a timer armed and cleared per request. Instead each read joins one queue, and one interval per
 * process, running only while a read waits, fails the reads past their deadline; a sweep looks at every read waiting
 * (a few: the bodies on their way in). What a read pays is a Set add and delete and one promise (~0.3 µs).
 *
 * A large body gets longer, by the time its declared length past 1 MiB takes at MIN_BODY_RATE: a 24 MB turn of screenshots from
 * a slow uplink is not cut at the deadline a small body has, while a client trickling bytes is still cut.
 * @module
 */
import { GatewayError } from '../core/errors'
import { errorResponse, shapeForRequest } from './error-shapes'

/** A body that did not arrive in full within the deadline (thrown by `within`). */
export class BodyReadTimeout extends Error {
	constructor(readonly timeoutMs: number) {
		super(`the request body did not arrive within ${timeoutMs} ms`)
	}
}

export type BodyDeadline = {
	/**
	 * `read` (a body being read), failed with BodyReadTimeout once the deadline passes before it settles (longer for a
	 * large `request`: MIN_BODY_RATE); the request is then marked (`bodyTimeoutOf`), for the hooks that answer where a
	 * parser caught the failure and went on.
	 */
	within<T>(read: Promise<T>, request?: Request): Promise<T>
	/** Reads waiting now (tests). */
	readonly waiting: number
	stop(): void
}

type Entry = { due: number; allowedMs: number; fail: (e: Error) => void; request?: Request }

/** The slowest upload a large body is allowed, bytes a second (1 Mbit/s): its deadline grows by its length at this rate. */
export const MIN_BODY_RATE = 128 * 1024

/** What the deadline itself covers of a body's length: the requests of every day. */
const COVERED_BYTES = 1024 * 1024

/** The time a request's body may take: the deadline, and what its declared length has past COVERED_BYTES at MIN_BODY_RATE. */
const allowedFor = (timeoutMs: number, request: Request | undefined) => {
	const length = Number(request?.headers.get('content-length'))
	return length > COVERED_BYTES ? timeoutMs + Math.ceil(((length - COVERED_BYTES) / MIN_BODY_RATE) * 1000) : timeoutMs
}

const timedOut = new WeakMap<Request, BodyReadTimeout>()

/** Whether a read of this request's body ran past the deadline (and how long the deadline was). */
export const bodyTimeoutOf = (request: Request): BodyReadTimeout | undefined => timedOut.get(request)

/**
 * @example const reads = createBodyDeadline(60_000)
 * const text = await reads.within(request.text()) // or BodyReadTimeout after 60 s
 */
export function createBodyDeadline(timeoutMs: number): BodyDeadline {
	const queue = new Set<Entry>()
	// The deadline is kept to within a tenth of it (at most a second late, at 60 s).
	const step = Math.max(10, Math.min(1_000, Math.floor(timeoutMs / 10)))
	let sweeper: ReturnType<typeof setInterval> | undefined
	const sweep = () => {
		const now = Date.now()
		for (const e of queue) {
			if (e.due > now) continue
			queue.delete(e)
			const late = new BodyReadTimeout(e.allowedMs)
			if (e.request) timedOut.set(e.request, late)
			e.fail(late)
		}
		if (queue.size === 0) {
			clearInterval(sweeper)
			sweeper = undefined
		}
	}
	return {
		within<T>(read: Promise<T>, request?: Request): Promise<T> {
			return new Promise<T>((resolve, reject) => {
				const allowedMs = allowedFor(timeoutMs, request)
				const entry: Entry = { due: Date.now() + allowedMs, allowedMs, fail: reject, request }
				queue.add(entry)
				if (!sweeper) {
					sweeper = setInterval(sweep, step)
					sweeper.unref?.()
				}
				read.then(
					(v) => {
						queue.delete(entry)
						resolve(v)
					},
					(e) => {
						queue.delete(entry)
						reject(e)
					},
				)
			})
		},
		get waiting() {
			return queue.size
		},
		stop() {
			clearInterval(sweeper)
			sweeper = undefined
			queue.clear()
		},
	}
}

/** What a request's body is read with: the methods Elysia's parsers (`text`, `json`, `formData`, `arrayBuffer`) and handlers call. */
const READS = ['text', 'json', 'formData', 'arrayBuffer', 'bytes', 'blob'] as const

const deadlines = new WeakMap<Request, BodyDeadline>()

/** `read`, a read of the request's body by other means than its methods (its stream), under the deadline `readsUnderDeadline` put it under, if any. */
export const withinDeadline = <T>(request: Request, read: Promise<T>): Promise<T> => deadlines.get(request)?.within(read, request) ?? read

/**
 * Puts the request's own body reads under the deadline. Elysia reads a body inside its compiled handler by calling
 * these methods, and some handlers call them themselves (`parse: 'none'` passthroughs), so the request's own methods are
 * the one place every such read goes through; reading the body ahead from a clone instead would cost a copy of every
 * body (~15 µs for a small one). About 1 µs per request with a body, on the Elysia routes only.
 */
export function readsUnderDeadline(request: Request, reads: BodyDeadline): void {
	deadlines.set(request, reads)
	for (const name of READS) {
		const read = Request.prototype[name] as (this: Request) => Promise<unknown>
		Object.defineProperty(request, name, { configurable: true, value: () => reads.within(read.call(request), request) })
	}
}

/**
 * The 408 for a body that took too long, in the caller's shape, closing the connection: the client is still sending
 * the body, and the next bytes on the socket would be read as a request of their own.
 */
export function bodyTimedOut(request: Request, e: BodyReadTimeout, requestId: string): Response {
	const err = new GatewayError('timeout', `Request body not received within ${e.timeoutMs} ms (BODY_READ_TIMEOUT_MS, longer for a large body); send the whole body promptly`, {
		status: 408,
		code: 'request_timeout',
	})
	const res = errorResponse(err, shapeForRequest(request, new URL(request.url).pathname), requestId)
	res.headers.set('connection', 'close')
	return res
}
