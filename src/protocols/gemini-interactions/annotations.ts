/**
 * Canonical citations ⇄ the `url_citation` annotations of an Interactions text content
 * (https://ai.google.dev/api/interactions-api#URLCitation: `url`, `title`, `start_index` "measured in bytes" of the
 * text's UTF-8 encoding, `end_index` exclusive), which `@ai-sdk/google` reads as sources. Streamed, they come as a
 * `text_annotation_delta` of the step (https://ai.google.dev/api/interactions-api#TextAnnotationDelta).
 * @module
 */
import { utf8Length, utf8ToUtf16 } from '../../core/citations'
import type { Citation } from '../../core/ir'
import { isObj, type Obj } from '../gemini/read'

/**
 * A citation of `text` (a canonical span in UTF-16 units of it; none: the whole text) → a `url_citation` annotation of
 * a content whose text holds `text` from byte `offset` on.
 * @example urlCitation({ url: 'u', start: 2, end: 3 }, 0, 'é😀x') // { type: 'url_citation', url: 'u', start_index: 2, end_index: 6 }
 */
export function urlCitation(c: Citation, offset: number, text: string): Obj {
	const at = (units: number) => offset + utf8Length(text.slice(0, units))
	return { type: 'url_citation', url: c.url, ...(c.title && { title: c.title }), start_index: at(c.start ?? 0), end_index: at(c.end ?? text.length) }
}

/**
 * The annotations of a text content → citations with UTF-16 spans into its `text`, each quoting the span it cites (as
 * Gemini's segments do); annotations other than `url_citation` (file, place citations) have no canonical form.
 */
export function decodeAnnotations(v: unknown, text: string): Citation[] {
	return (Array.isArray(v) ? v : []).filter(isObj).flatMap((a): Citation[] => {
		if (a.type !== 'url_citation' || typeof a.url !== 'string' || !a.url) return []
		const c: Citation = { url: a.url, ...(typeof a.title === 'string' && a.title && { title: a.title }) }
		if (typeof a.start_index !== 'number' && typeof a.end_index !== 'number') return [c]
		const start = utf8ToUtf16(text, typeof a.start_index === 'number' ? a.start_index : 0)
		const end = utf8ToUtf16(text, typeof a.end_index === 'number' ? a.end_index : utf8Length(text))
		const quoted = text.slice(start, end)
		return [{ ...c, start, end, ...(quoted && { citedText: quoted }) }]
	})
}
