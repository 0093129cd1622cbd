/**
 * The harness's own parts that could silently lie: the response checks, the percentiles and the raw HTTP client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Socket, TCPSocketListener } from 'bun'
import { checkResponse } from './checks'
import { encodeRequest, openConn } from './http-client'
import { percentiles } from './stats'

describe('checkResponse', () => {
	const usage = '"usage":{"prompt_tokens":1,"completion_tokens":2}'
	it('should accept a chat stream that ends with [DONE] and carries usage', () => {
		expect(checkResponse('chat-sse', 200, `data: {"choices":[],${usage}}\n\ndata: [DONE]\n\n`)).toBeUndefined()
	})
	it('should reject a chat stream cut before [DONE]', () => {
		expect(checkResponse('chat-sse', 200, `data: {"choices":[],${usage}}\n\n`)).toBe('no [DONE] at the end')
	})
	it('should reject a messages stream without message_stop at the end', () => {
		const body = 'event: message_delta\ndata: {"usage":{"output_tokens":3}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\nevent: ping\ndata: {}\n\n'
		expect(checkResponse('messages-sse', 200, body)).toBe('no message_stop at the end')
	})
	it('should reject a body without usage, and any non-200 status', () => {
		expect(checkResponse('chat-json', 200, '{"choices":[]}')).toBe('no usage')
		expect(checkResponse('chat-json', 500, `{${usage}}`)).toBe('status 500')
	})
})

describe('percentiles', () => {
	it('should return nearest-rank percentiles', () => {
		const p = percentiles(Array.from({ length: 100 }, (_, i) => i + 1))
		expect([p.p50, p.p90, p.p99, p.max, p.n]).toEqual([50, 90, 99, 100, 100])
	})
})

describe('openConn', () => {
	let listener: TCPSocketListener<undefined>
	// A raw server, so the response can arrive split at awkward places (inside the head, inside a chunk size).
	const pieces = ['HTTP/1.1 200 OK\r\ntransfer-enc', 'oding: chunked\r\n\r\n5\r\nhel', 'lo\r\n', '6', '\r\n world\r\n0\r\n\r\n']
	const send = async (s: Socket<undefined>) => {
		for (const p of pieces) {
			s.write(p)
			await Bun.sleep(5)
		}
	}
	beforeAll(() => {
		listener = Bun.listen({
			hostname: '127.0.0.1',
			port: 0,
			socket: {
				data(s, buf) {
					const text = buf.toString()
					if (text.includes('/length')) s.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok')
					else void send(s)
				},
			},
		})
	})
	afterAll(() => listener.stop(true))

	it('should decode a chunked body split at arbitrary points and keep the connection', async () => {
		const c = await openConn(listener.port)
		const req = encodeRequest(listener.port, '/chunked', {}, '{}')
		const first = await c.send(req, performance.now())
		expect(first).toMatchObject({ status: 200, body: 'hello world', error: undefined })
		expect(first.ttfbMs).toBeLessThanOrEqual(first.totalMs)
		expect((await c.send(req, performance.now())).body).toBe('hello world')
		expect(c.alive).toBe(true)
		c.close('done')
	})

	it('should read a content-length body and close when the server says so', async () => {
		const c = await openConn(listener.port)
		const r = await c.send(encodeRequest(listener.port, '/length', {}, ''), performance.now())
		expect(r).toMatchObject({ status: 200, body: 'ok' })
		expect(c.alive).toBe(false)
	})
})
