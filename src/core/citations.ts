/**
 * Citation spans between a whole answer's text and its parts (core/ir.ts `Citation`: UTF-16 offsets). Gemini's
 * `groundingSupports` and OpenAI chat's `url_citation` annotations span the whole answer; canonical citations span the
 * text part (or streamed text block) they belong to.
 * @module
 */
import type { Citation } from './ir'

/**
 * Citations spanning the answer's whole text → those of one of its parts, which starts at `offset` and runs `length`.
 * @example citationsWithin([{ url: 'u', start: 7, end: 9 }], 5, 10) // [{ url: 'u', start: 2, end: 4 }]
 */
export const citationsWithin = (all: Citation[], offset: number, length: number): Citation[] =>
	all.filter((c) => (c.start ?? 0) >= offset && (c.start ?? 0) < offset + length).map((c) => ({ ...c, start: (c.start ?? 0) - offset, end: Math.min(c.end ?? offset + length, offset + length) - offset }))
