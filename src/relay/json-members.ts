/**
 * Where a JSON object's top-level members are, without parsing it: the non-stream fast path forwards the upstream's
 * body as it came and reads only what billing needs (`usage`), so an answer of hundreds of kilobytes is not turned
 * into objects just to find one small member. The scan checks the structure (one object, strings closed, brackets
 * balanced, a key and a colon before each value, nothing after the end); the values it is asked for are parsed by
 * the caller, the rest are skipped. String contents are skipped with `indexOf`, so the cost follows the number of
 * tokens, not the length of the text.
 * @module
 */

export type Span = { start: number; end: number }

const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const COMMA = 44
const COLON = 58

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9

/**
 * The spans of the `wanted` members of the object `text` holds (the last one when a key repeats, as JSON.parse
 * reads it).
 * @param opts.unique refuse (undefined) a text in which a wanted key repeats: for a caller that rewrites the member,
 *   since parsers differ on which of two equal keys counts
 * @returns undefined when the text is not an object or its structure is broken (truncated, unbalanced, a value
 * without a key)
 * @example topLevelMembers('{"a":{"usage":1},"usage":{"x":2}}', new Set(['usage'])) // Map { 'usage' => { start: 25, end: 32 } }
 */
export function topLevelMembers(text: string, wanted: ReadonlySet<string>, opts: { unique?: boolean } = {}): Map<string, Span> | undefined {
	const found = new Map<string, Span>()
	let i = skipSpace(text, 0)
	if (text.charCodeAt(i) !== OPEN_BRACE) return undefined
	i = skipSpace(text, i + 1)
	if (text.charCodeAt(i) === CLOSE_BRACE) return skipSpace(text, i + 1) === text.length ? found : undefined
	while (true) {
		if (text.charCodeAt(i) !== QUOTE) return undefined
		const keyEnd = stringEnd(text, i)
		if (keyEnd === -1) return undefined
		const key = text.slice(i + 1, keyEnd - 1)
		i = skipSpace(text, keyEnd)
		if (text.charCodeAt(i) !== COLON) return undefined
		const start = skipSpace(text, i + 1)
		const end = valueEnd(text, start)
		if (end === -1) return undefined
		// A key with an escape in it is compared as it reads, not as it is written.
		const name = key.indexOf('\\') === -1 ? key : (JSON.parse(`"${key}"`) as string)
		if (wanted.has(name)) {
			if (opts.unique && found.has(name)) return undefined
			found.set(name, { start, end })
		}
		i = skipSpace(text, end)
		const c = text.charCodeAt(i)
		if (c === COMMA) i = skipSpace(text, i + 1)
		else if (c === CLOSE_BRACE) return skipSpace(text, i + 1) === text.length ? found : undefined
		else return undefined
	}
}

function skipSpace(text: string, i: number): number {
	while (i < text.length && isSpace(text.charCodeAt(i))) i++
	return i
}

/** The index after the closing quote of the string opening at `i`, or -1 when it never closes. */
function stringEnd(text: string, i: number): number {
	let q = text.indexOf('"', i + 1)
	while (q !== -1) {
		// A quote preceded by an odd number of backslashes is escaped.
		let b = q - 1
		while (text.charCodeAt(b) === BACKSLASH) b--
		if ((q - 1 - b) % 2 === 0) return q + 1
		q = text.indexOf('"', q + 1)
	}
	return -1
}

/** The index after the value starting at `i` (string, object, array or scalar), or -1 when it is broken. */
function valueEnd(text: string, i: number): number {
	const c = text.charCodeAt(i)
	if (c === QUOTE) return stringEnd(text, i)
	if (c === OPEN_BRACE || c === OPEN_BRACKET) {
		// Nested values are skipped by their brackets; the closing bracket must match the opening one.
		const stack: number[] = [c]
		let j = i + 1
		while (stack.length) {
			if (j >= text.length) return -1
			const d = text.charCodeAt(j)
			if (d === QUOTE) {
				j = stringEnd(text, j)
				if (j === -1) return -1
				continue
			}
			if (d === OPEN_BRACE || d === OPEN_BRACKET) stack.push(d)
			else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
				if (stack.pop() !== (d === CLOSE_BRACE ? OPEN_BRACE : OPEN_BRACKET)) return -1
			}
			j++
		}
		return j
	}
	// A number, true, false or null: up to the next delimiter; it must not be empty.
	let j = i
	while (j < text.length) {
		const d = text.charCodeAt(j)
		if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d) || d === QUOTE || d === OPEN_BRACE || d === OPEN_BRACKET || d === COLON) break
		j++
	}
	return j > i ? j : -1
}
