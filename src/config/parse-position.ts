/**
 * Where a config file stops being JSON or YAML. Bun's parsers say what went wrong but not where ("JSON Parse error:
 * Property name must be a string literal"; the error's `line` is that of our own call), and a start refused over a
 * 40-line file should name the line to look at.
 * @module
 */

export type Position = { line: number; column: number }

/** 1-based line and column of `offset` in `text`. */
function positionOf(text: string, offset: number): Position {
	const before = text.slice(0, offset)
	const line = before.split('\n').length
	return { line, column: offset - before.lastIndexOf('\n') }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const WS = /[ \t\n\r]*/y

/**
 * The position of the first character that is not valid JSON (RFC 8259), or of the end when the text stops early;
 * undefined when the text is valid JSON.
 * @example jsonErrorAt('{"a": 1,}') // { line: 1, column: 9 }
 */
export function jsonErrorAt(text: string): Position | undefined {
	let i = 0
	const fail = (): never => {
		throw positionOf(text, i)
	}
	const ws = () => {
		WS.lastIndex = i
		WS.test(text)
		i = WS.lastIndex
	}
	const string = () => {
		if (text[i] !== '"') fail()
		i++
		while (i < text.length && text[i] !== '"') {
			const c = text.charCodeAt(i)
			if (c < 0x20) fail()
			if (text[i] === '\\') {
				i++
				if (text[i] === 'u') {
					if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail()
					i += 4
				} else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) fail()
			}
			i++
		}
		if (i >= text.length) fail()
		i++
	}
	const value = (depth: number): void => {
		if (depth > 512) fail()
		ws()
		const c = text[i]
		if (c === '{') {
			i++
			ws()
			if (text[i] === '}') {
				i++
				return
			}
			for (;;) {
				ws()
				string()
				ws()
				if (text[i] !== ':') fail()
				i++
				value(depth + 1)
				ws()
				if (text[i] === '}') {
					i++
					return
				}
				if (text[i] !== ',') fail()
				i++
			}
		}
		if (c === '[') {
			i++
			ws()
			if (text[i] === ']') {
				i++
				return
			}
			for (;;) {
				value(depth + 1)
				ws()
				if (text[i] === ']') {
					i++
					return
				}
				if (text[i] !== ',') fail()
				i++
			}
		}
		if (c === '"') return string()
		for (const word of ['true', 'false', 'null'])
			if (text.startsWith(word, i)) {
				i += word.length
				return
			}
		NUMBER.lastIndex = i
		if (!NUMBER.test(text)) fail()
		i = NUMBER.lastIndex
	}
	try {
		value(0)
		ws()
		if (i < text.length) fail()
		return undefined
	} catch (e) {
		if (e && typeof e === 'object' && 'line' in e) return e as Position
		throw e
	}
}

/**
 * The line at which a YAML text that does not parse goes wrong: the one after the longest run of leading lines that
 * parses on its own (a document cut at a line end is still YAML, unless the cut falls inside a construct spanning
 * lines, which the longest run steps past). Undefined when the whole text parses, or is too long to search.
 * @example yamlErrorLine('a: 1\nb: [2\n') // 2
 */
export function yamlErrorLine(text: string, parse: (text: string) => unknown = (t) => Bun.YAML.parse(t)): number | undefined {
	const lines = text.split('\n')
	if (lines.length > 5000) return undefined
	const parses = (n: number) => {
		try {
			parse(lines.slice(0, n).join('\n'))
			return true
		} catch {
			return false
		}
	}
	if (parses(lines.length)) return undefined
	for (let n = lines.length - 1; n >= 0; n--) if (parses(n)) return n + 1
	return 1
}
