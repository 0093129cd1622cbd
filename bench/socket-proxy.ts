/**
 * The metering floor without Bun's `fetch`: as metering-proxy.ts (an event stream read chunk by chunk in JavaScript
 * and written into a direct stream, a JSON answer read whole and sent again), but the upstream call goes over a
 * keep-alive HTTP/1.1 connection of its own on `Bun.connect`, its bytes handed over in the socket's `data` callback:
 * no HTTP client thread, no response body stream between the upstream's bytes and the client's: how much of the
 * metering floor is `fetch` (`bun bench/ab.ts bare proxy:bench/metering-proxy.ts proxy:bench/socket-proxy.ts`). A
 * full client built this way for the gateway, handing the relays a `Response`, cost more than `fetch` and was
 * reverted (bench/README, fourteenth VM). Plain HTTP to the bench's mock only: no TLS, no proxies, no timeouts, no
 * retry of a pooled connection the server closed. A measurement, not a client to ship.
 * @module
 */
const upstreams = JSON.parse(process.env.UPSTREAMS ?? '[]') as string[]

/** One exchange on a connection: the response head until it is complete, then the body (sized or chunked). */
type Exchange = {
	head: Uint8Array | undefined
	status: number
	type: string
	chunked: boolean
	/** Bytes left of the body (sized) or of the current chunk. */
	left: number
	/** Chunked decoding: 0 size line, 1 chunk data, 2 the CRLF after it, 3 the last chunk's CRLF. */
	state: number
	sizeLine: string
	onHead(): void
	onData(bytes: Uint8Array): void
	onEnd(): void
}
type Conn = Bun.Socket<{ ex: Exchange | undefined; origin: string }>

const idle = new Map<string, Conn[]>()
const decoder = new TextDecoder()

function done(s: Conn) {
	const ex = s.data.ex!
	s.data.ex = undefined
	idle.get(s.data.origin)!.push(s)
	ex.onEnd()
}

function body(s: Conn, b: Uint8Array) {
	const ex = s.data.ex!
	if (!ex.chunked) {
		ex.left -= b.length
		if (b.length) ex.onData(b)
		if (ex.left <= 0) done(s)
		return
	}
	let i = 0
	while (i < b.length) {
		if (ex.state === 1) {
			const n = Math.min(ex.left, b.length - i)
			ex.onData(b.subarray(i, i + n))
			i += n
			ex.left -= n
			if (ex.left === 0) ex.state = 2
			continue
		}
		const nl = b.indexOf(10, i)
		if (nl === -1) {
			if (ex.state === 0) ex.sizeLine += decoder.decode(b.subarray(i))
			return
		}
		if (ex.state === 0) {
			const size = parseInt(ex.sizeLine + decoder.decode(b.subarray(i, nl)), 16)
			ex.sizeLine = ''
			ex.state = size === 0 ? 3 : 1
			ex.left = size
		} else if (ex.state === 2) ex.state = 0
		else return done(s)
		i = nl + 1
	}
}

const handlers = {
	data(s: Conn, b: Uint8Array) {
		const ex = s.data.ex
		if (!ex) return
		if (ex.status !== 0) return body(s, b)
		const buf = ex.head ? Buffer.concat([ex.head, b]) : Buffer.from(b.buffer, b.byteOffset, b.length)
		const end = buf.indexOf('\r\n\r\n')
		if (end === -1) {
			ex.head = buf
			return
		}
		const lines = decoder.decode(buf.subarray(0, end)).split('\r\n')
		ex.status = Number(lines[0]!.slice(9, 12))
		for (const line of lines.slice(1)) {
			const colon = line.indexOf(':')
			const name = line.slice(0, colon).toLowerCase()
			const value = line.slice(colon + 1).trim()
			if (name === 'content-length') ex.left = Number(value)
			else if (name === 'transfer-encoding') ex.chunked = value.includes('chunked')
			else if (name === 'content-type') ex.type = value
		}
		ex.onHead()
		body(s, buf.subarray(end + 4))
	},
	close(s: Conn) {
		const list = idle.get(s.data.origin)
		const at = list?.indexOf(s) ?? -1
		if (at >= 0) list!.splice(at, 1)
	},
	error() {},
}

async function connection(origin: string): Promise<Conn> {
	let list = idle.get(origin)
	if (!list) idle.set(origin, (list = []))
	const s = list.pop()
	if (s) return s
	const u = new URL(origin)
	return (await Bun.connect({ hostname: u.hostname, port: Number(u.port), socket: handlers, data: { ex: undefined, origin } })) as Conn
}

async function relay(origin: string, req: Request): Promise<Response> {
	const url = new URL(req.url)
	const payload = await req.text()
	const s = await connection(origin)
	let head = `${req.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`
	req.headers.forEach((v, k) => {
		if (k !== 'host' && k !== 'content-length' && k !== 'connection') head += `${k}: ${v}\r\n`
	})
	head += `content-length: ${Buffer.byteLength(payload)}\r\n\r\n`
	return new Promise<Response>((resolve) => {
		let controller: ReadableStreamDirectController | undefined
		let held: Uint8Array[] = []
		let ended = false
		let finishPull: (() => void) | undefined
		const ex: Exchange = {
			head: undefined,
			status: 0,
			type: '',
			chunked: false,
			left: -1,
			state: 0,
			sizeLine: '',
			onHead() {
				if (!ex.type.includes('event-stream')) return
				const source = {
					type: 'direct',
					pull(c: ReadableStreamDirectController) {
						controller = c
						for (const b of held) c.write(b)
						held = []
						if (ended) return void c.close()
						c.flush()
						return new Promise<void>((r) => (finishPull = r))
					},
				}
				resolve(new Response(new ReadableStream(source as unknown as UnderlyingDefaultSource), { status: ex.status, headers: { 'content-type': ex.type } }))
			},
			onData(b) {
				if (controller) {
					controller.write(b)
					controller.flush()
				} else held.push(b.slice())
			},
			onEnd() {
				ended = true
				if (!ex.type.includes('event-stream'))
					return resolve(new Response((held.length === 1 ? held[0]! : Buffer.concat(held)) as Uint8Array<ArrayBuffer>, { status: ex.status, headers: { 'content-type': ex.type } }))
				if (controller) {
					controller.close()
					finishPull?.()
				}
			},
		}
		s.data.ex = ex
		s.write(head + payload)
	})
}

const ports = upstreams.map((origin) => Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: (req) => relay(origin, req) }).port)
console.log(JSON.stringify({ ports }))
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
