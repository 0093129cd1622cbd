/**
 * Where a JSON text streamed in fragments stands, without keeping the text: enough to tell when a streamed tool call's
 * `arguments` (a JSON object, WIRE-NOTES wire §8) are whole. OpenAI keys argument deltas by `tool_calls[].index` and
 * promises no order between calls, so a call is known to be done only when its object closes.
 * @module
 */

/** Nesting depth outside strings, and whether the scan is inside a string or just after a backslash in one. */
export type JsonProgress = { depth: number; inString: boolean; escaped: boolean; opened: boolean }

export const jsonProgress = (): JsonProgress => ({ depth: 0, inString: false, escaped: false, opened: false })

const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACE = 123
const OPEN_BRACKET = 91
const CLOSE_BRACE = 125
const CLOSE_BRACKET = 93

/**
 * Feeds the next fragment; true once the top-level object or array has closed. A scalar or a malformed text never
 * completes (its caller then waits for another signal, such as `finish_reason`). One pass over the fragment, no copy.
 * @example
 * const p = jsonProgress()
 * feedJson(p, '{"city": "a}') // false: the brace is inside a string
 * feedJson(p, '"}') // true
 */
export function feedJson(p: JsonProgress, fragment: string): boolean {
	for (let i = 0; i < fragment.length; i++) {
		const c = fragment.charCodeAt(i)
		if (p.inString) {
			if (p.escaped) p.escaped = false
			else if (c === BACKSLASH) p.escaped = true
			else if (c === QUOTE) p.inString = false
		} else if (c === QUOTE) p.inString = true
		else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
			p.depth++
			p.opened = true
		} else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) p.depth--
	}
	return jsonDone(p)
}

/** The top-level object or array has closed. */
export const jsonDone = (p: JsonProgress): boolean => p.opened && p.depth <= 0 && !p.inString
