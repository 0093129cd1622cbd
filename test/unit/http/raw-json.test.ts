import { describe, expect, it } from 'bun:test'
import { mayHold } from '../../../src/http/raw-json'

describe('mayHold', () => {
	it('should find a word written as is', () => {
		expect(mayHold('{"file":{"file_id":"file-1"}}', 'file_id')).toBe(true)
		expect(mayHold('{"messages":[{"role":"user","content":"hi"}]}', 'file_id')).toBe(false)
	})

	it('should not be walked around by spelling the word with escapes, which parse to it', () => {
		for (const raw of ['{"file\\u005fid":"file-1"}', '{"\\u0066ile_id":"file-1"}', '{"FILE\\u005Fid":1}']) {
			expect(Object.keys(JSON.parse(raw.replace('FILE', 'file')))).toEqual(['file_id'])
			expect(mayHold(raw, 'file_id')).toBe(true)
		}
	})

	it('should take escapes of non-ASCII and control characters, which spell no ASCII word, as nothing', () => {
		expect(mayHold('{"content":"caf\\u00e9 \\u4e2d\\u0007 \\\\users"}', 'file_id')).toBe(false)
	})
})
