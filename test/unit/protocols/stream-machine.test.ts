/** The stream codecs' machine contract (src/protocols/stream-machine.ts), for every protocol. */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import type { StreamEvent } from '../../../src/core/events'
import type { SseFrame } from '../../../src/core/sse'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import type { ProtocolCodec } from '../../../src/protocols/codec'
import { gemini } from '../../../src/protocols/gemini'
import { openaiChat } from '../../../src/protocols/openai-chat'
import { openaiResponses } from '../../../src/protocols/openai-responses'

/** A whole upstream stream of each protocol, then a frame that must never be read. */
const streams: Array<[ProtocolCodec, SseFrame[]]> = [
	[openaiChat, [{ data: '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}' }, { data: '{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}' }, { data: '[DONE]' }]],
	[
		anthropicMessages,
		[
			{ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1,"output_tokens":0}}}' },
			{ event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' },
			{ event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}' },
			{ event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
			{ event: 'message_delta', data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}' },
			{ event: 'message_stop', data: '{"type":"message_stop"}' },
		],
	],
	[
		openaiResponses,
		[
			{ event: 'response.created', data: '{"type":"response.created","response":{"id":"resp_1","model":"m"}}' },
			{ event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"Hi"}' },
			{ event: 'response.completed', data: '{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":1,"output_tokens":1}}}' },
		],
	],
]
const AFTER: SseFrame = { data: '{"never":"read"}' }

describe('stream decoders as machines', () => {
	for (const [codec, frames] of streams)
		it(`${codec.name}: done at the terminator, then deaf; the iterable form stops reading there`, async () => {
			const d = codec.streamDecoder()
			const out: StreamEvent[] = []
			for (const f of frames) {
				expect(d.done).toBe(false)
				d.push(f, out)
			}
			expect(d.done).toBe(true)
			expect(out.at(-1)).toMatchObject({ type: 'finish' })
			const n = out.length
			d.push(AFTER, out)
			d.end(out)
			expect(out.length).toBe(n)

			let pulled = 0
			let returned = false
			const source: AsyncIterable<SseFrame> = {
				[Symbol.asyncIterator]: () => {
					const all = [...frames, AFTER]
					return {
						next: async () => (pulled < all.length ? { value: all[pulled++]!, done: false } : { value: undefined, done: true }),
						return: async () => {
							returned = true
							return { value: undefined, done: true }
						},
					}
				},
			}
			const events: StreamEvent[] = []
			for await (const e of codec.decodeStream(source)) events.push(e)
			expect(events).toEqual(out)
			expect(pulled).toBe(frames.length)
			expect(returned).toBe(true)
		})

	it('should end a stream cut before its terminator with an error (every protocol)', () => {
		for (const [codec, frames] of [...streams, [gemini, [{ data: '{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}' }]] as [ProtocolCodec, SseFrame[]]]) {
			const d = codec.streamDecoder()
			const out: StreamEvent[] = []
			d.push(frames[0]!, out)
			d.end(out)
			expect(d.done).toBe(true)
			expect(out.at(-1)).toMatchObject({ type: 'error', error: { code: 'upstream_cut' } })
		}
	})
})

describe('stream encoders as machines', () => {
	const events: StreamEvent[] = [
		{ type: 'start', id: 'x', model: 'm' },
		{ type: 'block_start', index: 0, block: { kind: 'text' } },
		{ type: 'text_delta', index: 0, text: 'Hi' },
		{ type: 'block_stop', index: 0 },
		{ type: 'finish', reason: 'end_turn' },
	]
	for (const codec of [openaiChat, anthropicMessages, openaiResponses, gemini])
		it(`${codec.name}: an error event ends the stream; later events and end add nothing`, () => {
			const e = codec.streamEncoder({ model: 'client' })
			const out: SseFrame[] = []
			e.push(events[0]!, out)
			e.push({ type: 'error', error: new GatewayError('upstream', 'boom') }, out)
			expect(e.done).toBe(true)
			const n = out.length
			for (const ev of events.slice(1)) e.push(ev, out)
			e.end(out)
			expect(out.length).toBe(n)
		})
})
