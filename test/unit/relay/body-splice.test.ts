import { describe, expect, it } from 'bun:test'
import { bodyText } from '../../../src/relay/fast-path'

/** The spliced text, checked to be the JSON of `out` (undefined when the splice declines). */
const splice = (raw: string, out: (body: Record<string, unknown>) => Record<string, unknown>) => {
	const body = JSON.parse(raw) as Record<string, unknown>
	const o = out(body)
	const spliced = bodyText(raw, body, o)
	const text = spliced === undefined ? undefined : String(spliced)
	if (text !== undefined) expect(JSON.parse(text)).toEqual(o)
	return text
}

describe('bodyText (the fast path forwards the client body text)', () => {
	const raw = '{"model":"m","messages":[{"role":"user","content":"a } b"}],"stream":true}\n'
	it('should return the text itself when nothing changed', () => expect(splice(raw, (b) => b)).toBe(raw))
	it('should append keys the client did not send, keeping its bytes before them', () => {
		const text = splice(raw, (b) => ({ ...b, stream_options: { include_usage: true }, max_tokens: 5 }))
		expect(text).toBe('{"model":"m","messages":[{"role":"user","content":"a } b"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":5}\n')
	})
	it('should rewrite a member the client sent where it stands, keeping the rest of its bytes', () => {
		expect(splice(raw, (b) => ({ ...b, model: 'other' }))).toBe('{"model":"other","messages":[{"role":"user","content":"a } b"}],"stream":true}\n')
		const spaced = '{\n  "max_tokens" : 32000,\n  "model": "m",\n  "stream_options": {"include_usage": false},\n  "messages": [{"role":"user","content":"\\"max_tokens\\": 1"}]\n}'
		const text = splice(spaced, (b) => ({ ...b, max_tokens: 4096, stream_options: { include_usage: true }, model: 'up-\u00e9"' }))
		expect(text).toBe('{\n  "max_tokens" : 4096,\n  "model": "up-\u00e9\\"",\n  "stream_options": {"include_usage":true},\n  "messages": [{"role":"user","content":"\\"max_tokens\\": 1"}]\n}')
	})
	it('should rewrite and append together', () => {
		expect(splice(raw, (b) => ({ ...b, model: 'o', max_tokens: 7 }))).toBe('{"model":"o","messages":[{"role":"user","content":"a } b"}],"stream":true,"max_tokens":7}\n')
	})
	it('should decline when a change removes a key, or replaces one the text holds twice (parsers differ on which counts)', () => {
		expect(splice(raw, ({ stream: _, ...rest }) => rest)).toBeUndefined()
		expect(splice('{"max_tokens":100000,"model":"m","max_tokens":10}', (b) => ({ ...b, max_tokens: 5 }))).toBeUndefined()
		// A repeat of a key it does not change is left as the client sent it.
		expect(splice('{"x":1,"model":"m","x":2}', (b) => ({ ...b, model: 'o' }))).toBe('{"x":1,"model":"o","x":2}')
	})
	it('should give the JSON of the changed body for any body and any change (randomised)', () => {
		let seed = 7
		const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n)
		const values = [0, -1.5, 'a', '', '"}', '\\', 'é', null, true, [], {}, [1, { a: '}' }], { model: 'inner', max_tokens: 1 }]
		const keys = ['model', 'max_tokens', 'stream_options', 'thinking', 'messages', 'k']
		for (let n = 0; n < 300; n++) {
			const body: Record<string, unknown> = {}
			for (const k of keys) if (rnd(2)) body[k] = values[rnd(values.length)]
			const text = JSON.stringify(body, null, rnd(2) ? 2 : undefined)
			const change: Record<string, unknown> = {}
			for (const k of keys) if (rnd(3) === 0) change[k] = values[rnd(values.length)]
			const out = { ...body, ...change }
			const spliced = bodyText(text, body, out)
			expect(spliced).toBeDefined()
			expect(JSON.parse(String(spliced!))).toEqual(out)
		}
	})
	it('should add to an empty object without a leading comma', () => {
		expect(splice('{ \n }', (b) => ({ ...b, a: 1 }))).toBe('{ \n "a":1}')
	})
})
