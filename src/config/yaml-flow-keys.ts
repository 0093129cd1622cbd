/**
 * Keys of YAML flow mappings (`{a: 1, b: 2}`), which may span lines and nest in flow sequences: the candidates for a
 * key given twice, in document order. YAML 1.2 §3.2.1.1 wants keys unique, but Bun's parser keeps the last value, as
 * it does in block mappings (parse-position.ts reads those line by line and confirms every candidate by parsing again).
 * @module
 */

/** A key met a second time in one flow mapping: its text's offset and length, its value and the path to it. */
export type FlowKeyRepeat = { offset: number; length: number; key: string; path: string }

type Flow = { kind: 'map'; path: string; keys: Set<string>; expectKey: boolean; last?: string } | { kind: 'seq'; path: string; items: number }

const join = (path: string, key: string) => (path ? `${path}.${key}` : key)

/** Characters that end a plain scalar in flow context (YAML 1.2 §7.3.3), besides `: ` and ` #`. */
const FLOW_INDICATORS = ',[]{}'

/**
 * Every key repeated within one flow mapping of the flow collection opening at `start` (a `{` or `[`), whose own
 * path is `path`. Reads a text that already parses as YAML; a key that is itself a collection is not compared.
 * @example [...flowKeyRepeats('a: {x: 1, x: 2}', 3, 'a')] // [{ offset: 10, length: 1, key: 'x', path: 'a.x' }]
 */
export function* flowKeyRepeats(text: string, start: number, path: string): Generator<FlowKeyRepeat> {
	const stack: Flow[] = []
	let i = start
	const skipSpace = () => {
		for (;;) {
			while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++
			if (text[i] !== '#') return
			while (i < text.length && text[i] !== '\n') i++
		}
	}
	const childPath = (): string => {
		const parent = stack.at(-1)
		if (!parent) return path
		if (parent.kind === 'seq') return `${parent.path}[${parent.items}]`
		return join(parent.path, parent.expectKey ? '?' : (parent.last ?? '?'))
	}
	while (i < text.length) {
		skipSpace()
		const c = text[i]
		if (c === undefined) return
		const top = stack.at(-1)
		if (c === '{' || c === '[') {
			const own = childPath()
			// A collection in a key's place is a complex key: it is not compared, and what follows is its value.
			if (top?.kind === 'map' && top.expectKey) top.expectKey = false
			stack.push(c === '{' ? { kind: 'map', path: own, keys: new Set(), expectKey: true } : { kind: 'seq', path: own, items: 0 })
			i++
			continue
		}
		if (c === '}' || c === ']') {
			stack.pop()
			i++
			if (stack.length === 0) return
			continue
		}
		if (c === ',') {
			if (top?.kind === 'seq') top.items++
			else if (top) {
				top.expectKey = true
				top.last = undefined
			}
			i++
			continue
		}
		if (c === ':' || (c === '?' && /[ \t\r\n]/.test(text[i + 1] ?? ' '))) {
			i++
			continue
		}
		if ((c === '&' || c === '!') && i + 1 < text.length) {
			// An anchor or a tag: a property of the node after it.
			while (i < text.length && !' \t\r\n'.includes(text[i]!) && !FLOW_INDICATORS.includes(text[i]!)) i++
			continue
		}
		const scalarStart = i
		const key = c === '"' ? doubleQuoted() : c === "'" ? singleQuoted() : plain()
		const length = i - scalarStart
		if (top?.kind !== 'map' || !top.expectKey) continue
		top.expectKey = false
		top.last = key
		if (top.keys.has(key)) yield { offset: scalarStart, length, key, path: join(top.path, key) }
		else top.keys.add(key)
	}

	function doubleQuoted(): string {
		const from = i
		i++
		while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
		i++
		try {
			return JSON.parse(text.slice(from, i).replace(/\s*\n\s*/g, ' ')) as string
		} catch {
			// YAML escapes JSON lacks (\x41, \e …): compared as written.
			return text.slice(from + 1, i - 1)
		}
	}

	function singleQuoted(): string {
		const from = i
		i++
		while (i < text.length && !(text[i] === "'" && text[i + 1] !== "'")) i += text[i] === "'" ? 2 : 1
		i++
		return text
			.slice(from + 1, i - 1)
			.replace(/''/g, "'")
			.replace(/\s*\n\s*/g, ' ')
	}

	function plain(): string {
		const from = i
		let end = i
		while (i < text.length) {
			const ch = text[i]!
			if (FLOW_INDICATORS.includes(ch)) break
			if (ch === ':' && (i + 1 >= text.length || /[ \t\r\n]/.test(text[i + 1]!) || FLOW_INDICATORS.includes(text[i + 1]!))) break
			if (ch === '#' && /[ \t\r\n]/.test(text[i - 1] ?? ' ')) break
			i++
			if (!' \t\r\n'.includes(ch)) end = i
		}
		// Trailing blanks belong to no scalar: the key's text is what it spells (and what a rename replaces).
		i = Math.max(end, from + 1)
		return text.slice(from, end).replace(/[ \t]*\r?\n[ \t\r\n]*/g, ' ')
	}
}
