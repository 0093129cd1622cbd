import { describe, expect, it } from 'bun:test'
import { withAddedKeys } from '../../../src/relay/chat'

/** The spliced text, checked to be the JSON of `out` (undefined when the splice declines). */
const splice = (raw: string, out: (body: Record<string, unknown>) => Record<string, unknown>) => {
	const body = JSON.parse(raw) as Record<string, unknown>
	const o = out(body)
	const text = withAddedKeys(raw, body, o)
	if (text !== undefined) expect(JSON.parse(text)).toEqual(o)
	return text
}

describe('withAddedKeys (the fast path forwards the client body text)', () => {
	const raw = '{"model":"m","messages":[{"role":"user","content":"a } b"}],"stream":true}\n'
	it('should return the text itself when nothing changed', () => expect(splice(raw, (b) => b)).toBe(raw))
	it('should append keys the client did not send, keeping its bytes before them', () => {
		const text = splice(raw, (b) => ({ ...b, stream_options: { include_usage: true }, max_tokens: 5 }))
		expect(text).toBe('{"model":"m","messages":[{"role":"user","content":"a } b"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":5}\n')
	})
	it('should decline when a change replaces or removes a key the client sent (no duplicate keys)', () => {
		expect(splice(raw, (b) => ({ ...b, model: 'other' }))).toBeUndefined()
		expect(splice(raw, ({ stream: _, ...rest }) => rest)).toBeUndefined()
	})
	it('should add to an empty object without a leading comma', () => {
		expect(splice('{ \n }', (b) => ({ ...b, a: 1 }))).toBe('{ \n "a":1}')
	})
})
