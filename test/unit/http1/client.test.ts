/**
 * The upstream HTTP/1.1 client against real servers on loopback: Bun's own server for what vendors do (JSON, streams,
 * TLS, compression, large bodies), and raw TCP servers for what they do when things go wrong (a keep-alive
 * connection closed under the client, a stall, a reset).
 */
import { afterAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { http1Request, idleConnections, IdleTimeout } from '../../../src/lib/http1/client'

const TLS_DIR = join(import.meta.dir, '../../fixtures/tls')
const cert = await Bun.file(join(TLS_DIR, 'localhost.crt')).text()
const key = await Bun.file(join(TLS_DIR, 'localhost.key')).text()

const gzip = Bun.gzipSync(new TextEncoder().encode('{"zipped":true}'))
const server = Bun.serve({
	port: 0,
	hostname: '127.0.0.1',
	async fetch(req) {
		const url = new URL(req.url)
		if (url.pathname === '/json') return Response.json({ method: req.method, body: await req.text(), encoding: req.headers.get('accept-encoding'), x: req.headers.get('x-one') })
		if (url.pathname === '/length') return new Response(String((await req.arrayBuffer()).byteLength))
		if (url.pathname === '/gzip') return new Response(gzip, { headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } })
		if (url.pathname === '/stream') {
			let i = 0
			return new Response(
				new ReadableStream({
					async pull(c) {
						if (i > 0) await Bun.sleep(30)
						if (i === 3) return c.close()
						c.enqueue(new TextEncoder().encode(`data: ${i++}\n\n`))
					},
				}),
				{ headers: { 'content-type': 'text/event-stream' } },
			)
		}
		if (url.pathname === '/stall') {
			// One chunk (Bun's server sends the head with the first one), then nothing.
			let sent = false
			const pull = (c: ReadableStreamDefaultController<Uint8Array>) => {
				if (sent) return new Promise<void>(() => {})
				sent = true
				c.enqueue(new TextEncoder().encode(': open\n\n'))
			}
			return new Response(new ReadableStream({ pull }), { headers: { 'content-type': 'text/event-stream' } })
		}
		return new Response('missing', { status: 404, headers: { 'retry-after': '3' } })
	},
})
const tlsServer = Bun.serve({ port: 0, hostname: '127.0.0.1', tls: { cert, key }, fetch: () => Response.json({ secure: true }) })

afterAll(() => {
	server.stop(true)
	tlsServer.stop(true)
})

const call = (url: string, init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal; idleMs?: number } = {}, ca?: string) =>
	http1Request(new URL(url), { method: init.method ?? 'POST', headers: init.headers ?? {}, body: init.body, signal: init.signal ?? new AbortController().signal, idleMs: init.idleMs ?? 10_000 }, { ca })

/** A raw HTTP server on loopback whose connections run `handle` (each request's text, the connection's number). */
function rawServer(handle: (s: Bun.Socket<{ n: number }>, request: string, nth: number) => void) {
	let opened = 0
	const srv = Bun.listen<{ n: number; requests: number }>({
		hostname: '127.0.0.1',
		port: 0,
		socket: {
			open(s) {
				s.data = { n: ++opened, requests: 0 }
			},
			data(s, b) {
				s.data.requests++
				handle(s as unknown as Bun.Socket<{ n: number }>, new TextDecoder().decode(b), s.data.requests)
			},
		},
	})
	return { url: `http://127.0.0.1:${srv.port}`, opened: () => opened, stop: () => srv.stop(true) }
}

describe('http1Request', () => {
	it('should send a JSON body and read the answer, asking for no compression', async () => {
		const res = await call(`http://127.0.0.1:${server.port}/json`, { body: '{"q":"é"}', headers: { 'content-type': 'application/json', 'x-one': '1' } })
		expect(res.status).toBe(200)
		expect(res.headers.get('content-type')).toContain('application/json')
		expect(await res.json()).toEqual({ method: 'POST', body: '{"q":"é"}', encoding: 'identity', x: '1' })
	})

	it('should reuse one keep-alive connection for calls one after another', async () => {
		const srv = rawServer((s, req, nth) => {
			const body = `${nth}:${req.slice(req.indexOf('\r\n\r\n') + 4)}`
			s.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
		})
		try {
			for (let i = 1; i <= 5; i++) expect(await (await call(srv.url, { body: `b${i}` })).text()).toBe(`${i}:b${i}`)
			expect(srv.opened()).toBe(1)
			expect(idleConnections()).toBeGreaterThanOrEqual(1)
		} finally {
			srv.stop()
		}
	})

	it('should hand a stream over as its chunks arrive', async () => {
		const res = await call(`http://127.0.0.1:${server.port}/stream`)
		const reader = res.body!.getReader()
		const first = await reader.read()
		expect(new TextDecoder().decode(first.value)).toBe('data: 0\n\n')
		let rest = ''
		for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value)
		expect(rest).toBe('data: 1\n\ndata: 2\n\n')
	})

	it('should keep the status and headers of an error answer', async () => {
		const res = await call(`http://127.0.0.1:${server.port}/nothing`)
		expect(res.status).toBe(404)
		expect(res.headers.get('retry-after')).toBe('3')
		expect(await res.text()).toBe('missing')
	})

	it('should write a body larger than the socket takes at once', async () => {
		const body = 'x'.repeat(8 * 1024 * 1024)
		expect(await (await call(`http://127.0.0.1:${server.port}/length`, { body })).text()).toBe(String(body.length))
	})

	it('should decode a compressed answer sent anyway', async () => {
		const res = await call(`http://127.0.0.1:${server.port}/gzip`, { method: 'GET' })
		expect(res.headers.get('content-encoding')).toBeNull()
		expect(await res.json()).toEqual({ zipped: true })
	})

	it('should verify the certificate over TLS', async () => {
		const url = `https://localhost:${tlsServer.port}/`
		expect(await (await call(url, { method: 'GET' }, cert)).json()).toEqual({ secure: true })
		await expect(call(url, { method: 'GET' })).rejects.toThrow(/certificate/i)
	})

	it('should refuse a header that would split the request', async () => {
		await expect(call(`http://127.0.0.1:${server.port}/json`, { headers: { 'x-a': 'b\r\nx-injected: 1' } })).rejects.toThrow(TypeError)
	})

	it('should abort a call, and the stream of an answer under way', async () => {
		const early = new AbortController()
		early.abort(new Error('gone'))
		await expect(call(`http://127.0.0.1:${server.port}/json`, { signal: early.signal })).rejects.toThrow('gone')
		const ctl = new AbortController()
		const res = await call(`http://127.0.0.1:${server.port}/stall`, { signal: ctl.signal })
		const reader = res.body!.getReader()
		await reader.read()
		const read = reader.read()
		ctl.abort(new Error('client left'))
		await expect(read).rejects.toThrow('client left')
	})

	it('should fail a call whose server goes silent past the idle limit', async () => {
		const res = await call(`http://127.0.0.1:${server.port}/stall`, { idleMs: 1000 })
		const reader = res.body!.getReader()
		expect(new TextDecoder().decode((await reader.read()).value)).toBe(': open\n\n')
		const started = performance.now()
		await expect(reader.read()).rejects.toBeInstanceOf(IdleTimeout)
		expect(performance.now() - started).toBeLessThan(3000)
	})

	it('should retry once on a fresh connection when a reused one was closed before any answer', async () => {
		// Answers the first request of each connection; closes the connection on its second unanswered.
		const srv = rawServer((s, _req, nth) => {
			if (nth === 1) s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')
			else s.end()
		})
		try {
			expect(await (await call(srv.url)).text()).toBe('ok')
			expect(await (await call(srv.url)).text()).toBe('ok')
			expect(srv.opened()).toBe(2)
		} finally {
			srv.stop()
		}
	})

	it('should not retry on a fresh connection that closes without an answer', async () => {
		const srv = rawServer((s) => s.end())
		try {
			await expect(call(srv.url)).rejects.toThrow('closed')
			await Bun.sleep(50)
			expect(srv.opened()).toBe(1)
		} finally {
			srv.stop()
		}
	})

	it('should read a body the server frames by closing, and not reuse that connection', async () => {
		const srv = rawServer((s) => {
			s.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\npart one, ')
			setTimeout(() => s.end('part two'), 20)
		})
		try {
			expect(await (await call(srv.url)).text()).toBe('part one, part two')
			expect(await (await call(srv.url)).text()).toBe('part one, part two')
			expect(srv.opened()).toBe(2)
		} finally {
			srv.stop()
		}
	})

	it('should reject a malformed answer', async () => {
		const srv = rawServer((s) => s.write('SMTP ready\r\n\r\n'))
		try {
			await expect(call(srv.url)).rejects.toThrow('bad status line')
		} finally {
			srv.stop()
		}
	})
})
