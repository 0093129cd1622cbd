/**
 * Citation spans between a whole answer's text and its parts (core/ir.ts `Citation`: UTF-16 offsets). Gemini's
 * `groundingSupports` and OpenAI chat's `url_citation` annotations span the whole answer; canonical citations span the
 * text part (or streamed text block) they belong to.
 *
 * Each wire counts its offsets its own way, and the codecs convert at the edge: Gemini's `segment` indices are UTF-8
 * bytes (https://ai.google.dev/api/generate-content#Segment), as are the Interactions API's `url_citation` indices
 * (https://ai.google.dev/api/interactions-api#URLCitation, "measured in bytes"); OpenAI's `url_citation` `start_index` / `end_index` are
 * "the index of the first (last) character of the URL citation in the message" (chat and Responses API references),
 * characters as OpenAI's Python SDK and its examples slice `text[start_index:end_index]`: Unicode code points, so an
 * emoji (two UTF-16 units, four UTF-8 bytes) is one. Anthropic's web search citations carry no offsets (`cited_text`).
 * @module
 */
import type { Citation } from './ir'

/**
 * Citations spanning the answer's whole text → those of one of its parts, which starts at `offset` and runs `length`.
 * @example citationsWithin([{ url: 'u', start: 7, end: 9 }], 5, 10) // [{ url: 'u', start: 2, end: 4 }]
 */
export const citationsWithin = (all: Citation[], offset: number, length: number): Citation[] =>
	all.filter((c) => (c.start ?? 0) >= offset && (c.start ?? 0) < offset + length).map((c) => ({ ...c, start: (c.start ?? 0) - offset, end: Math.min(c.end ?? offset + length, offset + length) - offset }))

/**
 * How many code points (OpenAI's characters) `s` holds.
 * @example codePoints('a😀') === 2
 */
export function codePoints(s: string): number {
	let n = 0
	for (let i = 0; i < s.length; i++, n++) if (isHighSurrogate(s.charCodeAt(i)) && isLowSurrogate(s.charCodeAt(i + 1))) i++
	return n
}

/**
 * The UTF-16 offset in `text` of code point `index` (an OpenAI offset); past the text's end, each code point is
 * counted as one unit (a stream's annotation may name text not yet seen).
 * @example codePointToUtf16('😀 café', 2) === 3
 */
export function codePointToUtf16(text: string, index: number): number {
	let i = 0
	for (let n = 0; n < index; n++) {
		if (i >= text.length) return i + (index - n)
		i += isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1
	}
	return i
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff

/**
 * How many bytes `s` takes in UTF-8 (Gemini's offsets: a segment's or an Interactions annotation's indices).
 * @example utf8Length('é😀') === 6
 */
export const utf8Length = (s: string): number => new TextEncoder().encode(s).length

/**
 * The UTF-16 offset in `text` of UTF-8 byte `index` (a Gemini offset), clamped to the text; a byte inside a character
 * counts up to that character's start.
 * @example utf8ToUtf16('é😀x', 6) === 3
 */
export function utf8ToUtf16(text: string, index: number): number {
	let bytes = 0
	let i = 0
	while (i < text.length) {
		const c = text.codePointAt(i)!
		// A lone surrogate is encoded as U+FFFD, three bytes.
		const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4
		if (bytes + size > index) break
		bytes += size
		i += c < 0x10000 ? 1 : 2
	}
	return i
}
