import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { SseFrame } from '../../../../src/core/sse'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { assertContract, collect, fixtureFrames, from } from './helpers'

const decodeFixture = async (name: string) => {
	const events = await collect(anthropicMessages.decodeStream(fixtureFrames(name)))
	assertContract(events)
	return events
}
const withoutPings = (events: StreamEvent[]) => events.filter((e) => e.type !== 'ping')

describe('anthropicMessages.decodeStream', () => {
	it('should decode a text stream into start, one text block, usage and finish', async () => {
		const events = await decodeFixture('text.sse')
		expect(events).toEqual([
			{
				type: 'start',
				id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
				model: 'claude-sonnet-4-5',
				usage: { input: 25, output: 1 },
			},
			{ type: 'ping' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Hello' },
			{ type: 'text_delta', index: 0, text: '!' },
			{ type: 'block_stop', index: 0 },
			{ type: 'usage', usage: { input: 25, output: 15 } },
			{ type: 'finish', reason: 'end_turn' },
		])
	})

	it('should decode parallel tool calls as separate blocks with their argument fragments', async () => {
		const events = withoutPings(await decodeFixture('tool-use-parallel.sse'))
		expect(events.slice(4)).toEqual([
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' } },
			{ type: 'json_delta', index: 1, json: '{"location":' },
			{ type: 'json_delta', index: 1, json: ' "Paris"}' },
			{ type: 'block_stop', index: 1 },
			{ type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'toolu_02AbCdEfGhIjKlMnOpQrStUv', name: 'get_weather' } },
			{ type: 'json_delta', index: 2, json: '{"location": "Tok' },
			{ type: 'json_delta', index: 2, json: 'yo"}' },
			{ type: 'block_stop', index: 2 },
			{ type: 'usage', usage: { input: 472, output: 89 } },
			{ type: 'finish', reason: 'tool_use' },
		])
	})

	it('should decode thinking with its signature, redacted thinking and reasoning tokens', async () => {
		const events = withoutPings(await decodeFixture('thinking.sse'))
		expect(events.slice(1, 9)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'The user said hello.' },
			{ type: 'thinking_delta', index: 0, text: ' I should greet back.' },
			{ type: 'signature_delta', index: 0, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+ZsO4Kb2xW6==' },
			{ type: 'block_stop', index: 0 },
			{
				type: 'block_start',
				index: 1,
				block: {
					kind: 'redacted_thinking',
					data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj',
				},
			},
			{ type: 'block_stop', index: 1 },
			{ type: 'block_start', index: 2, block: { kind: 'text' } },
		])
		expect(events.find((e) => e.type === 'usage')).toEqual({
			type: 'usage',
			usage: { input: 778, output: 120, reasoning: 90 },
		})
	})

	it('should treat message_delta usage as cumulative: replace, never add (WIRE-NOTES wire §3)', async () => {
		const events = await decodeFixture('usage-cache.sse')
		const usages = events.filter((e) => e.type === 'usage')
		expect(usages.at(-1)).toEqual({ type: 'usage', usage: { input: 12, output: 42, cacheRead: 30000, cacheWrite: 1500 } })
		expect(events[0]).toMatchObject({ type: 'start', usage: { input: 12, cacheRead: 30000, cacheWrite: 1500 } })
	})

	it('should end with an upstream error after closing the open block when the stream carries an error event', async () => {
		const events = await decodeFixture('error-mid.sse')
		expect(events.slice(-2, -1)).toEqual([{ type: 'block_stop', index: 0 }])
		const last = events.at(-1)
		expect(last?.type).toBe('error')
		if (last?.type !== 'error') return
		// overloaded_error: an overload, which callers get as 503 (QA report item 9), not the gateway's own 502.
		expect([last.error.kind, last.error.status]).toEqual(['overloaded', 503])
		expect(last.error.code).toBe('overloaded_error')
		expect(last.error.message).toBe('Overloaded')
	})

	it('should end with an upstream error when the stream is cut before message_stop', async () => {
		const events = await decodeFixture('cut.sse')
		expect(events.map((e) => e.type)).toEqual(['start', 'block_start', 'json_delta', 'block_stop', 'error'])
		const last = events.at(-1)
		if (last?.type === 'error') expect(last.error.kind).toBe('upstream')
	})

	it('should read a web search as one canonical block, whole once its results came, with contiguous indexes', async () => {
		const events = await decodeFixture('server-tool.sse')
		const starts = events.filter((e) => e.type === 'block_start')
		expect(starts).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'block_start', index: 1, block: { kind: 'web_search', id: 'srvtoolu_014hJH82Qum7Td6UV8gDXThB', queries: ['weather NYC today'], sources: [{ url: 'https://example.com/weather', title: 'Weather' }] } },
			{ type: 'block_start', index: 2, block: { kind: 'text' } },
		])
		expect(events.filter((e) => e.type === 'json_delta')).toEqual([])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'end_turn' })
	})

	it('should report invalid JSON as an upstream error', async () => {
		const frames: SseFrame[] = [
			{ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1}}}' },
			{ data: '{oops' },
		]
		const events = await collect(anthropicMessages.decodeStream(from(frames)))
		expect(events.map((e) => e.type)).toEqual(['start', 'error'])
	})

	it('should synthesise one start when the upstream skipped message_start and ignore a duplicate', async () => {
		const frames: SseFrame[] = [
			{ event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}' },
			{ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_late","model":"m"}}' },
			{ event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
			{ event: 'message_stop', data: '{"type":"message_stop"}' },
		]
		const events = await collect(anthropicMessages.decodeStream(from(frames)))
		assertContract(events)
		expect(events.map((e) => e.type)).toEqual(['start', 'block_start', 'text_delta', 'block_stop', 'finish'])
	})

	it('should close an open block before the next one when the upstream interleaves blocks', async () => {
		const frames: SseFrame[] = [
			{ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1}}}' },
			{ event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}' },
			{
				event: 'content_block_start',
				data: '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}',
			},
			{
				event: 'content_block_delta',
				data: '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"late"}}',
			},
			{ event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
			{ event: 'content_block_stop', data: '{"type":"content_block_stop","index":1}' },
			{ event: 'message_stop', data: '{"type":"message_stop"}' },
		]
		const events = await collect(anthropicMessages.decodeStream(from(frames)))
		assertContract(events)
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should not read ahead: the start event is available before the stream ends', async () => {
		let released = false
		async function* slow(): AsyncGenerator<SseFrame> {
			yield { event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1}}}' }
			await new Promise<void>((resolve) => queueMicrotask(resolve))
			released = true
			yield { event: 'message_stop', data: '{"type":"message_stop"}' }
		}
		const it = anthropicMessages.decodeStream(slow())
		const first = await it.next()
		expect(first.value?.type).toBe('start')
		expect(released).toBe(false)
		await it.return(undefined)
	})
})
