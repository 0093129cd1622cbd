import { describe, expect, it } from 'bun:test'
import { topLevelMembers } from '../../../src/relay/json-members'

const WANT = new Set(['usage', 'model'])

/** The wanted members as text, through the spans. */
function members(text: string, want: ReadonlySet<string> = WANT): Record<string, string> | undefined {
	const m = topLevelMembers(text, want)
	return m && Object.fromEntries([...m].map(([k, s]) => [k, text.slice(s.start, s.end)]))
}

describe('topLevelMembers', () => {
	it('should find top-level members of an OpenAI answer and skip the rest', () => {
		const body = {
			id: 'chatcmpl-1',
			object: 'chat.completion',
			created: 1,
			model: 'gpt-4o-mini',
			choices: [{ index: 0, message: { role: 'assistant', content: 'Hi "there" {[,:]} \\ usage' }, finish_reason: 'stop' }],
			usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } },
		}
		const text = JSON.stringify(body)
		expect(members(text)).toEqual({ model: '"gpt-4o-mini"', usage: JSON.stringify(body.usage) })
	})

	it('should not take a nested member for a top-level one (Anthropic tool input with a usage key)', () => {
		const body = {
			content: [{ type: 'tool_use', id: 't', name: 'f', input: { usage: { input_tokens: 999 }, model: 'x' } }],
			model: 'claude-haiku-4-5',
			usage: { input_tokens: 3, output_tokens: 4 },
		}
		expect(members(JSON.stringify(body))).toEqual({ model: '"claude-haiku-4-5"', usage: '{"input_tokens":3,"output_tokens":4}' })
		expect(members(JSON.stringify({ content: body.content }))).toEqual({})
	})

	it('should read pretty-printed text, escaped quotes and backslashes, and keys written with escapes', () => {
		const text = JSON.stringify({ a: 'x\\', b: ['"', '\\"', { c: '}' }], model: 'm', usage: 1 }, null, 2)
		expect(members(text)).toEqual({ model: '"m"', usage: '1' })
		expect(members('{"us\\u0061ge" : {"n": 1} }')).toEqual({ usage: '{"n": 1}' })
		expect(members('{"a":"\\\\","usage":null}')).toEqual({ usage: 'null' })
	})

	it('should take the last of repeated keys, as JSON.parse does', () => {
		expect(members('{"usage":1,"usage":2}')).toEqual({ usage: '2' })
	})

	it('should find scalars of every kind and an empty object', () => {
		expect(members('{"usage":-1.5e3,"model":true}')).toEqual({ usage: '-1.5e3', model: 'true' })
		expect(members('{}')).toEqual({})
		expect(members(' \n{ } \n')).toEqual({})
	})

	it('should refuse text that is not one well-formed object', () => {
		const bad = [
			'',
			'   ',
			'[]',
			'"usage"',
			'<html>Bad gateway</html>',
			'{"usage":{"a":1}', // truncated
			'{"id":"chatcmpl-1","choices":[{"message":{"content":"Hel', // cut inside a string
			'{"usage":{"a":1]}', // mismatched brackets
			'{"usage":[1,2}', // mismatched brackets
			'{"usage":}', // no value
			'{"usage" 1}', // no colon
			'{usage:1}', // unquoted key
			'{"usage":1,}x', // trailing text
			'{"usage":1} {"usage":2}', // two objects
			'{"usage":1,,"model":2}',
		]
		for (const t of bad) expect([t, topLevelMembers(t, WANT)]).toEqual([t, undefined])
	})

	it('should agree with JSON.parse on generated bodies', () => {
		// Deterministic pseudo-random bodies with nesting, escapes and the wanted keys at random depths.
		let seed = 7
		const rnd = (n: number) => {
			seed = (seed * 1103515245 + 12345) % 2147483648
			return seed % n
		}
		const strings = ['', 'a', '"', '\\', '{', '}', '[', ']', ',', ':', 'usage', '"usage":', 'é', '\n']
		const value = (depth: number): unknown => {
			const k = rnd(depth > 3 ? 4 : 7)
			if (k === 0) return rnd(1000) - 500
			if (k === 1) return strings[rnd(strings.length)]! + strings[rnd(strings.length)]!
			if (k === 2) return rnd(2) === 0
			if (k === 3) return null
			if (k === 4) return Array.from({ length: rnd(4) }, () => value(depth + 1))
			return Object.fromEntries(Array.from({ length: rnd(4) }, () => [rnd(3) === 0 ? 'usage' : strings[rnd(strings.length)]!, value(depth + 1)]))
		}
		for (let n = 0; n < 300; n++) {
			const body: Record<string, unknown> = {}
			for (let m = rnd(5); m > 0; m--) body[rnd(3) === 0 ? 'usage' : `k${rnd(9)}`] = value(0)
			const text = JSON.stringify(body, null, rnd(2) ? 1 : undefined)
			const found = topLevelMembers(text, new Set(['usage']))
			expect(found).toBeDefined()
			const u = found!.get('usage')
			expect(u ? JSON.parse(text.slice(u.start, u.end)) : undefined).toEqual(body.usage)
		}
	})
})
