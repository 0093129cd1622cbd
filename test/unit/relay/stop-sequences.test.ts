import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../src/core/events'
import type { ChatRequest, ChatResponse } from '../../../src/core/ir'
import { gemini } from '../../../src/protocols/gemini'
import { openaiChat } from '../../../src/protocols/openai-chat'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { cutAnswer, splitStops, StopCutter } from '../../../src/relay/stop-sequences'

/** Runs events through a cutter as one chunk each, as the relay does, closing it once it is done. */
function run(stops: string[], events: StreamEvent[]): { out: StreamEvent[]; done: boolean } {
	const cutter = new StopCutter(stops)
	const out: StreamEvent[] = []
	for (const e of events) {
		cutter.push(e, out)
		if (cutter.done) break
	}
	cutter.end(out)
	return { out, done: cutter.done }
}

const text = (out: StreamEvent[]) => out.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('')

describe('splitStops', () => {
	const req = (stop?: string[]): ChatRequest => ({ model: 'm', messages: [], stream: false, ...(stop && { stop }) })

	it('should send each vendor what it takes and hold the rest', () => {
		const six = ['a', 'b', 'c', 'd', 'e', 'f']
		expect(splitStops(req(six), openaiChat, 'gpt-4o')).toEqual({ ir: req(six.slice(0, 4)), held: ['e', 'f'] })
		expect(splitStops(req(six), gemini, 'gemini-2.5-flash').held).toEqual(['f'])
		// OpenAI's reasoning models take no `stop` at all.
		const o3 = splitStops(req(['a']), openaiChat, 'o3')
		expect(o3.ir.stop).toBeUndefined()
		expect(o3.held).toEqual(['a'])
	})

	it('should leave a request whose sequences fit as it is', () => {
		const r = req(['a', 'b'])
		expect(splitStops(r, openaiChat, 'gpt-4o').ir).toBe(r)
		expect(splitStops(req(['a', 'b', 'c', 'd', 'e', 'f']), anthropicMessages, 'claude').held).toEqual([])
	})
})

describe('StopCutter', () => {
	it('should hold back only an end that could begin a sequence, and cut a match split across deltas', () => {
		const { out, done } = run(
			['STOP'],
			[
				{ type: 'block_start', index: 0, block: { kind: 'text' } },
				{ type: 'text_delta', index: 0, text: 'one two ST' },
				{ type: 'text_delta', index: 0, text: 'OP three' },
				{ type: 'block_stop', index: 0 },
				{ type: 'finish', reason: 'end_turn' },
			],
		)
		expect(done).toBe(true)
		expect(out).toEqual([
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'one two ' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'stop_sequence', stopSequence: 'STOP' },
		])
	})

	it('should let a held end go once the text shows it was not a sequence, and at the block end', () => {
		const { out, done } = run(
			['STOP'],
			[
				{ type: 'block_start', index: 0, block: { kind: 'text' } },
				{ type: 'text_delta', index: 0, text: 'a S' },
				{ type: 'text_delta', index: 0, text: 'TA' },
				{ type: 'text_delta', index: 0, text: 'y ST' },
				{ type: 'block_stop', index: 0 },
				{ type: 'finish', reason: 'end_turn' },
			],
		)
		expect(done).toBe(false)
		expect(out.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text)).toEqual(['a ', 'STA', 'y ', 'ST'])
		expect(out.at(-2)).toEqual({ type: 'block_stop', index: 0 })
		expect(out.at(-1)).toEqual({ type: 'finish', reason: 'end_turn' })
	})

	it('should cut at the earliest of several sequences', () => {
		const { out } = run(['three', 'two'], [{ type: 'block_start', index: 0, block: { kind: 'text' } }, { type: 'text_delta', index: 0, text: 'one two three' }])
		expect(text(out)).toBe('one ')
		expect(out.at(-1)).toEqual({ type: 'finish', reason: 'stop_sequence', stopSequence: 'two' })
	})

	it('should not cut thinking or tool call arguments', () => {
		const events: StreamEvent[] = [
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'I will STOP here' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'c1', name: 'f' } },
			{ type: 'json_delta', index: 1, json: '{"word":"STOP"}' },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'tool_use' },
		]
		const { out, done } = run(['STOP'], events)
		expect(done).toBe(false)
		expect(out).toEqual(events)
	})

	it('should pass usage after the match, before its finish', () => {
		const cutter = new StopCutter(['STOP'])
		const out: StreamEvent[] = []
		for (const e of [
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'go STOP more' },
			{ type: 'text_delta', index: 0, text: ' and more' },
			{ type: 'usage', usage: { output: 9 } },
		] satisfies StreamEvent[])
			cutter.push(e, out)
		cutter.end(out)
		expect(out.slice(1)).toEqual([
			{ type: 'text_delta', index: 0, text: 'go ' },
			{ type: 'block_stop', index: 0 },
			{ type: 'usage', usage: { output: 9 } },
			{ type: 'finish', reason: 'stop_sequence', stopSequence: 'STOP' },
		])
	})
})

describe('cutAnswer', () => {
	const answer = (): ChatResponse => ({
		id: 'r',
		model: 'm',
		content: [
			{ type: 'thinking', text: 'STOP in thought' },
			{ type: 'text', text: 'before STOP after' },
			{ type: 'tool_call', id: 'c', name: 'f', input: {} },
		],
		stopReason: 'tool_use',
		usage: { input: 1, output: 9, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
	})

	it('should keep the text before the match, drop what follows, and end with the sequence', () => {
		const r = answer()
		expect(cutAnswer(r, ['STOP'])).toBe(true)
		expect(r.content).toEqual([
			{ type: 'thinking', text: 'STOP in thought' },
			{ type: 'text', text: 'before ' },
		])
		expect(r.stopReason).toBe('stop_sequence')
		expect(r.stopSequence).toBe('STOP')
		// The vendor's usage stays: it generated the rest.
		expect(r.usage.output).toBe(9)
	})

	it('should leave an answer without a match as it is', () => {
		const r = answer()
		expect(cutAnswer(r, ['never'])).toBe(false)
		expect(r).toEqual(answer())
	})
})
