import { describe, expect, it } from 'bun:test'
import { jsonLines } from '../../../src/lib/json-lines'

describe('jsonLines', () => {
	it('should give each non-blank line its value and 1-based number, skipping lines that are not JSON', () => {
		expect(jsonLines('{"a":1}\n\n  \nnope\n[2]\r\n')).toEqual([
			{ n: 1, value: { a: 1 } },
			{ n: 5, value: [2] },
		])
	})

	it('should throw what bad makes of the first line that is not JSON, when given', () => {
		expect(() => jsonLines('{"a":1}\n{"b":', (n) => new Error(`line ${n}`))).toThrow('line 2')
		expect(jsonLines('', () => new Error('never'))).toEqual([])
	})
})
