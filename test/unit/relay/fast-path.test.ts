/** The fast path's edits of relayed OpenAI chunks: removing the usage the client did not ask for. */
import { describe, expect, it } from 'bun:test'
import { stripUsage } from '../../../src/relay/fast-path'

describe('stripUsage', () => {
	it('should remove "usage":null with its comma wherever the member stands', () => {
		expect(stripUsage('{"id":"c","choices":[{"index":0}],"usage":null}')).toBe('{"id":"c","choices":[{"index":0}]}')
		expect(stripUsage('{"usage":null,"id":"c","choices":[]}')).toBe('{"id":"c","choices":[]}')
		expect(stripUsage('{"id":"c","usage":null,"choices":[]}')).toBe('{"id":"c","choices":[]}')
		expect(stripUsage('{"usage":null}')).toBe('{}')
		for (const d of ['{"id":"c","choices":[{"index":0}],"usage":null}', '{"usage":null,"id":"c","choices":[]}', '{"id":"c","usage":null,"choices":[]}'])
			expect(JSON.parse(stripUsage(d)!)).not.toHaveProperty('usage')
	})
	it('should drop the usage-only chunk and leave other chunks as they are', () => {
		expect(stripUsage('{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}')).toBeUndefined()
		const plain = '{"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}'
		expect(stripUsage(plain)).toBe(plain)
	})
	it('should remove only the first member, as a chunk has one top-level usage', () => {
		// A later "usage":null can only be inside a string (escaped quotes) or a nested object; the first is the chunk's.
		expect(stripUsage('{"usage":null,"choices":[{"delta":{"content":"say \\"usage\\":null"}}]}')).toBe('{"choices":[{"delta":{"content":"say \\"usage\\":null"}}]}')
	})
})
