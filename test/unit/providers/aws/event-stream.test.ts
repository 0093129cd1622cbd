/**
 * The event-stream decoder: aws-c-event-stream's `empty_message` vector, messages split across reads at every byte,
 * CRC and length checks; and Bedrock's chunk and exception messages as Anthropic SSE (bedrock-stream.ts).
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import { decodeMessage, eventMessages } from '../../../../src/providers/aws/event-stream'
import { anthropicSseOf, sseOf } from '../../../../src/providers/bedrock-stream'
import { chunkMessage, exceptionMessage, frameMessage } from '../../../mocks/bedrock/event-stream'

/** aws-c-event-stream `encoded/positive/empty_message`: total 16, no headers, prelude CRC 0x05c248eb, message CRC 0x7d98c8ff. */
const EMPTY = new Uint8Array([0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8, 0xff])

const streamOf = (chunks: Uint8Array[]) =>
	new ReadableStream<Uint8Array>({
		start(ctl) {
			for (const c of chunks) ctl.enqueue(c)
			ctl.close()
		},
	})

async function all(chunks: Uint8Array[]) {
	const out = []
	for await (const m of eventMessages(streamOf(chunks).getReader())) out.push(m)
	return out
}

const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts))

describe('event-stream decoder', () => {
	it('should decode the empty message vector', () => {
		const m = decodeMessage(EMPTY)
		expect(m.headers).toEqual({})
		expect(m.payload.length).toBe(0)
		expect(frameMessage({}, '')).toEqual(EMPTY)
	})

	it('should reject a wrong prelude or message CRC', () => {
		const badPrelude = EMPTY.slice()
		badPrelude[11] = 0xec
		expect(() => decodeMessage(badPrelude)).toThrow('prelude CRC mismatch')
		const badMessage = EMPTY.slice()
		badMessage[15] = 0xfe
		expect(() => decodeMessage(badMessage)).toThrow('message CRC mismatch')
	})

	it('should read string headers and the payload', () => {
		const m = decodeMessage(frameMessage({ ':message-type': 'event', ':event-type': 'chunk' }, '{"a":1}'))
		expect(m.headers).toEqual({ ':message-type': 'event', ':event-type': 'chunk' })
		expect(new TextDecoder().decode(m.payload)).toBe('{"a":1}')
	})

	it('should read every header value type', () => {
		// name "b" bool true (0); "i" int32 (4) -2; "s" short (3) 7; "u" uuid (9); "x" bytes (6) 0xbeef
		const headers = new Uint8Array([1, 98, 0, 1, 105, 4, 0xff, 0xff, 0xff, 0xfe, 1, 115, 3, 0, 7, 1, 117, 9, ...new Array(16).fill(0xab), 1, 120, 6, 0, 2, 0xbe, 0xef])
		const total = 12 + headers.length + 4
		const m = new Uint8Array(total)
		const view = new DataView(m.buffer)
		view.setUint32(0, total)
		view.setUint32(4, headers.length)
		view.setUint32(8, Bun.hash.crc32(m.subarray(0, 8)) >>> 0)
		m.set(headers, 12)
		view.setUint32(total - 4, Bun.hash.crc32(m.subarray(0, total - 4)) >>> 0)
		expect(decodeMessage(m).headers).toEqual({ b: true, i: -2, s: 7, u: 'ab'.repeat(16), x: 'beef' })
	})

	it('should put messages back together whatever the reads split them at', async () => {
		const bytes = concat([chunkMessage('{"type":"ping"}'), exceptionMessage('throttlingException', 'slow down'), EMPTY])
		for (let cut = 1; cut < bytes.length; cut++) {
			const got = await all([bytes.subarray(0, cut), bytes.subarray(cut)])
			expect(got.map((m) => m.headers[':message-type'] ?? 'none')).toEqual(['event', 'exception', 'none'])
		}
		const oneByteReads = await all([...bytes].map((b) => new Uint8Array([b])))
		expect(oneByteReads.length).toBe(3)
	})

	it('should fail when the stream ends inside a message', async () => {
		const bytes = chunkMessage('{"type":"ping"}')
		const e = await all([bytes.subarray(0, bytes.length - 3)]).catch((x) => x)
		expect(e).toBeInstanceOf(GatewayError)
		expect(e.message).toContain('ended inside a message')
	})
})

describe('Bedrock event stream as Anthropic SSE', () => {
	it("should write a chunk's event as Anthropic SSE, its JSON byte for byte", () => {
		const json = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"héllo 世界"}}'
		expect(sseOf(decodeMessage(chunkMessage(json)))).toBe(`event: content_block_delta\ndata: ${json}\n\n`)
	})

	it('should turn exceptions into Anthropic error events of the matching type', () => {
		expect(sseOf(decodeMessage(exceptionMessage('throttlingException', 'Too many tokens')))).toBe(
			'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Too many tokens"}}\n\n',
		)
		expect(sseOf(decodeMessage(exceptionMessage('serviceUnavailableException', 'busy')))).toContain('"type":"overloaded_error"')
		expect(sseOf(decodeMessage(exceptionMessage('modelStreamErrorException', 'broke')))).toContain('"type":"api_error","message":"broke"')
	})

	it('should cancel the upstream body, and a read waiting on it, when the client cancels', async () => {
		let cancelled: unknown
		let waiting = false
		let pulls = 0
		// Pulled only for a read that waits (high water mark 0): the first gets a message, the next waits for ever.
		const body = new ReadableStream<Uint8Array>(
			{
				pull(ctl) {
					if (++pulls === 1) return ctl.enqueue(chunkMessage('{"type":"message_start","message":{}}'))
					waiting = true
					return new Promise(() => {})
				},
				cancel(reason) {
					cancelled = reason
				},
			},
			{ highWaterMark: 0 },
		)
		const sse = anthropicSseOf(body).getReader()
		expect(new TextDecoder().decode((await sse.read()).value)).toStartWith('event: message_start\n')
		const pending = sse.read()
		while (!waiting) await Bun.sleep(1)
		// The read is now waiting on the upstream: cancelling must end it, not wait for it.
		const outcome = await Promise.race([sse.cancel('client gone').then(() => 'cancelled'), Bun.sleep(1000).then(() => 'still waiting')])
		expect(outcome).toBe('cancelled')
		expect(cancelled).toBe('client gone')
		expect((await pending).done).toBe(true)
	})

	it('should stream the SSE of a whole body, skipping messages Anthropic has no place for', async () => {
		const body = streamOf([chunkMessage('{"type":"message_start","message":{}}'), frameMessage({ ':message-type': 'event', ':event-type': 'other' }, '{}'), chunkMessage('{"type":"message_stop"}')])
		const text = await new Response(anthropicSseOf(body)).text()
		expect(text).toBe('event: message_start\ndata: {"type":"message_start","message":{}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n')
	})
})
