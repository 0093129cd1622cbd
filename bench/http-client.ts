/**
 * A minimal keep-alive HTTP/1.1 client on raw TCP sockets, for the load generator. `fetch` costs more CPU per
 * request and caps simultaneous connections (BUN_CONFIG_MAX_HTTP_REQUESTS), and we need the time of the first body
 * byte, so we parse responses ourselves: status line, `content-length` or `transfer-encoding: chunked`
 * (RFC 9112 §6-7). Only what our targets send is supported; anything else fails the request loudly.
 * @module
 */
import type { Socket } from 'bun'

/** The end of one request. `error` is set when the exchange failed before a full response arrived. */
export type Exchange = { status: number; body: string; ttfbMs: number; totalMs: number; error?: string }

type Waiter = { resolve(x: Exchange): void; startedAt: number }

/** One connection; sends one request at a time (no pipelining). */
export type Conn = {
	/** Writes the request and resolves with the full response; latencies are measured from `startedAt`. */
	send(request: Uint8Array, startedAt: number): Promise<Exchange>
	close(reason: string): void
	readonly alive: boolean
	/** performance.now() of the request in flight, or 0 when idle. */
	readonly busySince: number
}

const CR = 13
const LF = 10

/** Prepares the bytes of a POST request once, so sending costs one socket write. */
export function encodeRequest(port: number, path: string, headers: Record<string, string>, body: string): Uint8Array {
	const payload = Buffer.from(body)
	let head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-length: ${payload.length}\r\n`
	for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`
	return Buffer.concat([Buffer.from(`${head}\r\n`), payload])
}

/** Opens a connection to 127.0.0.1:`port`. */
export async function openConn(port: number): Promise<Conn> {
	let waiter: Waiter | undefined
	let alive = true
	let unsent: Uint8Array | undefined
	// Response parsing state; reset for every response.
	let head = ''
	let status = 0
	let phase: 'head' | 'length' | 'size' | 'data' | 'data-end' | 'trailer' = 'head'
	let remaining = 0
	let sizeLine = ''
	let keepAlive = true
	let ttfb = 0
	let parts: string[] = []

	const finish = (error?: string) => {
		const w = waiter
		if (!w) return
		waiter = undefined
		const now = performance.now()
		w.resolve({ status, body: parts.join(''), ttfbMs: (ttfb || now) - w.startedAt, totalMs: now - w.startedAt, error })
		parts = []
		if (error || !keepAlive) close(error ?? 'connection: close')
	}
	// Returns the body phase the headers announce, or an error message.
	const parseHead = (): 'length' | 'size' | { error: string } => {
		const lines = head.split('\r\n')
		status = Number(lines[0].split(' ')[1])
		let length: number | undefined
		let chunked = false
		keepAlive = true
		for (let i = 1; i < lines.length; i++) {
			const c = lines[i].indexOf(':')
			const name = lines[i].slice(0, c).trim().toLowerCase()
			const value = lines[i].slice(c + 1).trim().toLowerCase()
			if (name === 'content-length') length = Number(value)
			else if (name === 'transfer-encoding') chunked = value.includes('chunked')
			else if (name === 'connection') keepAlive = value !== 'close'
		}
		if (chunked) return 'size'
		if (length === undefined) return { error: 'response without content-length or chunked encoding' }
		remaining = length
		return 'length'
	}
	// Feeds received bytes through the state machine; a response may end mid-buffer only at its last byte.
	const feed = (buf: Buffer) => {
		let i = 0
		while (i < buf.length && waiter) {
			if (phase === 'head') {
				const text = buf.toString('latin1', i)
				const at = (head + text).indexOf('\r\n\r\n')
				if (at < 0) {
					head += text
					return
				}
				const used = at + 4 - head.length
				head = (head + text).slice(0, at)
				i += used
				const next = parseHead()
				if (typeof next === 'object') return finish(next.error)
				phase = next
				if (next === 'length' && remaining === 0) return finish()
				continue
			}
			if (!ttfb) ttfb = performance.now()
			if (phase === 'length' || phase === 'data') {
				const n = Math.min(remaining, buf.length - i)
				parts.push(buf.toString('utf8', i, i + n))
				i += n
				remaining -= n
				if (remaining > 0) return
				if (phase === 'length') return finish()
				phase = 'data-end'
				continue
			}
			const b = buf[i++]
			if (phase === 'data-end') {
				if (b === LF) phase = 'size'
			} else if (phase === 'size') {
				if (b === LF) {
					remaining = Number.parseInt(sizeLine, 16)
					sizeLine = ''
					if (Number.isNaN(remaining)) return finish('bad chunk size')
					phase = remaining === 0 ? 'trailer' : 'data'
				} else if (b !== CR) sizeLine += String.fromCharCode(b)
			} else if (phase === 'trailer') {
				// After the last chunk: optional trailer lines, then an empty line. We send none, so expect CRLF.
				if (b === LF) return finish()
			}
		}
	}

	let socket: Socket<undefined> | undefined
	const close = (reason: string) => {
		if (!alive) return
		alive = false
		finish(reason)
		socket?.end()
	}
	socket = await Bun.connect({
		hostname: '127.0.0.1',
		port,
		socket: {
			data: (_s, buf) => feed(buf),
			drain: (s) => {
				if (!unsent) return
				const n = s.write(unsent)
				unsent = n < unsent.length ? unsent.subarray(n) : undefined
			},
			close: () => close('connection closed by the server'),
			error: (_s, e) => close(`socket error: ${e.message}`),
		},
	})
	socket.setNoDelay(true)

	return {
		send(request, startedAt) {
			if (!alive) return Promise.resolve({ status: 0, body: '', ttfbMs: 0, totalMs: 0, error: 'connection not open' })
			head = ''
			phase = 'head'
			status = 0
			ttfb = 0
			sizeLine = ''
			const p = new Promise<Exchange>((resolve) => {
				waiter = { resolve, startedAt }
			})
			const n = socket!.write(request)
			if (n < request.length) unsent = request.subarray(Math.max(0, n))
			return p
		},
		close,
		get alive() {
			return alive
		},
		get busySince() {
			return waiter?.startedAt ?? 0
		},
	}
}
