/**
 * "Did you mean": the known key an unknown one most likely stands for, in the refusals of the config file
 * (gateway-file.ts) and of the management API (http/error-map.ts), and the keys a TypeBox object schema names.
 * @module
 */

/**
 * Vendors' words for prices the gateway names otherwise, as operators copy them: OpenAI's pricing page says
 * "Cached input", Anthropic's "Cache Hits" and "Cache Writes", the usage objects "prompt" and "completion" tokens.
 */
const VENDOR_WORDS: ReadonlyArray<readonly [RegExp, string]> = [
	[/cached_input|cache_hits?|cached/g, 'cache_read'],
	[/cache_creation|cache_writes/g, 'cache_write'],
	[/prompt/g, 'input'],
	[/completion/g, 'output'],
]

/** snake_case, lower case, vendor words replaced: `cachedInputPerMtok` and `cached-input-per-mtok` read as `cache_read_per_mtok`. */
function normal(key: string): string {
	let k = key
		.replace(/([a-z0-9])([A-Z])/g, '$1_$2')
		.toLowerCase()
		.replace(/[\s-]+/g, '_')
	for (const [word, ours] of VENDOR_WORDS) k = k.replace(word, ours)
	return k
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
function distance(a: string, b: string): number {
	const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
	for (let j = 1; j <= b.length; j++) d[0]![j] = j
	for (let i = 1; i <= a.length; i++)
		for (let j = 1; j <= b.length; j++) {
			const cost = a[i - 1] === b[j - 1] ? 0 : 1
			d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
			if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
		}
	return d[a.length]![b.length]!
}

/**
 * The known key nearest to `key`, when it is near enough to be a slip (a third of its length in edits, at least one)
 * or a vendor's word for it; undefined otherwise, or when `key` is itself known.
 * @example nearestKey('prioirty', ['priority', 'weight']) === 'priority'
 * @example nearestKey('cached_input_per_mtok', ['input_per_mtok', 'cache_read_per_mtok', 'batch_input_per_mtok']) === 'cache_read_per_mtok'
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
	if (known.includes(key)) return undefined
	const k = normal(key)
	let best: { key: string; d: number } | undefined
	for (const candidate of known) {
		const d = distance(k, normal(candidate))
		if (!best || d < best.d) best = { key: candidate, d }
	}
	return best && best.d <= Math.max(1, Math.floor(Math.max(k.length, best.key.length) / 3)) ? best.key : undefined
}

/**
 * The keys an object schema names: its properties, those of the members of an intersection, and the plain names a
 * `patternProperties` alternation lists (`^(?:per_image|per_minute|per_image_\d+x\d+)$` gives per_image, per_minute).
 */
export function schemaKeys(schema: unknown): string[] {
	const s = (schema ?? {}) as { properties?: object; allOf?: unknown[]; patternProperties?: object }
	return [...Object.keys(s.properties ?? {}), ...(s.allOf ?? []).flatMap(schemaKeys), ...Object.keys(s.patternProperties ?? {}).flatMap(plainAlternatives)]
}

/** The alternatives of `^(?:a|b|…)$` that are plain names (no regex syntax), split at the top level only. */
function plainAlternatives(pattern: string): string[] {
	const m = /^\^\(\?:(.*)\)\$$/.exec(pattern)
	if (!m) return []
	const out: string[] = []
	let depth = 0
	let start = 0
	const body = m[1]!
	for (let i = 0; i <= body.length; i++) {
		const c = body[i]
		if (c === '\\') i++
		else if (c === '(') depth++
		else if (c === ')') depth--
		else if ((c === '|' && depth === 0) || i === body.length) {
			out.push(body.slice(start, i))
			start = i + 1
		}
	}
	return out.filter((a) => /^[\w-]+$/.test(a))
}

/** The sentence a refusal of `key` ends with, naming the nearest known key; empty when there is none. */
export const didYouMean = (key: string, known: readonly string[]): string => {
	const near = nearestKey(key, known)
	return near === undefined ? '' : `did you mean "${near}"?`
}
