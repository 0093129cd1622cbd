/**
 * The HTTP/1.1 response parser of the upstream client: heads, the three ways a body is framed, interim answers,
 * bytes split anywhere, and what makes a connection reusable or an answer malformed.
 */
import { describe, expect, it } from 'bun:test'
import { HttpParseError, type ResponseHead, ResponseParser } from '../../../src/lib/http1/response-parser'

const bytes = (s: string) => new TextEncoder().encode(s)

/** Parses `wire` delivered in the given piece sizes (all at once by default). */
function parse(wire: string, opts: { pieces?: number; head?: boolean; eof?: boolean } = {}) {
	const heads: ResponseHead[] = []
	const parts: Uint8Array[] = []
	let ended = 0
	const p = new ResponseParser({ head: (h) => heads.push(h), body: (b) => parts.push(b.slice()), end: () => ended++ }, opts.head)
	const all = bytes(wire)
	const step = opts.pieces ?? all.length
	for (let i = 0; i < all.length; i += step) p.push(all.subarray(i, i + step))
	if (opts.eof) p.eof()
	const body = new TextDecoder().decode(Buffer.concat(parts))
	return { p, heads, body, ended }
}

describe('ResponseParser', () => {
	it('should read a sized body and leave the connection reusable', () => {
		const { p, heads, body, ended } = parse('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 7\r\n\r\n{"a":1}')
		expect(heads).toEqual([{ status: 200, statusText: 'OK', headers: [['content-type', 'application/json'], ['content-length', '7']] }])
		expect(body).toBe('{"a":1}')
		expect(ended).toBe(1)
		expect(p.done && p.reusable).toBe(true)
	})

	it('should decode a chunked body split at every byte, extensions and trailers included', () => {
		const wire = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\ndata:\r\n8\r\n hello\n\n\r\n0\r\nx-trailer: 1\r\n\r\n'
		for (const pieces of [1, 2, 3, 7, 1000]) {
			const { p, body, ended } = parse(wire, { pieces })
			expect(body).toBe('data: hello\n\n')
			expect(ended).toBe(1)
			expect(p.reusable).toBe(true)
		}
	})

	it('should read to the connection end when nothing frames the body, and not reuse it', () => {
		const { p, body, ended } = parse('HTTP/1.1 200 OK\r\n\r\nuntil close', { eof: true })
		expect(body).toBe('until close')
		expect(ended).toBe(1)
		expect(p.done).toBe(true)
		expect(p.reusable).toBe(false)
	})

	it('should skip interim answers before the final one', () => {
		const { heads, body } = parse('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok', { pieces: 5 })
		expect(heads.map((h) => h.status)).toEqual([201])
		expect(body).toBe('ok')
	})

	it('should end at once when the answer has no body', () => {
		for (const [wire, head] of [
			['HTTP/1.1 204 No Content\r\n\r\n', false],
			['HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n', false],
			['HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n', true],
			['HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n', false],
		] as const) {
			const { p, ended, body } = parse(wire, { head })
			expect(ended).toBe(1)
			expect(body).toBe('')
			expect(p.reusable).toBe(true)
		}
	})

	it('should not reuse a connection the server closes, or an HTTP/1.0 one', () => {
		expect(parse('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n').p.reusable).toBe(false)
		expect(parse('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n').p.reusable).toBe(false)
		expect(parse('HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n').p.reusable).toBe(true)
		// Bytes after the answer: the server does not speak HTTP as expected.
		expect(parse('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nab').p.reusable).toBe(false)
	})

	it('should prefer chunked framing over a content-length', () => {
		const { body } = parse('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n4\r\nwxyz\r\n0\r\n\r\n')
		expect(body).toBe('wxyz')
	})

	it('should refuse what it cannot frame', () => {
		for (const wire of [
			'HTTP/2 200\r\n\r\n',
			'garbage\r\n\r\n',
			'HTTP/1.1 200 OK\r\ncontent-length: 1x\r\n\r\n',
			'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n',
			'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n',
			'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
			'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabX\r\n',
		])
			expect(() => parse(wire)).toThrow(HttpParseError)
		expect(() => parse(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(20_000)}`)).toThrow('too large')
	})

	it('should call a cut body an error, not an end', () => {
		expect(() => parse('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc', { eof: true })).toThrow('before the response ended')
		expect(() => parse('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab', { eof: true })).toThrow('before the response ended')
		expect(() => parse('HTTP/1.1 20', { eof: true })).toThrow('before a response')
	})
})
