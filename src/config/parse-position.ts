/**
 * Where a config file stops being JSON or YAML. Bun's parsers say what went wrong but not where ("JSON Parse error:
 * Property name must be a string literal"; the error's `line` is that of our own call), and a start refused over a
 * 40-line file should name the line to look at.
 * @module
 */
import { flowKeyRepeats } from './yaml-flow-keys'

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
	const found = scanJson(text, false)
	return found && !('key' in found) ? found : undefined
}

/** A member name given twice in one object: where the second one starts, and the path of the object's members. */
export type DuplicateKey = Position & { key: string; path: string }

/**
 * The first member name repeated within one JSON object. RFC 8259 §4 leaves such an object's meaning open and
 * `JSON.parse` keeps the last value, so a price written twice (`input_per_mtok` copied and edited) would bill one of
 * them silently; undefined when there is none, or when the text is not JSON (jsonErrorAt says where).
 * @example jsonDuplicateKey('{"models": [{"a": 1,\n "a": 2}]}') // { line: 2, column: 2, key: 'a', path: 'models[0].a' }
 */
export function jsonDuplicateKey(text: string): DuplicateKey | undefined {
	const found = scanJson(text, true)
	return found && 'key' in found ? found : undefined
}

/** One pass of the RFC 8259 grammar: the first syntax error, or (when `dupes`) the first repeated member name. */
function scanJson(text: string, dupes: boolean): Position | DuplicateKey | undefined {
	let i = 0
	const path: string[] = []
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
			const keys = dupes ? new Set<string>() : undefined
			for (;;) {
				ws()
				const start = i
				string()
				if (keys) {
					const key = JSON.parse(text.slice(start, i)) as string
					const at = path.join('') + (path.length ? '.' : '') + key
					if (keys.has(key)) throw { ...positionOf(text, start), key, path: at }
					keys.add(key)
					path.push(path.length ? `.${key}` : key)
				}
				ws()
				if (text[i] !== ':') fail()
				i++
				value(depth + 1)
				if (keys) path.pop()
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
			for (let n = 0; ; n++) {
				if (dupes) path.push(`[${n}]`)
				value(depth + 1)
				if (dupes) path.pop()
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
		if (e && typeof e === 'object' && 'line' in e) return e as Position | DuplicateKey
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

/** A block-mapping key at the start of `rest`: double-quoted, single-quoted or plain, then `:` and a space or the end. */
const YAML_KEY = /^(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#'"{[\]},&*!|>%@`?-][^#]*?|-[^\s#][^#]*?))[ \t]*:(?:[ \t]|$)/

type YamlScope = { kind: 'map'; indent: number; path: string; keys: Set<string>; last?: string } | { kind: 'seq'; indent: number; path: string; items: number }

const join = (path: string, key: string) => (path ? `${path}.${key}` : key)

/**
 * The first key given twice in one mapping of a YAML text that parses. YAML 1.2 §3.2.1.1 requires keys to be
 * unique, but Bun's parser keeps the last value, so a price written twice would bill one of them silently. Reads the
 * block structure line by line (a `- ` item opens a mapping of its own; block scalars are skipped), hands each flow
 * collection (`{…}`, `[…]`, on one line or several) to yaml-flow-keys.ts, and confirms each candidate by parsing the
 * text again with the second key renamed, so a line that only looks like a key (within a multi-line plain scalar) is
 * never reported.
 * @example yamlDuplicateKey('models:\n  - name: m\n    p: 1\n    p: 2\n') // { line: 4, column: 5, key: 'p', path: 'models[0].p' }
 * @example yamlDuplicateKey('models:\n  - {name: m, p: 1, p: 2}\n') // { line: 2, column: 20, key: 'p', path: 'models[0].p' }
 */
export function yamlDuplicateKey(text: string, parse: (text: string) => unknown = (t) => Bun.YAML.parse(t)): DuplicateKey | undefined {
	const lines = text.split('\n')
	const lineStart: number[] = []
	for (let n = 0, at = 0; n < lines.length; at += lines[n]!.length + 1, n++) lineStart.push(at)
	// A flow collection's first repeated key that really is one (the rename check), where it starts.
	const flowRepeat = (n: number, col: number, path: string): DuplicateKey | undefined => {
		for (const r of flowKeyRepeats(text, lineStart[n]! + col, path))
			if (r.key !== '<<' && renamedParses(text, r.offset, r.length, parse)) return { ...positionOf(text, r.offset), key: r.key, path: r.path }
		return undefined
	}
	const scopes: YamlScope[] = []
	const top = () => scopes.at(-1)
	let blockIndent = -1
	let flowDepth = 0
	for (const [n, line] of lines.entries()) {
		const indent = line.length - line.trimStart().length
		if (blockIndent >= 0) {
			if (line.trim() === '' || indent > blockIndent) continue
			blockIndent = -1
		}
		if (flowDepth > 0) {
			flowDepth = Math.max(0, flowDepth + depthChange(line))
			continue
		}
		if (line.trim() === '' || line.trimStart().startsWith('#') || /^(?:---|\.\.\.)(?:\s|$)/.test(line) || line.startsWith('%')) continue
		let col = indent
		let rest = line.slice(indent)
		while (/^-(?:[ \t]|$)/.test(rest)) {
			while (scopes.length && top()!.indent > col) scopes.pop()
			let seq = top()
			if (seq?.kind !== 'seq' || seq.indent !== col) {
				const parent = top()
				seq = { kind: 'seq', indent: col, path: parent?.kind === 'map' && parent.last !== undefined ? join(parent.path, parent.last) : (parent?.path ?? ''), items: 0 }
				scopes.push(seq)
			}
			const path = `${seq.path}[${seq.items++}]`
			const step = 1 + (rest.slice(1).length - rest.slice(1).trimStart().length)
			col += step
			rest = rest.slice(step)
			scopes.push({ kind: 'map', indent: col, path, keys: new Set() })
		}
		const m = YAML_KEY.exec(rest)
		if (!m) {
			const flow = flowStart(rest)
			if (flow >= 0) {
				// A `- {…}` item (its mapping scope opened at this column above), a key's value on the lines below it, or the document.
				while (scopes.length && top()!.indent > col) scopes.pop()
				const parent = top()
				const path = parent?.kind === 'map' && parent.indent < col && parent.last !== undefined ? join(parent.path, parent.last) : (parent?.path ?? '')
				const found = flowRepeat(n, col + flow, path)
				if (found) return found
			}
			flowDepth = Math.max(0, depthChange(rest))
			continue
		}
		const key = m[1] !== undefined ? (JSON.parse(`"${m[1]}"`) as string) : m[2] !== undefined ? m[2].replace(/''/g, "'") : m[3]!
		while (scopes.length && (top()!.indent > col || (top()!.kind === 'seq' && top()!.indent >= col))) scopes.pop()
		let scope = top()
		if (scope?.kind !== 'map' || scope.indent !== col) {
			const path = scope?.kind === 'map' && scope.last !== undefined ? join(scope.path, scope.last) : (scope?.path ?? '')
			scope = { kind: 'map', indent: col, path, keys: new Set() }
			scopes.push(scope)
		}
		const value = rest.slice(m[0].length).trim()
		const keyLength = m[0].replace(/[ \t]*:[ \t]?$/, '').length
		if (scope.keys.has(key) && key !== '<<' && renamedParses(text, lineStart[n]! + col, keyLength, parse)) return { line: n + 1, column: col + 1, key, path: join(scope.path, key) }
		scope.keys.add(key)
		scope.last = key
		if (/^[|>][-+0-9]*(?:\s+#.*)?$/.test(value)) blockIndent = col
		else {
			const after = rest.slice(m[0].length)
			const flow = flowStart(after)
			if (flow >= 0) {
				const found = flowRepeat(n, col + m[0].length + flow, join(scope.path, key))
				if (found) return found
			}
			flowDepth = Math.max(0, depthChange(value))
		}
	}
	return undefined
}

/** How many flow brackets a line opens and leaves open (quoted text and comments aside). */
function depthChange(line: string): number {
	let depth = 0
	let quote = ''
	for (let i = 0; i < line.length; i++) {
		const c = line[i]!
		if (quote) {
			if (c === '\\' && quote === '"') i++
			else if (c === quote) quote = ''
		} else if (c === '"' || c === "'") quote = c
		else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) break
		else if (c === '[' || c === '{') depth++
		else if (c === ']' || c === '}') depth--
	}
	return depth
}

/** Where a flow collection opens in a node's text (after any anchor and tag), or -1 when it is not one. */
function flowStart(node: string): number {
	const m = /^[ \t]*(?:[&!][^\s,[\]{}]*[ \t]+)*(?=[{[])/.exec(node)
	return m ? m[0].length : -1
}

const SENTINEL = '\u0001switchboard-duplicate'

/** Whether the text, with the key of `length` characters at `offset` renamed to a sentinel, parses with the sentinel as a key. */
function renamedParses(text: string, offset: number, length: number, parse: (text: string) => unknown): boolean {
	const renamed = `${text.slice(0, offset)}${JSON.stringify(SENTINEL)}${text.slice(offset + length)}`
	let value: unknown
	try {
		value = parse(renamed)
	} catch {
		return false
	}
	const has = (v: unknown): boolean =>
		Array.isArray(v) ? v.some(has) : v !== null && typeof v === 'object' ? Object.hasOwn(v, SENTINEL) || Object.values(v).some(has) : false
	return has(value)
}

/**
 * Where the key `path` ends in is written, for a message about that key (an unknown or invalid field of a file that
 * parses): each place the key's text stands (plain, or quoted as JSON or YAML would) is renamed in turn, and the one
 * whose renaming moves that very key is it. Undefined when none does (a key written with escapes).
 * @example keyPosition('models:\n  - name: m\n    cached: 1\n', ['models', '0', 'cached'], (t) => Bun.YAML.parse(t)) // { line: 3, column: 5 }
 */
export function keyPosition(text: string, path: readonly string[], parse: (text: string) => unknown): Position | undefined {
	const key = path.at(-1)
	if (key === undefined || key === '') return undefined
	const holder = (v: unknown): unknown => path.slice(0, -1).reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), v)
	const spellings = [...new Set([JSON.stringify(key), `'${key.replace(/'/g, "''")}'`, key])]
	let tried = 0
	for (const spelling of spellings)
		for (let at = text.indexOf(spelling); at >= 0 && tried < 500; at = text.indexOf(spelling, at + 1)) {
			// A plain spelling inside a longer name (`idle` in `idle_ms`) is not the key.
			if (spelling === key && (/[\w-]/.test(text[at - 1] ?? '') || /[\w-]/.test(text[at + key.length] ?? ''))) continue
			tried++
			let value: unknown
			try {
				value = parse(`${text.slice(0, at)}${JSON.stringify(SENTINEL)}${text.slice(at + spelling.length)}`)
			} catch {
				continue
			}
			const o = holder(value)
			if (o !== null && typeof o === 'object' && Object.hasOwn(o, SENTINEL)) return positionOf(text, at)
		}
	return undefined
}
