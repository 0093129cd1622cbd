/**
 * sseResponse on a real socket: a first chunk that is ready goes out with the status line and headers in one write
 * (one TCP segment on loopback), and one that needs the network does not hold the headers back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ByteSource, sseResponse } from '../../../src/relay/sse-response'
import { cutStreams } from '../../../src/relay/stream-relay'
import { rawPieces } from '../../helpers/raw-pieces'
import { watchLateness } from '../../helpers/lateness'

type Source = () => ByteSource

let server: ReturnType<typeof Bun.serve>
const sources = new Map<string, Source>()

beforeAll(() => {
	server = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		async fetch(req) {
			const make = sources.get(new URL(req.url).pathname)
			if (!make) return new Response('no such source', { status: 404 })
			return sseResponse(make(), () => {}, { 'x-test': '1' })
		},
	})
})
afterAll(() => server.stop(true))

/** GETs `path` from another process (see raw-pieces.ts): the pieces its socket delivered, with their times. */
const rawGet = (path: string) => rawPieces(server.port!, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)

/** A source of `chunks`, each produced after `delays[i]` ms (0: without waiting on a timer). */
function source(chunks: string[], delays: number[] = []): Source {
	return () => {
		let i = 0
		return {
			async next() {
				if (i >= chunks.length) return { value: undefined, done: true }
				const ms = delays[i] ?? 0
				if (ms) await Bun.sleep(ms)
				// A first chunk that takes a few hops to produce, as a relay's does (prefetched frames, settlement).
				else for (let k = 0; k < 50; k++) await null
				return { value: chunks[i++]!, done: false }
			},
			async return() {
				return { value: undefined, done: true as const }
			},
		}
	}
}

describe('sseResponse', () => {
	it('should send the headers and the first write of a pumping source in one write, then its later ones', async () => {
		sources.set('/pump', () => ({
			async pump(sink) {
				sink.write('data: {"n":1}\n\n')
				await Bun.sleep(50)
				const w = sink.write('data: [DONE]\n\n')
				if (typeof w !== 'number') await w
			},
			async return() {
				return undefined
			},
		}))
		const pieces = await rawGet('/pump')
		expect(pieces[0]!.text).toStartWith('HTTP/1.1 200')
		expect(pieces[0]!.text).toContain('data: {"n":1}')
		expect(pieces[0]!.text).not.toContain('[DONE]')
		expect(pieces.map((p) => p.text).join('')).toContain('data: [DONE]')
	})

	it('should send the headers and a ready first chunk in one write', async () => {
		sources.set('/ready', source(['data: {"n":1}\n\n', 'data: [DONE]\n\n'], [0, 50]))
		const pieces = await rawGet('/ready')
		expect(pieces[0]!.text).toStartWith('HTTP/1.1 200')
		expect(pieces[0]!.text).toContain('x-test: 1')
		expect(pieces[0]!.text).toContain('data: {"n":1}')
		expect(pieces.map((p) => p.text).join('')).toContain('data: [DONE]')
	})

	it('should not hold the headers back while the first chunk waits for the network', async () => {
		sources.set('/slow', source(['data: {"n":1}\n\n'], [400]))
		const lateness = watchLateness()
		const pieces = await rawGet('/slow')
		expect(pieces[0]!.text).toStartWith('HTTP/1.1 200')
		expect(pieces[0]!.text).not.toContain('data: {"n":1}')
		expect(pieces[0]!.at).toBeLessThan(300 + lateness.stop())
		const chunk = pieces.find((p) => p.text.includes('data: {"n":1}'))
		expect(chunk!.at).toBeGreaterThanOrEqual(390)
	})

	it('should end the response when the source is empty from the start', async () => {
		sources.set('/empty', source([]))
		const pieces = await rawGet('/empty')
		const text = pieces.map((p) => p.text).join('')
		expect(text).toStartWith('HTTP/1.1 200')
		expect(text).toContain('text/event-stream')
		expect(text).not.toContain('data:')
	})
})

describe('sseResponse cut at shutdown', () => {
	it("should end a stream that has a shutdown event with it, and end its source as its client's leaving does", async () => {
		const log: string[] = []
		let stop: () => void = () => {}
		async function* slow(): AsyncGenerator<string> {
			try {
				yield 'event: a\ndata: 1\n\n'
				// An upstream read that ends only when the call is aborted (`onCancel`).
				await new Promise<void>((r) => (stop = r))
				log.push('read ended')
			} finally {
				log.push('source ended')
			}
		}
		const cutting = Bun.serve({
			hostname: '127.0.0.1',
			port: 0,
			fetch: () => sseResponse(slow(), () => (log.push('cancel'), stop()), {}, 15_000, 'event: error\ndata: {"code":"shutting_down"}\n\n'),
		})
		try {
			const res = await fetch(`http://127.0.0.1:${cutting.port}/`)
			const reader = res.body!.getReader()
			const dec = new TextDecoder()
			let text = dec.decode((await reader.read()).value)
			await cutStreams(1_000)
			for (;;) {
				const { value, done } = await reader.read()
				if (done) break
				text += dec.decode(value)
			}
			expect(text).toBe('event: a\ndata: 1\n\nevent: error\ndata: {"code":"shutting_down"}\n\n')
			expect(log).toEqual(['cancel', 'read ended', 'source ended'])
		} finally {
			cutting.stop(true)
		}
	})
})
