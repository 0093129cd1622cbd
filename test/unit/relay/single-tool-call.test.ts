import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../src/core/events'
import type { ChatResponse } from '../../../src/core/ir'
import type { FrameDecoder } from '../../../src/protocols/stream-machine'
import { firstToolCallOnly, firstToolCallOnlyDecoder, keepsFirstToolCallOnly } from '../../../src/relay/single-tool-call'

/** A decoder that gives, for each frame, the events listed under its data. */
function scripted(script: Record<string, StreamEvent[]>): FrameDecoder {
	let done = false
	return {
		push(f, out) {
			out.push(...(script[f.data] ?? []))
			if (f.data === 'end') done = true
		},
		end() {},
		get done() {
			return done
		},
	}
}

const call = (index: number, id: string): StreamEvent[] => [
	{ type: 'block_start', index, block: { kind: 'tool_call', id, name: 'weather' } },
	{ type: 'json_delta', index, json: `{"id":"${id}"}` },
	{ type: 'block_stop', index },
]

describe('firstToolCallOnlyDecoder', () => {
	it('should drop the calls after the first and renumber the blocks after them', () => {
		const d = firstToolCallOnlyDecoder(
			scripted({
				a: [{ type: 'start', id: 'r', model: 'm' }, { type: 'block_start', index: 0, block: { kind: 'thinking' } }, { type: 'thinking_delta', index: 0, text: 'hm' }, { type: 'block_stop', index: 0 }, ...call(1, 'c1')],
				b: [...call(2, 'c2'), { type: 'block_start', index: 3, block: { kind: 'text' } }, { type: 'text_delta', index: 3, text: 'x' }, { type: 'block_stop', index: 3 }],
				end: [{ type: 'usage', usage: { output: 9 } }, { type: 'finish', reason: 'tool_use' }],
			}),
		)
		const out: StreamEvent[] = []
		for (const data of ['a', 'b', 'end']) d.push({ data }, out)
		expect(d.done).toBe(true)
		expect(out.filter((e) => e.type === 'block_start').map((e) => [e.index, e.block.kind])).toEqual([
			[0, 'thinking'],
			[1, 'tool_call'],
			[2, 'text'],
		])
		expect(out.flatMap((e) => (e.type === 'json_delta' ? [e.json] : []))).toEqual(['{"id":"c1"}'])
		expect(out.flatMap((e) => (e.type === 'text_delta' ? [[e.index, e.text]] : []))).toEqual([[2, 'x']])
		expect(out.filter((e) => e.type === 'block_stop').map((e) => e.index)).toEqual([0, 1, 2])
		expect(out.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})
})

describe('firstToolCallOnly', () => {
	it('should keep the first call of a whole answer, with its signature, and the text', () => {
		const res: ChatResponse = {
			id: 'r',
			model: 'm',
			stopReason: 'tool_use',
			usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
			content: [
				{ type: 'text', text: 'calling' },
				{ type: 'tool_call', id: 'c1', name: 'w', input: { city: 'Paris' }, signature: 'sig' },
				{ type: 'tool_call', id: 'c2', name: 'w', input: { city: 'Tokyo' } },
			],
		}
		expect(firstToolCallOnly(res).content).toEqual(res.content.slice(0, 2))
	})

	it('should apply to Gemini upstreams when parallel calls are off, only', () => {
		expect(keepsFirstToolCallOnly({ parallelToolCalls: false }, 'gemini')).toBe(true)
		expect(keepsFirstToolCallOnly({ parallelToolCalls: true }, 'gemini')).toBe(false)
		expect(keepsFirstToolCallOnly({}, 'gemini')).toBe(false)
		expect(keepsFirstToolCallOnly({ parallelToolCalls: false }, 'anthropic-messages')).toBe(false)
	})
})
