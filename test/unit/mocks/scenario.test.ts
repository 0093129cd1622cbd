import { describe, expect, it } from 'bun:test'

import { argKeyOf, plan, resultText, type Conversation } from '../../mocks/shared/scenario'
import { countWords, fragments, splitPieces, stableId, vector } from '../../mocks/shared/text'

const conv = (over: Partial<Conversation> = {}): Conversation => ({
	inputTexts: [over.lastUserText ?? 'hi there'],
	images: 0,
	lastUserText: 'hi there',
	lastUserImages: 0,
	tools: [],
	stop: [],
	thinking: false,
	...over,
})

describe('countWords', () => {
	it('should count whitespace-separated words', () => {
		expect(countWords('Hello! You said:  hi\nthere\t')).toBe(5)
		expect(countWords('')).toBe(0)
		expect(countWords('   ')).toBe(0)
	})
})

describe('text helpers', () => {
	it('should split text into pieces that join back to it', () => {
		expect(splitPieces('a b  c')).toEqual(['a', ' b', ' ', ' c'])
		expect(splitPieces('a b  c').join('')).toBe('a b  c')
		expect(splitPieces('')).toEqual([])
	})

	it('should split arguments into non-empty fragments', () => {
		const f = fragments('{"city":"Paris"}', 3)
		expect(f.length).toBe(3)
		expect(f.join('')).toBe('{"city":"Paris"}')
		expect(fragments('x', 3)).toEqual(['x'])
	})

	it('should derive the same id and vector from the same seed', () => {
		expect(stableId('call_', 'a')).toBe(stableId('call_', 'a'))
		expect(stableId('call_', 'a')).not.toBe(stableId('call_', 'b'))
		expect(stableId('call_', 'a')).toHaveLength(29)
		const v = vector('hello', 8)
		expect(v).toEqual(vector('hello', 8))
		expect(Math.abs(v.reduce((n, x) => n + x * x, 0) - 1)).toBeLessThan(1e-4)
	})
})

describe('plan', () => {
	it('should echo the last user text and count words as tokens', () => {
		const p = plan(conv({ inputTexts: ['be brief', 'hi there'] }))
		expect(p.text).toBe('Hello! You said: hi there')
		expect(p.finish).toBe('stop')
		expect(p.usage).toEqual({ input: 4, output: 5, reasoning: 0, cached: 0 })
	})

	it('should summarise tool results instead when the last turn is tool results', () => {
		const p = plan(conv({ toolResults: ['sunny', '22C'] }))
		expect(p.text).toBe('Tool results: sunny; 22C')
	})

	it('should call the first and second tool with Paris and Tokyo on #tools', () => {
		const p = plan(conv({ lastUserText: 'weather? #tools', tools: [{ name: 'a', argKey: 'q' }, { name: 'b', argKey: 'city' }] }))
		expect(p.finish).toBe('tool_calls')
		expect(p.calls.map((c) => [c.name, c.json])).toEqual([
			['a', '{"q":"Paris"}'],
			['b', '{"city":"Tokyo"}'],
		])
		expect(p.usage.output).toBe(4)
	})

	it('should call the only tool twice and ignore #tools without tools', () => {
		expect(plan(conv({ lastUserText: '#tools', tools: [{ name: 'a', argKey: 'city' }] })).calls.map((c) => c.name)).toEqual(['a', 'a'])
		expect(plan(conv({ lastUserText: '#tools' })).calls).toEqual([])
	})

	it('should think about the last user text and count it as reasoning', () => {
		const p = plan(conv({ thinking: true }))
		expect(p.thinking).toBe('Let me think about hi there.')
		expect(p.usage.reasoning).toBe(6)
		expect(p.usage.output).toBe(11)
	})

	it('should stop at the output cap on #length', () => {
		expect(plan(conv({ lastUserText: 'go #length' })).text.split(' ')).toHaveLength(5)
		const p = plan(conv({ lastUserText: 'go #length', maxTokens: 12 }))
		expect(p.text).toBe('Hello! You said: go #length more more more more more more more')
		expect(p.finish).toBe('length')
		expect(p.usage.output).toBe(12)
	})

	it('should cut before a stop sequence and report it', () => {
		const p = plan(conv({ lastUserText: 'count #stop', stop: ['STOP'] }))
		expect(p.text).toBe('Hello! You said: count #stop one two ')
		expect(p.finish).toBe('stop_sequence')
		expect(p.stopSequence).toBe('STOP')
		expect(plan(conv({ lastUserText: 'count #stop' })).text).toBe('Hello! You said: count #stop one two STOP three')
	})

	it('should announce images and bill 85 tokens each', () => {
		const p = plan(conv({ images: 2, lastUserImages: 2 }))
		expect(p.text).toBe('I see 2 images. Hello! You said: hi there')
		expect(p.usage.input).toBe(2 + 170)
		expect(plan(conv({ images: 1, lastUserImages: 1 })).text.startsWith('I see 1 image. ')).toBe(true)
	})

	it('should report 10 cached tokens when #cache appears anywhere', () => {
		const p = plan(conv({ inputTexts: ['#cache ' + 'w '.repeat(20), 'hi'], lastUserText: 'hi' }))
		expect(p.usage.cached).toBe(10)
		expect(p.usage.input).toBe(22)
	})
})

describe('argKeyOf and resultText', () => {
	it('should pick the first string property, else city', () => {
		expect(argKeyOf({ properties: { n: { type: 'number' }, q: { type: 'string' } } })).toBe('q')
		expect(argKeyOf({ properties: { q: { type: 'STRING' } } })).toBe('q')
		expect(argKeyOf(undefined)).toBe('city')
	})

	it('should unwrap a lone string value and stringify the rest', () => {
		expect(resultText({ result: 'sunny' })).toBe('sunny')
		expect(resultText({ a: 1 })).toBe('{"a":1}')
		expect(resultText('x')).toBe('x')
	})
})
