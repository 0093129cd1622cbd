import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import { decodeStream } from '../../../../src/protocols/openai-chat/stream-decode'
import { collect, fixtureFrames, framesOf } from './helpers'

const decode = (name: string) => collect(decodeStream(fixtureFrames(name)))

/** Checks the block discipline every decoder owes its consumers: one start first, nested blocks, fresh indexes. */
function assertWellFormed(events: StreamEvent[]) {
	expect(events[0].type).toBe('start')
	expect(events.filter((e) => e.type === 'start')).toHaveLength(1)
	let open: number | undefined
	let next = 0
	for (const e of events) {
		if (e.type === 'block_start') {
			expect(open).toBeUndefined()
			expect(e.index).toBe(next++)
			open = e.index
		} else if (e.type === 'block_stop') {
			expect(e.index).toBe(open as number)
			open = undefined
		} else if (e.type === 'text_delta' || e.type === 'thinking_delta' || e.type === 'signature_delta' || e.type === 'json_delta') {
			expect(e.index).toBe(open as number)
		}
	}
	expect(open).toBeUndefined()
	const last = events[events.length - 1]
	expect(last.type === 'finish' || last.type === 'error').toBe(true)
	const finishAt = events.findIndex((e) => e.type === 'finish')
	if (finishAt >= 0) expect(events.slice(finishAt + 1)).toEqual([])
}

describe('openai-chat decodeStream', () => {
	it('should decode a text stream with cached usage before finish', async () => {
		const events = await decode('text.sse')
		assertWellFormed(events)
		expect(events).toEqual([
			{ type: 'start', id: 'chatcmpl-Bx1text', model: 'gpt-4o-mini-2024-07-18', created: 1767225600 },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Hello' },
			{ type: 'text_delta', index: 0, text: ', world!' },
			{ type: 'block_stop', index: 0 },
			{ type: 'usage', usage: { input: 176, output: 5, cacheRead: 1024, cacheWrite: 0, reasoning: 0 } },
			{ type: 'finish', reason: 'end_turn' },
		])
	})

	it('should decode parallel tool calls into one block per call index', async () => {
		const events = await decode('parallel-tools.sse')
		assertWellFormed(events)
		expect(events.slice(1, -2)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'call_paris', name: 'get_weather' } },
			{ type: 'json_delta', index: 0, json: '{"city":' },
			{ type: 'json_delta', index: 0, json: ' "Paris"}' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_tokyo', name: 'get_weather' } },
			{ type: 'json_delta', index: 1, json: '{"city": "Tokyo"}' },
			{ type: 'block_stop', index: 1 },
		])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should decode DeepSeek reasoning_content as a thinking block before the text block', async () => {
		const events = await decode('reasoning-deepseek.sse')
		assertWellFormed(events)
		expect(events.slice(1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'The user asks 9.11 vs 9.8.' },
			{ type: 'thinking_delta', index: 0, text: ' 9.8 is larger.' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'text' } },
			{ type: 'text_delta', index: 1, text: '9.8 is larger.' },
			{ type: 'block_stop', index: 1 },
			{ type: 'usage', usage: { input: 4, output: 30, cacheRead: 16, cacheWrite: 0, reasoning: 22 } },
			{ type: 'finish', reason: 'end_turn' },
		])
	})

	it('should keep thinking signatures and encrypted reasoning from reasoning_details without doubling the text', async () => {
		const events = await decode('reasoning-signature.sse')
		assertWellFormed(events)
		expect(events.slice(1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'Need the weather.' },
			{ type: 'signature_delta', index: 0, signature: 'EqQBCkgIBxABGAIiQL2sig' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'redacted_thinking', data: 'RWNyeXB0ZWQ=' } },
			{ type: 'block_stop', index: 1 },
			{ type: 'block_start', index: 2, block: { kind: 'text' } },
			{ type: 'text_delta', index: 2, text: 'Checking.' },
			{ type: 'block_stop', index: 2 },
			{ type: 'block_start', index: 3, block: { kind: 'tool_call', id: 'toolu_01A', name: 'get_weather' } },
			{ type: 'json_delta', index: 3, json: '{"city":"Oslo"}' },
			{ type: 'block_stop', index: 3 },
			{ type: 'usage', usage: { input: 500, output: 120, cacheRead: 2000, cacheWrite: 500, reasoning: 60 } },
			{ type: 'finish', reason: 'tool_use' },
		])
	})

	it('should end with an upstream error after closing the open block when an error chunk arrives mid-stream', async () => {
		const events = await decode('error-mid.sse')
		assertWellFormed(events)
		expect(events.slice(1, -1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Partial' },
			{ type: 'block_stop', index: 0 },
		])
		const last = events.at(-1)
		if (last?.type !== 'error') throw new Error('expected an error event')
		expect(last.error.kind).toBe('upstream')
		expect(last.error.message).toBe('The server had an error while processing your request.')
		expect(last.error.code).toBe('server_error')
	})

	it('should end a cut stream (no finish_reason, no [DONE]) with an upstream error, not a finish', async () => {
		const events = await decode('cut.sse')
		assertWellFormed(events)
		expect(events.some((e) => e.type === 'finish')).toBe(false)
		expect(events.at(-2)).toEqual({ type: 'block_stop', index: 1 })
		expect(events.at(-1)).toMatchObject({ type: 'error', error: { kind: 'upstream' } })
	})

	it('should emit start then error for an empty body', async () => {
		const events = await collect(decodeStream(framesOf([])))
		expect(events.map((e) => e.type)).toEqual(['start', 'error'])
	})

	it('should emit an error for a malformed chunk', async () => {
		const events = await collect(decodeStream(framesOf(['{"id":"chatcmpl-1","choices":[]}', '{not json'])))
		expect(events.map((e) => e.type)).toEqual(['start', 'error'])
	})

	it('should accept a body that ends after finish_reason without [DONE]', async () => {
		const chunk = (delta: object, finish: string | null = null) => JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: finish }] })
		const events = await collect(decodeStream(framesOf([chunk({ content: 'hi' }), chunk({}, 'length')])))
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'max_tokens' })
	})

	it('should not open a text block for empty or null content', async () => {
		const chunk = (delta: object, finish: string | null = null) => JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: finish }] })
		const events = await collect(
			decodeStream(framesOf([chunk({ role: 'assistant', content: '' }), chunk({ content: null }), chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }), chunk({}, 'stop'), '[DONE]'])),
		)
		expect(events.filter((e) => e.type === 'block_start').map((e) => (e.type === 'block_start' ? e.block.kind : ''))).toEqual(['tool_call'])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should unpack thought signatures carried in streamed tool-call ids', async () => {
		const frames = [JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_9__ts_c2ln', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: 'tool_calls' }] }), '[DONE]']
		const events = await collect(decodeStream(framesOf(frames)))
		expect(events[1]).toEqual({ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'call_9', name: 'f', signature: 'c2ln' } })
	})

	it('should present interleaved tool-call deltas as whole blocks in call order, not fail (QA: converted streams broke)', async () => {
		const tc = (index: number, extra: object) => JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index, ...extra }] }, finish_reason: null }] })
		const events = await collect(
			decodeStream(
				framesOf([
					tc(0, { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":' } }),
					tc(1, { id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }),
					tc(0, { function: { arguments: '1}' } }),
					'[DONE]',
				]),
			),
		)
		assertWellFormed(events)
		expect(events.slice(1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'a', name: 'f' } },
			{ type: 'json_delta', index: 0, json: '{"x":' },
			{ type: 'json_delta', index: 0, json: '1}' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'b', name: 'g' } },
			{ type: 'json_delta', index: 1, json: '{}' },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'tool_use' },
		])
	})

	it('should decode an error frame named by event: error', async () => {
		const events = await collect(decodeStream((async function* () { yield { event: 'error', data: '{"error":{"message":"overloaded"}}' } })()))
		expect(events.at(-1)).toMatchObject({ type: 'error', error: { message: 'overloaded' } })
	})
})
