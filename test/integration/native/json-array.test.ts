import { describe, expect, it } from 'bun:test'
import { toJsonArray } from '../../../src/modules/gemini/json-array'

const encoder = new TextEncoder()

/** An SSE Response whose body yields `frames` one pull at a time and records a cancel. */
function sseSource(frames: string[]) {
	const state = { cancelled: false }
	let i = 0
	const body = new ReadableStream<Uint8Array>(
		{
			pull(c) {
				if (i < frames.length) c.enqueue(encoder.encode(`data: ${frames[i++]}\r\n\r\n`))
				else c.close()
			},
			cancel() {
				state.cancelled = true
			},
		},
		{ highWaterMark: 0 },
	)
	return { res: new Response(body, { headers: { 'content-type': 'text/event-stream', 'x-request-id': 'r1' } }), state }
}

describe('toJsonArray', () => {
	it('should turn SSE chunks into one JSON array, keeping other headers', async () => {
		const { res } = sseSource(['{"a":1}', '{"b":2}'])
		const out = await toJsonArray(res)
		expect(out.headers.get('content-type')).toStartWith('application/json')
		expect(out.headers.get('x-request-id')).toBe('r1')
		const text = await out.text()
		expect(text).toBe('[{"a":1}\r\n,{"b":2}]')
		expect(JSON.parse(text)).toEqual([{ a: 1 }, { b: 2 }])
	})

	it('should answer an empty stream with an empty array', async () => {
		expect(await (await toJsonArray(sseSource([]).res)).json()).toEqual([])
	})

	it('should wrap an error body in a one-element array and keep its status', async () => {
		const out = await toJsonArray(Response.json({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'slow' } }, { status: 429 }))
		expect(out.status).toBe(429)
		expect(await out.json()).toEqual([{ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'slow' } }])
	})

	it('should cancel the SSE body underneath when the client stops reading (so the relay settles)', async () => {
		const { res, state } = sseSource(['{"a":1}', '{"b":2}', '{"c":3}'])
		const reader = (await toJsonArray(res)).body!.getReader()
		expect(new TextDecoder().decode((await reader.read()).value)).toBe('[{"a":1}')
		await reader.cancel()
		expect(state.cancelled).toBe(true)
	})
})
