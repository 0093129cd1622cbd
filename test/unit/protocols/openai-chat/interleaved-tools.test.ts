/**
 * Parallel tool calls whose argument deltas an OpenAI-compatible upstream interleaves by `tool_calls[].index`
 * (0, 1, 0, 1…), which OpenAI's chunk format allows (QA report item 1: converted streams failed with "upstream
 * interleaved tool-call deltas", Gemini clients got `args: {}`). The canonical stream must still present each call as
 * one whole block, in call order; calls sent one after the other must stream with no holding back.
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import { feedJson, jsonProgress } from '../../../../src/protocols/openai-chat/json-progress'
import { decodeStream, streamDecoder } from '../../../../src/protocols/openai-chat/stream-decode'
import { streamEncoder as geminiEncoder } from '../../../../src/protocols/gemini/stream-encode'
import { collect, framesOf } from './helpers'

const chunk = (delta: object, finish: string | null = null) => JSON.stringify({ id: 'chatcmpl-i', model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })
const call = (index: number, id: string, name: string, args = '') => chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] })
const args = (index: number, fragment: string) => chunk({ tool_calls: [{ index, function: { arguments: fragment } }] })

/** The calls the events describe, arguments joined per block, in block order. */
function callsOf(events: StreamEvent[]) {
	const calls: Array<{ index: number; id: string; name: string; json: string }> = []
	for (const e of events) {
		if (e.type === 'block_start' && e.block.kind === 'tool_call') calls.push({ index: e.index, id: e.block.id, name: e.block.name, json: '' })
		if (e.type === 'json_delta') calls.find((c) => c.index === e.index)!.json += e.json
	}
	return calls.map(({ id, name, json }) => ({ id, name, args: JSON.parse(json) }))
}

/** Every block opens, gets its deltas and closes before the next one opens, with indexes 0, 1, 2… */
function expectWholeBlocks(events: StreamEvent[]) {
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
		} else if (e.type === 'json_delta' || e.type === 'text_delta') expect(e.index).toBe(open as number)
	}
	expect(open).toBeUndefined()
}

/** The stream the QA mock sent: both calls start, then their fragments alternate. */
const INTERLEAVED = [
	chunk({ role: 'assistant', content: null }),
	call(0, 'call_a', 'get_weather'),
	call(1, 'call_b', 'get_time'),
	args(0, '{"city":'),
	args(1, '{"timezone":'),
	args(0, ' "Paris"'),
	args(1, ' "Tokyo"'),
	args(0, '}'),
	args(1, '}'),
	chunk({}, 'tool_calls'),
	'[DONE]',
]

describe('openai-chat decodeStream, interleaved parallel tool calls', () => {
	it('should give each call its own whole block with its full arguments, in call order', async () => {
		const events = await collect(decodeStream(framesOf(INTERLEAVED)))
		expectWholeBlocks(events)
		expect(events.some((e) => e.type === 'error')).toBe(false)
		expect(callsOf(events)).toEqual([
			{ id: 'call_a', name: 'get_weather', args: { city: 'Paris' } },
			{ id: 'call_b', name: 'get_time', args: { timezone: 'Tokyo' } },
		])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should stream the first call live and release the held one as soon as the first call is whole', () => {
		const d = streamDecoder()
		const step = (data: string) => {
			const out: StreamEvent[] = []
			d.push({ data }, out)
			return out
		}
		step(INTERLEAVED[0]!)
		expect(step(INTERLEAVED[1]!)).toEqual([{ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'call_a', name: 'get_weather' } }])
		// Call 1 starts while call 0's object is still open: held, nothing emitted.
		expect(step(INTERLEAVED[2]!)).toEqual([])
		expect(step(INTERLEAVED[3]!)).toEqual([{ type: 'json_delta', index: 0, json: '{"city":' }])
		expect(step(INTERLEAVED[4]!)).toEqual([])
		expect(step(INTERLEAVED[5]!)).toEqual([{ type: 'json_delta', index: 0, json: ' "Paris"' }])
		expect(step(INTERLEAVED[6]!)).toEqual([])
		// Call 0's object closes: it ends, call 1 opens with what was held and stays open for the rest.
		expect(step(INTERLEAVED[7]!)).toEqual([
			{ type: 'json_delta', index: 0, json: '}' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_b', name: 'get_time' } },
			{ type: 'json_delta', index: 1, json: '{"timezone": "Tokyo"' },
		])
		expect(step(INTERLEAVED[8]!)).toEqual([{ type: 'json_delta', index: 1, json: '}' }])
	})

	it('should not hold back calls that arrive one after the other', () => {
		const d = streamDecoder()
		const emitted: StreamEvent[][] = []
		for (const data of [call(0, 'a', 'f'), args(0, '{"q":'), args(0, '1}'), call(1, 'b', 'g'), args(1, '{"r":'), args(1, '2}')]) {
			const out: StreamEvent[] = []
			d.push({ data }, out)
			emitted.push(out)
		}
		// Every fragment goes out in the step that brought it.
		expect(emitted.map((out) => out.filter((e) => e.type === 'json_delta').map((e) => (e.type === 'json_delta' ? e.json : '')))).toEqual([[], ['{"q":'], ['1}'], [], ['{"r":'], ['2}']])
		expect(emitted[3]).toEqual([
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'b', name: 'g' } },
		])
	})

	it('should emit held calls whole at finish_reason when the first call never closes its object', async () => {
		const events = await collect(decodeStream(framesOf([call(0, 'a', 'f', '{"x":'), call(1, 'b', 'g', '{"y":'), args(1, '2}'), args(0, '1'), chunk({}, 'tool_calls'), '[DONE]'])))
		expectWholeBlocks(events)
		const json = events.filter((e) => e.type === 'json_delta').map((e) => (e.type === 'json_delta' ? [e.index, e.json] : []))
		expect(json).toEqual([
			[0, '{"x":'],
			[0, '1'],
			[1, '{"y":2}'],
		])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('should handle three calls interleaved, including two starting in one chunk, with braces inside strings', async () => {
		const both = chunk({
			tool_calls: [
				{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"s":"}' } },
				{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{"t":' } },
			],
		})
		const frames = [both, call(2, 'c', 'h', '{"u":3'), args(1, '[1,{"v":"\\""}]'), args(0, '\\"{"}'), args(2, '}'), args(1, '}'), chunk({}, 'tool_calls'), '[DONE]']
		const events = await collect(decodeStream(framesOf(frames)))
		expectWholeBlocks(events)
		expect(callsOf(events)).toEqual([
			{ id: 'a', name: 'f', args: { s: '}"{' } },
			{ id: 'b', name: 'g', args: { t: [1, { v: '"' }] } },
			{ id: 'c', name: 'h', args: { u: 3 } },
		])
	})

	it('should flush held calls before text that follows them', async () => {
		const events = await collect(decodeStream(framesOf([call(0, 'a', 'f', '{"x":'), call(1, 'b', 'g', '{}'), chunk({ content: 'done' }), chunk({}, 'stop'), '[DONE]'])))
		expectWholeBlocks(events)
		expect(events.filter((e) => e.type === 'block_start').map((e) => (e.type === 'block_start' ? e.block.kind : ''))).toEqual(['tool_call', 'tool_call', 'text'])
	})

	it('should still fail rather than corrupt a call whose arguments resume after text came between', async () => {
		const events = await collect(decodeStream(framesOf([call(0, 'a', 'f', '{"x":1}'), chunk({ content: 'hi' }), args(0, ', "y": 2}'), '[DONE]'])))
		expectWholeBlocks(events)
		expect(events.at(-1)).toMatchObject({ type: 'error', error: { kind: 'upstream' } })
	})

	it('should give a Gemini client each functionCall with its real arguments', () => {
		const d = streamDecoder()
		const enc = geminiEncoder({ model: 'gpt-4o' })
		const events: StreamEvent[] = []
		for (const data of INTERLEAVED) d.push({ data }, events)
		d.end(events)
		const frames: Array<{ data: string }> = []
		for (const e of events) enc.push(e, frames)
		const parts = frames.flatMap((f) => JSON.parse(f.data).candidates?.[0]?.content?.parts ?? [])
		expect(parts.filter((p: { functionCall?: unknown }) => p.functionCall).map((p: { functionCall: { name: string; args: unknown } }) => [p.functionCall.name, p.functionCall.args])).toEqual([
			['get_weather', { city: 'Paris' }],
			['get_time', { timezone: 'Tokyo' }],
		])
		expect(frames.some((f) => f.data.includes('"error"'))).toBe(false)
	})
})

describe('feedJson', () => {
	it('should tell when a streamed object closes, ignoring brackets and escaped quotes inside strings', () => {
		const p = jsonProgress()
		expect(feedJson(p, '')).toBe(false)
		expect(feedJson(p, '{"a": "x}\\"')).toBe(false)
		expect(feedJson(p, ']" , "b": [1, {}')).toBe(false)
		expect(feedJson(p, ']}')).toBe(true)
		expect(feedJson(jsonProgress(), '{}')).toBe(true)
		expect(feedJson(jsonProgress(), '"just a string"')).toBe(false)
	})
})
