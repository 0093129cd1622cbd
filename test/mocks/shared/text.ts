/**
 * Deterministic text helpers: word counts (the mocks' "tokens"), stream pieces, ids and embedding vectors.
 * @module
 */

/**
 * Number of whitespace-separated words: the mocks' token count, exported so tests can compute expectations.
 * @example countWords('Hello! You said: hi') // 4
 */
export function countWords(text: string): number {
	let n = 0
	let inWord = false
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i)
		const space = c === 32 || (c >= 9 && c <= 13) || c === 160
		if (space) inWord = false
		else if (!inWord) {
			inWord = true
			n++
		}
	}
	return n
}

/**
 * The words of tool definitions as the mocks' counters count them when asked to (`countTools`): each tool's name,
 * description and parameter schema, the schema's JSON text being one word (it has no spaces), as tests can recompute.
 * @example toolWords([{ name: 'get_weather', description: 'Current weather', schema: { type: 'object' } }]) // 4
 */
export function toolWords(tools: Array<{ name?: unknown; description?: unknown; schema?: unknown }>): number {
	let n = 0
	for (const t of tools) n += countWords(String(t.name ?? '')) + countWords(typeof t.description === 'string' ? t.description : '') + countWords(JSON.stringify(t.schema ?? {}))
	return n
}

/**
 * Splits text on spaces into stream pieces that concatenate back to the text (the space leads each piece).
 * @example splitPieces('a b c') // ['a', ' b', ' c']
 */
export function splitPieces(text: string): string[] {
	if (!text) return []
	return text.split(' ').map((w, i) => (i === 0 ? w : ` ${w}`))
}

/**
 * Splits a string into `n` non-empty fragments (fewer when it is too short), as vendors stream tool arguments.
 * @example fragments('{"city":"Paris"}', 2) // ['{"city":', '"Paris"}']
 */
export function fragments(s: string, n = 2): string[] {
	const parts = Math.max(1, Math.min(n, s.length))
	const size = Math.ceil(s.length / parts)
	const out: string[] = []
	for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size))
	return out
}

/** 64-bit hash of a string as base-36 text. */
export const hash36 = (seed: string): string => BigInt.asUintN(64, BigInt(Bun.hash(seed))).toString(36)

/**
 * A deterministic id: the same seed always gives the same id, so tests can assert it and the mock can verify it.
 * @example stableId('call_', 'Paris|0') // 'call_…' (24 chars after the prefix)
 */
export function stableId(prefix: string, seed: string, length = 24): string {
	let out = ''
	for (let i = 0; out.length < length; i++) out += hash36(`${i}:${seed}`)
	return prefix + out.slice(0, length)
}

/** Deterministic base64 of a UTF-8 string. */
export const base64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64')

/**
 * A deterministic unit-length vector for a text (xorshift seeded by the text's hash).
 * @example vector('hi', 3).length // 3
 */
export function vector(seed: string, dims: number): number[] {
	let x = Number(BigInt.asUintN(32, BigInt(Bun.hash(seed)))) || 1
	const v = new Array<number>(dims)
	let norm = 0
	for (let i = 0; i < dims; i++) {
		x ^= x << 13
		x ^= x >>> 17
		x ^= x << 5
		x >>>= 0
		const f = x / 0x80000000 - 1
		v[i] = f
		norm += f * f
	}
	const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0
	for (let i = 0; i < dims; i++) v[i] = Math.round(v[i] * scale * 1e6) / 1e6
	return v
}

/** Little-endian float32 bytes as base64, the `encoding_format: 'base64'` embedding encoding. */
export const floatsToBase64 = (v: number[]): string => Buffer.from(new Float32Array(v).buffer).toString('base64')

/** Seconds since the epoch, for `created` fields. */
export const unixNow = (): number => Math.floor(Date.now() / 1000)
