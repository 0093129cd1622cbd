import { describe, expect, it } from 'bun:test'
import { encodeGrounding, groundingCitations } from '../../../../src/protocols/gemini/grounding'

const bytes = (s: string) => Buffer.byteLength(s, 'utf8')

describe('gemini encodeGrounding', () => {
	it('should count segments in UTF-8 bytes across the text parts, a citation without a span covering its part', () => {
		const first = 'Résumé 中文 😀 '
		const second = 'cited ✓ tail'
		const meta = encodeGrounding(
			[{ queries: ['q', ' '], sources: [{ url: 'https://a.example', title: 'A' }] }],
			[{ text: first }, { text: second, citations: [{ url: 'https://b.example', title: 'B', start: 6, end: 7 }, { url: 'https://a.example' }] }],
		)
		expect(meta).toEqual({
			webSearchQueries: ['q'],
			groundingChunks: [{ web: { uri: 'https://a.example', title: 'A' } }, { web: { uri: 'https://b.example', title: 'B' } }],
			groundingSupports: [
				{ segment: { startIndex: bytes(first) + 6, endIndex: bytes(first) + 6 + bytes('✓'), text: '✓' }, groundingChunkIndices: [1] },
				{ segment: { startIndex: bytes(first), endIndex: bytes(first + second), text: second }, groundingChunkIndices: [0] },
			],
		})
	})

	it('should give citations of one span one support naming each page once', () => {
		const meta = encodeGrounding([], [{ text: 'é', citations: [{ url: 'u1' }, { url: 'u2' }, { url: 'u1' }] }])
		expect(meta?.groundingSupports).toEqual([{ segment: { startIndex: 0, endIndex: 2, text: 'é' }, groundingChunkIndices: [0, 1] }])
	})

	it('should be undefined when nothing was searched or cited', () => {
		expect(encodeGrounding([], [{ text: 'plain' }])).toBeUndefined()
	})

	it("should round-trip through the decoder's character spans", () => {
		const text = 'a 😀 é 中 b'
		const meta = encodeGrounding([], [{ text, citations: [{ url: 'u', start: 5, end: 8 }] }])
		expect(groundingCitations(meta, text)).toEqual([{ url: 'u', citedText: 'é 中', start: 5, end: 8 }])
	})
})
