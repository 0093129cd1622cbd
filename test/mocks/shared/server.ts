/**
 * The vendor-agnostic part of every mock: `Bun.serve` on port 0, request recording, abort tracking and faults.
 * A vendor supplies a handler that maps a parsed request to a `Reply` and the shape of its error bodies.
 * @module
 */

import type { TCPSocketListener } from 'bun'

import { json, toResponse, type BodyHooks, type Reply } from './reply'
import type { Fault, MockOptions, RecordedAbort, RecordedRequest, VendorMock } from './types'

/** A request as handlers see it: the body is read once, parsed, and shared with the recorder. */
export interface MockRequest {
	method: string
	path: string
	query: Record<string, string>
	headers: Headers
	/** Parsed JSON, the raw text when `jsonError`, or undefined for an empty body. */
	body: unknown
	/** The body's text as it came (not for multipart bodies): what a relay forwarded byte for byte. */
	text?: string
	/** Set for multipart bodies. */
	form?: FormData
	/** The raw bytes of a resumable upload's chunk (`X-Goog-Upload-Command: upload…`), which is no text. */
	bytes?: Uint8Array
	/** The body was present but not valid JSON (or not a valid multipart body). */
	jsonError: boolean
	/** `http://127.0.0.1:PORT`, for URLs the mock hands out (images). */
	origin: string
}

export interface VendorSpec {
	/** Path appended to the origin to form `url` ('/v1' for OpenAI, '' for the others). */
	basePath: string
	handle(req: MockRequest): Reply | Promise<Reply>
	/** The vendor's error body for an injected `status` fault. */
	statusBody(status: number): unknown
	/** The vendor's in-stream error frame for a request (the `midstream` fault), and the HTTP status it stands for. */
	streamError(req: Pick<MockRequest, 'path' | 'query'>, sequence: number, status?: number): { frame: string; status: number }
}

type BunServer = ReturnType<typeof Bun.serve>

const HOST = '127.0.0.1'

async function readBody(req: Request): Promise<Pick<MockRequest, 'body' | 'form' | 'jsonError' | 'text' | 'bytes'>> {
	if (req.method === 'GET' || req.method === 'HEAD') return { body: undefined, jsonError: false }
	if (req.headers.get('x-goog-upload-command')?.includes('upload')) return { body: undefined, jsonError: false, bytes: new Uint8Array(await req.arrayBuffer()) }
	const type = req.headers.get('content-type') ?? ''
	if (type.startsWith('multipart/form-data')) {
		try {
			const form = await withDeclaredTypes(new Uint8Array(await req.arrayBuffer()), type)
			const fields: Record<string, unknown> = {}
			form.forEach((v, k) => {
				fields[k] = typeof v === 'string' ? v : { filename: v.name, type: v.type, size: v.size }
			})
			return { body: fields, form, jsonError: false }
		} catch {
			return { body: undefined, jsonError: true }
		}
	}
	const text = await req.text()
	if (!text) return { body: undefined, jsonError: false }
	try {
		return { body: JSON.parse(text), jsonError: false, text }
	} catch {
		return { body: text, jsonError: true, text }
	}
}

/**
 * The form in `raw`, each file with the type its part's `Content-Type` header declares, as a vendor reads it. Bun's
 * parser guesses a file's type from its name's extension instead (a PNG named `blob` has none), which would hide what
 * a relay sent.
 */
async function withDeclaredTypes(raw: Uint8Array<ArrayBuffer>, contentType: string): Promise<FormData> {
	const parsed = await new Response(raw, { headers: { 'content-type': contentType } }).formData()
	const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
	if (!boundary) return parsed
	// Each file part's declared type, in order (latin1 keeps every byte one character; only the headers are read).
	const declared: string[] = []
	for (const part of Buffer.from(raw).toString('latin1').split(`--${boundary[1] ?? boundary[2]}`)) {
		const head = part.slice(0, part.indexOf('\r\n\r\n'))
		if (!/filename="/i.test(head)) continue
		declared.push(/^content-type:\s*(.*)$/im.exec(head)?.[1]?.trim() ?? '')
	}
	const form = new FormData()
	let i = 0
	for (const [name, v] of parsed.entries() as Iterable<[string, FormDataEntryValue]>) {
		if (typeof v === 'string') form.append(name, v)
		else form.append(name, new File([v], v.name, { type: declared[i++] ?? v.type }))
	}
	return form
}

/** Resolves when the client goes away: the `hang` fault never answers on its own. */
const hang = (signal: AbortSignal): Promise<Response> =>
	new Promise((resolve) => {
		if (signal.aborted) resolve(new Response(null))
		else signal.addEventListener('abort', () => resolve(new Response(null)), { once: true })
	})

/**
 * Starts a mock on a free port. The returned object's `fault`/`faultOnce` are live: assigning `refuse` closes the
 * listening socket at once, clearing it listens again on the same port (so `url` stays valid).
 */
export function startMockServer(spec: VendorSpec, opts: MockOptions): VendorMock {
	const requests: RecordedRequest[] = []
	const aborts: RecordedAbort[] = []
	const record = opts.record !== false
	const delayMs = opts.delayMs ?? 0
	const chunkDelayMs = opts.chunkDelayMs ?? 0
	let fault: Fault | undefined
	let faultOnce: Fault | undefined
	let server: BunServer | undefined
	let raw: TCPSocketListener | undefined
	let stopped = false

	const handleRequest = async (req: Request): Promise<Response> => {
		const f = faultOnce ?? fault
		faultOnce = undefined
		const url = new URL(req.url)
		const path = url.pathname
		let finished = false
		const done = () => {
			finished = true
		}
		// Bun aborts `req.signal` when the client disconnects; a finished response must not count.
		const gone = () => {
			if (finished) return
			finished = true
			aborts.push({ path, at: Date.now() })
		}
		req.signal.addEventListener('abort', gone, { once: true })
		const query = url.search ? Object.fromEntries(url.searchParams) : {}
		const read = await readBody(req)
		if (record) requests.push({ method: req.method, path, query, headers: Object.fromEntries(req.headers), body: read.body, text: read.text, form: read.form, at: Date.now() })
		const wait = delayMs + (f?.kind === 'slow' ? f.firstByteMs : 0)
		if (wait > 0) {
			await Bun.sleep(wait)
			if (req.signal.aborted) return new Response(null)
		}
		if (f?.kind === 'hang') return hang(req.signal)
		if (f?.kind === 'status') {
			done()
			const headers: Record<string, string> = { 'content-type': 'application/json' }
			if (f.retryAfter !== undefined) headers['retry-after'] = String(f.retryAfter)
			// Sent by OpenAI-compatible APIs (Azure OpenAI) and read first by the OpenAI and Anthropic SDKs.
			if (f.retryAfterMs !== undefined) headers['retry-after-ms'] = String(f.retryAfterMs)
			const body = f.body ?? spec.statusBody(f.status)
			return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status: f.status, headers })
		}
		const mreq: MockRequest = { method: req.method, path, query, headers: req.headers, ...read, origin: `http://${HOST}:${port}` }
		let reply: Reply
		try {
			reply = await spec.handle(mreq)
		} catch (e) {
			reply = json(spec.statusBody(500), 500)
			console.error('mock handler failed', e)
		}
		if (f?.kind === 'midstream') return midstream(reply, f.afterChunks, f.status, mreq, { chunkDelayMs, signal: req.signal, done, cancelled: gone })
		return toResponse(reply, f, { chunkDelayMs, signal: req.signal, done, cancelled: gone })
	}

	// A stream gets the vendor's error frame after `after` chunks; anything else the equivalent HTTP error.
	const midstream = (reply: Reply, after: number, as: number | undefined, req: MockRequest, hooks: BodyHooks): Response => {
		if (reply.type === 'stream' && reply.status === 200) {
			const kept = reply.chunks.slice(0, Math.min(after, reply.chunks.length - reply.tail))
			const { frame } = spec.streamError(req, kept.length, as)
			return toResponse({ ...reply, chunks: [...kept, frame], tail: 0 }, undefined, hooks)
		}
		const { status } = spec.streamError(req, 0, as)
		return toResponse(json(spec.statusBody(status), status), undefined, hooks)
	}

	const listen = () => {
		server = Bun.serve({ hostname: HOST, port, idleTimeout: 0, development: false, fetch: handleRequest })
		port = server.port ?? port
	}
	const unlisten = () => {
		void server?.stop(true)
		server = undefined
		void raw?.stop(true)
		raw = undefined
	}
	// Reconciles the listening state with the refuse faults: down (refuse), one-shot reset (faultOnce), or up.
	const sync = () => {
		if (stopped) return
		const want = fault?.kind === 'refuse' ? 'down' : faultOnce?.kind === 'refuse' ? 'once' : 'up'
		if (want === 'up' && server) return
		if (want === 'once' && raw) return
		unlisten()
		if (want === 'up') listen()
		if (want === 'once') {
			raw = Bun.listen({
				hostname: HOST,
				port,
				socket: {
					open(socket) {
						socket.terminate()
						faultOnce = undefined
						sync()
					},
					data() {},
				},
			})
		}
	}

	let port = 0
	listen()
	return {
		get url() {
			return `http://${HOST}:${port}${spec.basePath}`
		},
		get port() {
			return port
		},
		requests,
		aborts,
		get fault() {
			return fault
		},
		set fault(f: Fault | undefined) {
			fault = f
			sync()
		},
		get faultOnce() {
			return faultOnce
		},
		set faultOnce(f: Fault | undefined) {
			faultOnce = f
			sync()
		},
		reset() {
			requests.length = 0
			aborts.length = 0
			fault = undefined
			faultOnce = undefined
			sync()
		},
		async stop() {
			stopped = true
			const s = server
			unlisten()
			await s?.stop(true)
		},
	}
}
