/**
 * Upstream HTTP/1.1 calls over connections of our own (`Bun.connect`, TLS for https), kept alive and reused per
 * origin. Why not `fetch`: Bun's fetch hands every call to its HTTP client thread and back, and its response body is a
 * stream read through promises; for a relay that reads what it forwards that made up most of what reading a stream
 * costs over a bare proxy (bench/README, fourteenth VM: 110 → 78 µs per streamed request at 64 connections in
 * bench/socket-proxy.ts, the bare proxy 85). Here the bytes come in the socket's `data` callback on the main thread.
 *
 * What it does as a vendor's client must: certificates verified (the system's CAs, `NODE_EXTRA_CA_CERTS`), nothing
 * written before the TLS handshake, `accept-encoding: identity` asked (a compressed answer is still decoded), bodies
 * framed by length, chunks or the connection's close (response-parser.ts), a request written in full however slowly
 * the socket takes it, an idle limit between bytes, aborts, and one retry on a fresh connection when a reused one turns
 * out to have been closed by the server before any answer (what HTTP clients do for a keep-alive race: the server had
 * not read the request). Connections idle longer than IDLE_SECONDS are closed.
 * What it leaves to `fetch` (src/relay/upstream-fetch.ts decides): streamed request bodies, and proxies.
 * @module
 */
import { HttpParseError, type ResponseEvents, type ResponseHead, ResponseParser } from './response-parser'

export type Http1Init = {
	method: string
	headers: Record<string, string> | Headers
	body?: string
	signal: AbortSignal
	/** Longest silence while waiting for the answer's bytes before the call fails (fetch's `timeout`). */
	idleMs: number
}

/** Tests: certificates to trust besides the system's. */
export type Http1Options = { ca?: string }

/** How long a connection may wait unused for the next request before it is closed. */
const IDLE_SECONDS = 15

type ConnData = { conn: Conn }
type Sock = Bun.Socket<ConnData>

/** Idle connections by origin, most recently used last. */
const pools = new Map<string, Conn[]>()

const encoder = new TextEncoder()

/** A connection the server closed or reset before sending anything back, on a connection used before. */
class StaleConnection extends Error {}

/** The call's idle limit passed without a byte from the server. */
export class IdleTimeout extends Error {
	override name = 'TimeoutError'
}

class Conn {
	socket: Sock | undefined = undefined
	exchange: Exchange | undefined = undefined
	/** Requests this connection carried. */
	uses = 0
	closed = false
	/** TLS: writes wait for the handshake (Bun drops what is written before it). */
	private ready: PromiseWithResolvers<void> | undefined

	constructor(
		readonly origin: string,
		tls: boolean,
	) {
		if (tls) {
			this.ready = Promise.withResolvers<void>()
			// Awaited by `connection`, unless Bun.connect itself failed first (then nothing waits for it).
			this.ready.promise.catch(() => {})
		}
	}

	whenReady(): Promise<void> | undefined {
		return this.ready?.promise
	}

	handshake(ok: boolean, error: Error | null) {
		const r = this.ready
		this.ready = undefined
		if (ok) r?.resolve()
		else r?.reject(error ?? new Error('TLS handshake failed'))
	}

	/** Back to its origin's pool when its response ended and it may carry another; closed otherwise. */
	done(reusable: boolean) {
		this.exchange = undefined
		if (!reusable || this.closed || !this.socket) return this.destroy()
		// Bun checks socket timeouts every few seconds: fine for closing an idle connection, too coarse for a call.
		this.socket.timeout(IDLE_SECONDS)
		let pool = pools.get(this.origin)
		if (!pool) pools.set(this.origin, (pool = []))
		pool.push(this)
	}

	destroy() {
		this.closed = true
		this.unpool()
		this.socket?.terminate()
	}

	unpool() {
		const pool = pools.get(this.origin)
		const at = pool ? pool.indexOf(this) : -1
		if (at >= 0) pool!.splice(at, 1)
	}
}

const handlers: Bun.SocketHandler<ConnData> = {
	data(s, bytes) {
		s.data.conn.exchange?.onData(bytes)
	},
	drain(s) {
		s.data.conn.exchange?.onDrain()
	},
	handshake(s, ok, error) {
		s.data.conn.handshake(ok, error)
	},
	timeout(s) {
		// Only idle pooled connections have a socket timeout (a call's own limit is watched by `idleClock`).
		if (!s.data.conn.exchange) s.data.conn.destroy()
	},
	end(s) {
		s.data.conn.exchange?.onClose(undefined)
		s.data.conn.destroy()
	},
	close(s, error) {
		const conn = s.data.conn
		conn.closed = true
		conn.unpool()
		conn.handshake(false, error ?? new Error('connection closed during the TLS handshake'))
		conn.exchange?.onClose(error)
	},
	error(s, error) {
		s.data.conn.exchange?.onClose(error)
		s.data.conn.destroy()
	},
	connectError(s, error) {
		s.data.conn.handshake(false, error)
	},
}

/**
 * One request and its response on one connection. The response is handed over once its head and whatever bytes came
 * with it were read: a body that came whole with the head becomes the Response's own bytes (read natively by
 * `text()`), a longer one a stream fed from the socket.
 */
class Exchange implements ResponseEvents {
	readonly parser: ResponseParser
	readonly response = Promise.withResolvers<Response>()
	private got: ResponseHead | undefined
	private held: Uint8Array[] = []
	private controller: ReadableStreamDefaultController<Uint8Array> | undefined
	private handedOver = false
	private finished = false
	private received = 0
	/** When the server last sent something (performance.now()), for the idle limit. */
	lastByte = performance.now()
	/** Bytes of the request the socket did not take yet. */
	private unwritten: Uint8Array | undefined

	constructor(
		private readonly conn: Conn,
		private readonly signal: AbortSignal,
		method: string,
		readonly idleMs: number,
	) {
		this.parser = new ResponseParser(this, method === 'HEAD')
		signal.addEventListener('abort', this.onAbort, { once: true })
		watchIdle(this)
	}

	/** Writes the request; what the socket does not take now goes on `drain`. */
	write(text: string) {
		const n = this.conn.socket!.write(text)
		if (n < Buffer.byteLength(text)) this.unwritten = encoder.encode(text).subarray(Math.max(0, n))
	}

	onDrain() {
		const rest = this.unwritten
		if (!rest) return
		const n = this.conn.socket!.write(rest)
		this.unwritten = n >= rest.length ? undefined : rest.subarray(Math.max(0, n))
	}

	onData(bytes: Uint8Array) {
		if (this.finished) return
		this.received += bytes.length
		this.lastByte = performance.now()
		try {
			this.parser.push(bytes)
		} catch (e) {
			return this.fail(e as Error)
		}
		if (this.got && !this.handedOver) this.handOver()
		if (this.parser.done) this.complete()
	}

	head(h: ResponseHead) {
		this.got = h
	}

	body(bytes: Uint8Array) {
		// The socket's buffer is reused once the callback returns: what is kept is copied.
		if (this.controller) this.controller.enqueue(bytes.slice())
		else this.held.push(bytes.slice())
	}

	end() {}

	private handOver() {
		try {
			this.respond()
		} catch (e) {
			this.fail(e as Error)
		}
	}

	private respond() {
		this.handedOver = true
		const h = this.got!
		if (h.status < 200 || h.status > 599) throw new HttpParseError(`unexpected status ${h.status}`)
		const headers = new Headers(h.headers)
		const encoding = headers.get('content-encoding')?.toLowerCase()
		const nullBody = this.parser.done && this.held.length === 0 && (h.status === 204 || h.status === 205 || h.status === 304)
		let body: BodyInit | null = null
		if (!nullBody) {
			if (this.parser.done) body = (this.held.length === 1 ? this.held[0]! : joined(this.held)) as Uint8Array<ArrayBuffer>
			else
				body = new ReadableStream<Uint8Array>({
					start: (c) => {
						this.controller = c
						for (const b of this.held) c.enqueue(b)
					},
					cancel: () => this.cancel(),
				})
			this.held = []
			if (encoding && encoding !== 'identity') {
				const format = DECODERS[encoding]
				if (!format) throw new HttpParseError(`unsupported content-encoding ${encoding}`)
				const source = body instanceof ReadableStream ? body : new Blob([body as Uint8Array<ArrayBuffer>]).stream()
				body = source.pipeThrough(new DecompressionStream(format as CompressionFormat))
				headers.delete('content-encoding')
				headers.delete('content-length')
			}
		}
		this.response.resolve(new Response(body, { status: h.status, statusText: h.statusText, headers }))
	}

	/** The response ended: the connection goes back to the pool (or closes), the body's stream ends. */
	private complete() {
		if (this.finished) return
		this.finished = true
		this.signal.removeEventListener('abort', this.onAbort)
		watched.delete(this)
		this.controller?.close()
		this.conn.done(this.parser.reusable && !this.unwritten)
	}

	/** The connection ended or failed. */
	onClose(error: Error | undefined) {
		if (this.finished) return
		if (this.parser.started) {
			try {
				this.parser.eof()
			} catch (e) {
				return this.fail(error ?? (e as Error))
			}
			if (this.got && !this.handedOver) this.handOver()
			return this.complete()
		}
		if (this.received === 0 && this.conn.uses > 1) return this.fail(new StaleConnection('connection closed by the server before an answer'))
		this.fail(error ?? new Error('connection closed before a response'))
	}

	private readonly onAbort = () => this.fail(this.signal.reason ?? new DOMException('aborted', 'AbortError'))

	/** The body's reader gave up on it: the connection cannot carry another request. */
	private cancel() {
		if (this.finished) return
		this.finished = true
		this.signal.removeEventListener('abort', this.onAbort)
		watched.delete(this)
		this.conn.destroy()
	}

	fail(error: Error) {
		if (this.finished) return
		this.finished = true
		this.signal.removeEventListener('abort', this.onAbort)
		watched.delete(this)
		this.handedOver = true
		// Rejecting a promise already resolved does nothing: a response handed over learns of it through its body.
		this.response.reject(error)
		this.controller?.error(error)
		this.conn.destroy()
	}
}

/**
 * The calls' idle limits: one clock for every call in flight rather than a timer per call re-armed at every chunk.
 * It ticks every IDLE_TICK_MS while calls are watched (a limit is kept to within a tick) and stops at a tick that
 * finds none.
 */
const IDLE_TICK_MS = 250
const watched = new Set<Exchange>()
let idleClock: ReturnType<typeof setInterval> | undefined

function watchIdle(ex: Exchange) {
	watched.add(ex)
	if (idleClock) return
	idleClock = setInterval(() => {
		if (watched.size === 0) {
			clearInterval(idleClock)
			idleClock = undefined
			return
		}
		const now = performance.now()
		for (const e of watched) if (now - e.lastByte > e.idleMs) e.fail(new IdleTimeout(`upstream sent nothing for ${e.idleMs} ms`))
	}, IDLE_TICK_MS)
	;(idleClock as { unref?: () => void }).unref?.()
}

/** Content codings a server may send although identity was asked for, as DecompressionStream names them. */
const DECODERS: Record<string, string> = { gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'brotli', zstd: 'zstd' }

function joined(parts: Uint8Array[]): Uint8Array {
	let n = 0
	for (const p of parts) n += p.length
	const out = new Uint8Array(n)
	n = 0
	for (const p of parts) {
		out.set(p, n)
		n += p.length
	}
	return out
}

/** A pooled connection to `origin`, or a new one. */
async function connection(url: URL, origin: string, fresh: boolean, opts: Http1Options): Promise<Conn> {
	if (!fresh) {
		const pool = pools.get(origin)
		for (let conn = pool?.pop(); conn; conn = pool?.pop()) if (!conn.closed) return conn
	}
	const tls = url.protocol === 'https:'
	const conn = new Conn(origin, tls)
	const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
	const port = url.port ? Number(url.port) : tls ? 443 : 80
	const rejectUnauthorized = process.env.NODE_TLS_REJECT_UNAUTHORIZED !== '0'
	conn.socket = (await Bun.connect<ConnData>({
		hostname,
		port,
		socket: handlers,
		data: { conn },
		tls: tls ? { serverName: hostname, rejectUnauthorized, ...(opts.ca ? { ca: opts.ca } : {}) } : undefined,
	})) as Sock
	await conn.whenReady()
	return conn
}

/** Header names are tokens, values carry no line breaks: what a request line could be split with. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const BAD_VALUE = /[\r\n\0]/
/** Headers the client writes itself. */
const OWN = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive'])

function requestHead(url: URL, init: Http1Init, bodyBytes: number): string {
	let head = `${init.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`
	let encoding = false
	const add = (value: string, name: string) => {
		if (!TOKEN.test(name) || BAD_VALUE.test(value)) throw new TypeError(`invalid header ${JSON.stringify(name)}`)
		const lower = name.toLowerCase()
		if (OWN.has(lower)) return
		if (lower === 'accept-encoding') encoding = true
		head += `${name}: ${value}\r\n`
	}
	const h = init.headers
	if (h instanceof Headers) h.forEach(add)
	else for (const name in h) add(String(h[name]), name)
	if (!encoding) head += 'accept-encoding: identity\r\n'
	if (init.body !== undefined || init.method === 'POST' || init.method === 'PUT' || init.method === 'PATCH') head += `content-length: ${bodyBytes}\r\n`
	return `${head}\r\n`
}

/**
 * Sends one request; resolves with the response once its head arrived (its body may still be coming). Rejects as
 * `fetch` does: on an unreachable host, a refused certificate, a malformed answer, the idle limit, or the signal.
 */
export async function http1Request(url: URL, init: Http1Init, opts: Http1Options = {}): Promise<Response> {
	const body = init.body ?? ''
	const head = requestHead(url, init, Buffer.byteLength(body))
	// Connections trusted with other certificates are not shared (tests).
	const origin = opts.ca ? `${url.protocol}//${url.host} ${opts.ca}` : `${url.protocol}//${url.host}`
	for (let attempt = 0; ; attempt++) {
		init.signal.throwIfAborted()
		const conn = await connection(url, origin, attempt > 0, opts)
		if (init.signal.aborted) {
			conn.done(true)
			init.signal.throwIfAborted()
		}
		conn.uses++
		const ex = new Exchange(conn, init.signal, init.method, init.idleMs)
		conn.exchange = ex
		conn.socket!.timeout(0)
		ex.write(head + body)
		try {
			return await ex.response.promise
		} catch (e) {
			if (e instanceof StaleConnection && attempt === 0) continue
			throw e
		}
	}
}

/** Connections idle in the pools (tests). */
export const idleConnections = (): number => {
	let n = 0
	for (const pool of pools.values()) n += pool.length
	return n
}
