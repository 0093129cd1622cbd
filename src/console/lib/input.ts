/** Parsing of amounts typed into forms, with messages that say what to type instead. */

/**
 * A USD amount with at most 6 decimals (the gateway's precision); `signed` allows a leading minus.
 * @example parseUsd('2.50') === 2.5; parseUsd('-5', true) === -5
 */
export function parseUsd(text: string, signed = false): number {
	const s = text.trim()
	if (!(signed ? /^-?\d+(\.\d{1,6})?$/ : /^\d+(\.\d{1,6})?$/).test(s)) throw new Error(`Enter an amount in USD, such as ${signed ? '10, 2.50 or -5' : '10 or 2.50'}`)
	return Number(s)
}

/**
 * The spend-limit field: '' → null (no limit); otherwise a non-negative USD amount.
 * @example parseLimit(' 5.5 ') === 5.5; parseLimit('') === null
 */
export function parseLimit(text: string): number | null {
	const s = text.trim()
	if (!s) return null
	if (!/^\d+(\.\d{1,6})?$/.test(s)) throw new Error('The spend limit must be an amount in USD, such as 5 or 12.50')
	return Number(s)
}

/**
 * `a=b` lines with their 1-based line numbers, so a later check can name the line; blank lines skipped. Throws
 * naming the first line not written as `a = b`.
 * @example pairLines('\nper_image = 0.04', 'Unit prices') // [{ key: 'per_image', value: '0.04', line: 2 }]
 */
export function pairLines(text: string, what: string): Array<{ key: string; value: string; line: number }> {
	const out: Array<{ key: string; value: string; line: number }> = []
	for (const [i, raw] of text.split('\n').entries()) {
		const line = raw.trim()
		if (!line) continue
		const eq = line.indexOf('=')
		const key = eq > 0 ? line.slice(0, eq).trim() : ''
		const value = eq > 0 ? line.slice(eq + 1).trim() : ''
		if (!key || !value) throw new Error(`${what}, line ${i + 1}: write it as name = value`)
		out.push({ key, value, line: i + 1 })
	}
	return out
}

/**
 * `a=b` lines (model map, unit prices) → object; blank lines ignored. Throws naming the first bad line.
 * @example parsePairs('gpt-4o = gpt-4o-2024-08-06') // { 'gpt-4o': 'gpt-4o-2024-08-06' }
 */
export const parsePairs = (text: string, what: string): Record<string, string> => Object.fromEntries(pairLines(text, what).map((p) => [p.key, p.value]))

/**
 * The inverse of `parsePairs`, for a textarea's first value.
 * @example formatPairs({ 'gpt-4o': 'gpt-4o-2024-08-06' }) === 'gpt-4o = gpt-4o-2024-08-06'
 */
export const formatPairs = (pairs: Record<string, string | number> | undefined) =>
	Object.entries(pairs ?? {})
		.map(([k, v]) => `${k} = ${v}`)
		.join('\n')

/** Model names from a textarea: one per line or comma-separated. */
export const parseList = (text: string) =>
	text
		.split(/[\n,]/)
		.map((s) => s.trim())
		.filter(Boolean)

/**
 * A JSON object typed into a form; '' → {}. Throws saying what to type instead (the server checks the keys).
 * @example parseJsonObject('{"responses_api": false}', 'Settings') // { responses_api: false }
 */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
	const s = text.trim()
	if (!s) return {}
	let v: unknown
	try {
		v = JSON.parse(s)
	} catch (e) {
		throw new Error(`${what} must be JSON: ${(e as Error).message}`)
	}
	if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${what} must be a JSON object, such as {"responses_api": false}`)
	return v as Record<string, unknown>
}
