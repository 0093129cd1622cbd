/**
 * JSON Lines text (batch input and result files: OpenAI's, Anthropic's, Google's) as its values, blank lines skipped.
 * @module
 */

/**
 * Each non-blank line's value with its 1-based line number. A line that is not JSON is skipped, or, given `bad`, throws
 * what `bad` makes of its number (a 400 naming the line, for a client's input file).
 * @example jsonLines('{"a":1}\n\nnope\n[2]') // [{ n: 1, value: { a: 1 } }, { n: 4, value: [2] }]
 */
export function jsonLines(text: string, bad?: (n: number) => Error): { n: number; value: unknown }[] {
	const out: { n: number; value: unknown }[] = []
	const lines = text.split('\n')
	for (let i = 0; i < lines.length; i++) {
		const raw = lines[i]!
		if (!raw.trim()) continue
		try {
			out.push({ n: i + 1, value: JSON.parse(raw) })
		} catch {
			if (bad) throw bad(i + 1)
		}
	}
	return out
}
