import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import { UNSIGNED_THINKING_TAG } from '../../../../src/core/signatures'
import { formatSse } from '../../../../src/core/sse'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { delta, frame } from '../../../../src/protocols/anthropic-messages/stream-encode'
import { assertContract, collect, fixtureFrames, from, payloads } from './helpers'

const ctx = { model: 'claude-client', countInputTokens: () => 42 }
const encode = (events: StreamEvent[], c = ctx) => collect(anthropicMessages.encodeStream(from(events), c))

/** A typical OpenAI-upstream event sequence: usage arrives only after finish. */
const openaiLike: StreamEvent[] = [
	{ type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' },
	{ type: 'block_start', index: 0, block: { kind: 'text' } },
	{ type: 'text_delta', index: 0, text: 'Hi' },
	{ type: 'block_stop', index: 0 },
	{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_1', name: 'f' } },
	{ type: 'json_delta', index: 1, json: '{"a":' },
	{ type: 'json_delta', index: 1, json: '1}' },
	{ type: 'block_stop', index: 1 },
	{ type: 'finish', reason: 'end_turn' },
	{ type: 'usage', usage: { input: 100, output: 7, cacheRead: 20, cacheWrite: 0, reasoning: 0 } },
]

describe('anthropicMessages.encodeStream', () => {
	it('should emit the documented event order with an event line on every frame', async () => {
		const frames = await encode(openaiLike)
		expect(frames.map((f) => f.event)).toEqual([
			'message_start',
			'content_block_start',
			'content_block_delta',
			'content_block_stop',
			'content_block_start',
			'content_block_delta',
			'content_block_delta',
			'content_block_stop',
			'message_delta',
			'message_stop',
		])
		for (const [i, p] of payloads(frames).entries()) expect(p.type).toBe(frames[i].event!)
	})

	it('should send a complete message_start with the estimate when upstream has not counted input yet', async () => {
		const [start] = payloads(await encode(openaiLike))
		expect(start).toEqual({
			type: 'message_start',
			message: {
				id: expect.stringMatching(/^msg_/),
				type: 'message',
				role: 'assistant',
				model: 'claude-client',
				content: [],
				stop_reason: null,
				stop_sequence: null,
				usage: {
					input_tokens: 42,
					cache_creation_input_tokens: 0,
					cache_read_input_tokens: 0,
					cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
					output_tokens: 0,
					output_tokens_details: { thinking_tokens: 0 },
					service_tier: 'standard',
					speed: 'standard',
				},
			},
		})
	})

	it('should not count the prompt locally when the upstream stated input at the start', async () => {
		let counts = 0
		const [start] = payloads(await encode([{ type: 'start', id: 'msg_1', model: 'm', usage: { input: 5 } }, { type: 'finish', reason: 'end_turn' }], { model: 'claude-client', countInputTokens: () => ++counts }))
		expect(start.message).toMatchObject({ usage: { input_tokens: 5 } })
		expect(counts).toBe(0)
	})

	it('should hold message_delta until the end so it carries usage that came after finish', async () => {
		const p = payloads(await encode(openaiLike))
		expect(p.at(-2)).toEqual({
			type: 'message_delta',
			delta: { stop_reason: 'tool_use', stop_sequence: null },
			usage: { output_tokens: 7, input_tokens: 100, cache_read_input_tokens: 20, cache_creation_input_tokens: 0, output_tokens_details: { thinking_tokens: 0 } },
		})
		expect(p.at(-1)).toEqual({ type: 'message_stop' })
	})

	it('should start blocks with the documented empty fields', async () => {
		const p = payloads(
			await encode([
				{ type: 'start', id: 'msg_x', model: 'm' },
				{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
				{ type: 'thinking_delta', index: 0, text: 'hm' },
				{ type: 'signature_delta', index: 0, signature: 'sig' },
				{ type: 'block_stop', index: 0 },
				{ type: 'block_start', index: 1, block: { kind: 'redacted_thinking', data: 'enc' } },
				{ type: 'block_stop', index: 1 },
				{ type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'fc', name: 'f', signature: 'c2ln' } },
				{ type: 'block_stop', index: 2 },
				{ type: 'finish', reason: 'tool_use' },
			]),
		)
		expect(p[0].message).toMatchObject({ id: 'msg_x' })
		expect(p.filter((x) => x.type === 'content_block_start')).toEqual([
			{ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
			{ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'enc' } },
			{ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'fc__ts_c2ln', name: 'f', input: {} } },
		])
		expect(p.filter((x) => x.type === 'content_block_delta').map((x) => x.delta)).toEqual([
			{ type: 'thinking_delta', thinking: 'hm' },
			{ type: 'signature_delta', signature: 'sig' },
		])
	})

	it('should end an unsigned thinking block with the gateway mark for unsigned thinking as its signature_delta, and a signed one with its own only', async () => {
		const thinking = (signature?: string): StreamEvent[] => [
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'Hmm.' },
			...(signature ? [{ type: 'signature_delta', index: 0, signature } as StreamEvent] : []),
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'end_turn' },
		]
		const deltas = async (events: StreamEvent[]) => payloads(await encode(events)).filter((p) => p.type === 'content_block_delta').map((p) => p.delta)
		// As Anthropic streams it: the signature just before the stop, here the gateway's mark (the vendor signs nothing;
		// clients replay a thinking block with an empty signature as text, or not at all).
		expect(await deltas(thinking())).toEqual([{ type: 'thinking_delta', thinking: 'Hmm.' }, { type: 'signature_delta', signature: UNSIGNED_THINKING_TAG }])
		expect(await deltas(thinking('sig_1'))).toEqual([{ type: 'thinking_delta', thinking: 'Hmm.' }, { type: 'signature_delta', signature: 'sig_1' }])
	})

	it('should answer ping with an event: ping frame', async () => {
		const frames = await encode([{ type: 'ping' }, ...openaiLike])
		expect(frames[0]).toEqual({ event: 'ping', data: '{"type":"ping"}' })
		expect(frames[1].event).toBe('message_start')
	})

	it('should end with an event: error frame after closing the open block', async () => {
		const frames = await encode([
			{ type: 'start', id: 'msg_1', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'par' },
			{ type: 'error', error: new GatewayError('overloaded', 'Overloaded') },
			{ type: 'text_delta', index: 0, text: 'never sent' },
		])
		expect(frames.map((f) => f.event)).toEqual([
			'message_start',
			'content_block_start',
			'content_block_delta',
			'content_block_stop',
			'error',
		])
		expect(formatSse(frames.at(-1)!)).toBe(
			'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
		)
	})

	it('should end with an error frame when the events stop without finish', async () => {
		const frames = await encode(openaiLike.slice(0, 3))
		expect(frames.map((f) => f.event)).toEqual([
			'message_start',
			'content_block_start',
			'content_block_delta',
			'content_block_stop',
			'error',
		])
	})

	it('should renumber blocks contiguously and skip a text block that never got text', async () => {
		const p = payloads(
			await encode([
				{ type: 'start', id: 'msg_1', model: 'm' },
				{ type: 'block_start', index: 0, block: { kind: 'text' } },
				{ type: 'text_delta', index: 0, text: '' },
				{ type: 'block_stop', index: 0 },
				{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 't', name: 'f' } },
				{ type: 'block_stop', index: 1 },
				{ type: 'finish', reason: 'end_turn' },
			]),
		)
		expect(p.filter((x) => x.type === 'content_block_start').map((x) => x.index)).toEqual([0])
		expect(p.find((x) => x.type === 'message_delta')?.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null })
	})

	it('should carry the stop sequence and thinking tokens', async () => {
		const p = payloads(
			await encode([
				{ type: 'start', id: 'msg_1', model: 'm', usage: { input: 5 } },
				{ type: 'usage', usage: { output: 9, reasoning: 4 } },
				{ type: 'finish', reason: 'stop_sequence', stopSequence: 'END' },
			]),
		)
		expect(p[0].message).toMatchObject({ usage: { input_tokens: 5 } })
		expect(p.at(-2)).toEqual({
			type: 'message_delta',
			delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' },
			usage: { output_tokens: 9, input_tokens: 5, output_tokens_details: { thinking_tokens: 4 } },
		})
	})

	it('should round-trip: decode(encode(decode(fixture))) equals decode(fixture)', async () => {
		for (const name of ['text.sse', 'tool-use-parallel.sse', 'thinking.sse', 'usage-cache.sse', 'error-mid.sse', 'cut.sse']) {
			const events = await collect(anthropicMessages.decodeStream(fixtureFrames(name)))
			const frames = await collect(anthropicMessages.encodeStream(from(events), { model: 'claude-sonnet-4-5' }))
			const again = await collect(anthropicMessages.decodeStream(from(frames)))
			assertContract(again)
			// Usage events collapse into the one message_delta, and message_start always states the cache counters;
			// everything else must survive unchanged.
			const norm = (es: StreamEvent[]) =>
				es.filter((e) => e.type !== 'usage' && e.type !== 'error').map((e) => (e.type === 'start' ? { ...e, usage: undefined } : e))
			expect(norm(again)).toEqual(norm(events))
			if (events[0].type === 'start') expect(again[0]).toMatchObject({ usage: events[0].usage ?? {} })
			const lastUsage = (es: StreamEvent[]) => es.filter((e) => e.type === 'usage').at(-1)
			if (lastUsage(events)) expect(lastUsage(again)).toMatchObject(lastUsage(events)!)
			expect(again.at(-1)?.type).toBe(events.at(-1)!.type)
		}
	})
})

describe('content_block_delta frames written as text', () => {
	it('should be the bytes the generic frame builder writes, for every delta kind and awkward text', () => {
		const values = ['Hello', '', 'quote " backslash \\ newline \n tab \t', 'unicode ✓ 😀 \u2028 \u0000', '{"a":[1,2]}']
		for (const [type, key] of [['text_delta', 'text'], ['thinking_delta', 'thinking'], ['signature_delta', 'signature'], ['input_json_delta', 'partial_json']])
			for (const v of values)
				for (const index of [0, 7, 12345]) {
					const fast = delta(index, type!, key!, v)
					expect(fast).toEqual(frame('content_block_delta', { index, delta: { type: type!, [key!]: v } }))
					expect(JSON.parse(fast.data)).toEqual({ type: 'content_block_delta', index, delta: { type, [key!]: v } })
				}
	})
	it('should write content_block_stop, ping and message_stop as the generic builder does', async () => {
		const frames = await encode([{ type: 'ping' }, ...openaiLike])
		const byEvent = (e: string) => frames.filter((f) => f.event === e)
		expect(byEvent('ping')).toEqual([frame('ping')])
		expect(byEvent('message_stop')).toEqual([frame('message_stop')])
		expect(byEvent('content_block_stop')).toEqual([frame('content_block_stop', { index: 0 }), frame('content_block_stop', { index: 1 })])
	})
})
