import { describe, expect, it } from 'bun:test'
import { codePoints, codePointToUtf16, utf8Length, utf8ToUtf16 } from '../../../src/core/citations'
import { decodeAnnotations, urlCitation } from '../../../src/protocols/openai-responses/web-search'

// OpenAI's url_citation indices count characters (code points); the canonical spans count UTF-16 units.
const TEXT = 'café 😀 東京 🎉 end'

describe('citation offsets', () => {
	it('should count code points, a surrogate pair as one and a lone surrogate as one', () => {
		expect([codePoints(''), codePoints('abc'), codePoints(TEXT), codePoints('a\ud800b')]).toEqual([0, 3, [...TEXT].length, 3])
	})

	it('should map every code point offset to the UTF-16 offset of the same character, and past the end one unit each', () => {
		const chars = [...TEXT]
		for (let i = 0; i <= chars.length; i++) expect(codePointToUtf16(TEXT, i)).toBe(chars.slice(0, i).join('').length)
		expect(codePointToUtf16(TEXT, chars.length + 2)).toBe(TEXT.length + 2)
	})

	it('should encode a span after an emoji in code points and decode it back onto the same text', () => {
		const start = TEXT.indexOf('東京')
		const a = urlCitation({ url: 'u', start, end: start + 2 }, 3, TEXT)
		expect(a).toMatchObject({ start_index: 3 + [...TEXT.slice(0, start)].length, end_index: 3 + [...TEXT.slice(0, start)].length + 2 })
		const [c] = decodeAnnotations([{ ...a, start_index: (a.start_index as number) - 3, end_index: (a.end_index as number) - 3 }], TEXT)
		expect(c).toEqual({ url: 'u', title: 'u', start, end: start + 2, citedText: '東京' })
	})

	it('should map every UTF-8 byte offset at a character start to its UTF-16 offset, one inside a character to its start', () => {
		const chars = [...TEXT]
		for (let i = 0; i <= chars.length; i++) {
			const lead = chars.slice(0, i).join('')
			expect([utf8Length(lead), utf8ToUtf16(TEXT, utf8Length(lead))]).toEqual([Buffer.byteLength(lead), lead.length])
		}
		expect(utf8ToUtf16('a😀b', 3)).toBe(1) // inside the emoji's four bytes
		expect(utf8ToUtf16(TEXT, 10_000)).toBe(TEXT.length)
		expect([utf8Length('a\ud800b'), utf8ToUtf16('a\ud800b', 4)]).toEqual([5, 2]) // a lone surrogate is U+FFFD, three bytes
	})
})
