import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import { tagSignature } from '../../../../src/core/signatures'
import { decodeStream } from '../../../../src/protocols/gemini/stream'
import { checkInvariants, collect, fixtureFrames, fromArray } from './helpers'

const decodeFixture = async (name: string): Promise<StreamEvent[]> => {
	const events = await collect(decodeStream(fixtureFrames(name)))
	checkInvariants(events)
	return events
}
const withoutUsage = (events: StreamEvent[]) => events.filter((e) => e.type !== 'usage')
const lastUsage = (events: StreamEvent[]) => events.filter((e) => e.type === 'usage').at(-1)

describe('gemini decodeStream', () => {
	it('should decode a text stream (CRLF framed) into one text block', async () => {
		const events = await decodeFixture('text.sse')
		expect(withoutUsage(events)).toEqual([
			{ type: 'start', id: 'txtResp01', model: 'gemini-2.5-flash', usage: { input: 8, cacheRead: 0 } },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Hello' },
			{ type: 'text_delta', index: 0, text: ', world! How can I help?' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'end_turn' },
		])
		expect(lastUsage(events)).toEqual({ type: 'usage', usage: { input: 8, output: 9, cacheRead: 0, cacheWrite: 0, reasoning: 0 } })
	})

	it('should emit usage only when it changes', async () => {
		const events = await decodeFixture('text.sse')
		expect(events.filter((e) => e.type === 'usage')).toHaveLength(2)
	})

	it('should decode parallel function calls as separate tool_call blocks, the signature on the first', async () => {
		const events = withoutUsage(await decodeFixture('parallel-tools.sse'))
		expect(events.slice(1)).toEqual([
			{
				type: 'block_start',
				index: 0,
				block: { kind: 'tool_call', id: 'call_parResp01_0_get_weather', name: 'get_weather', signature: 'CiQBjz1rX0sigParallel+/A==' },
			},
			{ type: 'json_delta', index: 0, json: '{"city":"Paris","unit":"celsius"}' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_parResp01_1_get_weather', name: 'get_weather' } },
			{ type: 'json_delta', index: 1, json: '{"city":"London","unit":"celsius"}' },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'tool_use' },
		])
	})

	it('should decode thought parts into one thinking block signed by the following text part', async () => {
		const events = await decodeFixture('thinking.sse')
		expect(withoutUsage(events).slice(1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: '**Adding the numbers**\n\nThe user asks for 2+2.' },
			{ type: 'thinking_delta', index: 0, text: ' That is simple arithmetic.' },
			{ type: 'signature_delta', index: 0, signature: tagSignature('gemini-text', 'EpYCCpMCAXLI2nwSigThinking==') },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'text' } },
			{ type: 'text_delta', index: 1, text: '2 + 2 = 4.' },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'end_turn' },
		])
		expect(lastUsage(events)).toEqual({ type: 'usage', usage: { input: 12, output: 47, cacheRead: 0, cacheWrite: 0, reasoning: 40 } })
	})

	it('should keep a Gemini call id and its signature after a thinking block', async () => {
		const events = withoutUsage(await decodeFixture('thinking-tool.sse'))
		expect(events.slice(1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'I should look up the weather first.' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'fc-9f2k', name: 'get_weather', signature: 'Q2lRQmp6MXJYMFNpZ1Rvb2w=' } },
			{ type: 'json_delta', index: 1, json: '{"city":"Tokyo"}' },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'tool_use' },
		])
	})

	it('should turn a trailing signature on an empty text part into a signature-only thinking block', async () => {
		const events = withoutUsage(await decodeFixture('trailing-signature.sse'))
		expect(events.slice(1)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Paris is the capital' },
			{ type: 'text_delta', index: 0, text: ' of France.' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'thinking' } },
			{ type: 'signature_delta', index: 1, signature: tagSignature('gemini-text', 'VHJhaWxpbmdTaWc=') },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'end_turn' },
		])
	})

	it('should report cached tokens as cacheRead, excluded from input, and thoughts as output', async () => {
		const events = await decodeFixture('usage-cache.sse')
		expect(lastUsage(events)).toEqual({ type: 'usage', usage: { input: 50, cacheRead: 12000, cacheWrite: 0, output: 30, reasoning: 21 } })
		expect(events[0]).toMatchObject({ type: 'start', usage: { input: 50, cacheRead: 12000 } })
	})

	it('should end with an upstream error event when the stream carries an error chunk (an overload stays one)', async () => {
		const events = await decodeFixture('error-mid.sse')
		expect(withoutUsage(events).slice(1, 4)).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'Once upon a time' },
			{ type: 'block_stop', index: 0 },
		])
		const last = events.at(-1)
		expect(last?.type).toBe('error')
		if (last?.type === 'error') {
			// 503 UNAVAILABLE: an overload, which callers get as 503 (QA report item 9), not the gateway's own 502.
			expect([last.error.kind, last.error.status]).toEqual(['overloaded', 503])
			expect(last.error.message).toContain('overloaded')
			expect(last.error.code).toBe('UNAVAILABLE')
		}
		expect(events.some((e) => e.type === 'finish')).toBe(false)
	})

	it('should end with an upstream error when the stream is cut before a finishReason', async () => {
		const events = await decodeFixture('cut.sse')
		const last = events.at(-1)
		expect(last?.type).toBe('error')
		if (last?.type === 'error') expect(last.error.kind).toBe('upstream')
		expect(events.at(-2)).toEqual({ type: 'block_stop', index: 0 })
	})

	it('should finish a blocked prompt with content_filter', async () => {
		const events = await decodeFixture('blocked.sse')
		expect(events.map((e) => e.type)).toEqual(['start', 'usage', 'finish'])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'content_filter' })
	})

	it('should emit start then an error for an empty stream or a malformed chunk', async () => {
		const empty = await collect(decodeStream(fromArray([])))
		checkInvariants(empty)
		expect(empty.map((e) => e.type)).toEqual(['start', 'error'])
		const bad = await collect(decodeStream(fromArray([{ data: '{"candidates": [' }])))
		checkInvariants(bad)
		expect(bad.map((e) => e.type)).toEqual(['start', 'error'])
		// In the gateway's words, as the other decoders: the chunk is the vendor's, never quoted to the caller.
		const err = bad.at(-1)
		expect(err?.type === 'error' && err.error.message).toBe('upstream sent a malformed stream event')
	})

	it('should not open a text block for empty text parts', async () => {
		const frames = [
			{ data: JSON.stringify({ candidates: [{ content: { parts: [{ text: '' }] } }] }) },
			{ data: JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: 'f' } }] }, finishReason: 'STOP' }] }) },
		]
		const events = await collect(decodeStream(fromArray(frames)))
		checkInvariants(events)
		expect(events.filter((e) => e.type === 'block_start').map((e) => e.type === 'block_start' && e.block.kind)).toEqual(['tool_call'])
		expect(events).toContainEqual({ type: 'json_delta', index: 0, json: '{}' })
	})
})
