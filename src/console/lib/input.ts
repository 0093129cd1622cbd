/** Parsing of amounts typed into forms, with messages that say what to type instead. */
import { MICROS_PER_USD, microsToUsd, usdToMicros } from '../../billing/money'

/**
 * Money as people type it: a leading `$` (after any minus), a trailing `USD`, spaces around, `,` between thousands.
 * Gives the plain decimal text, or undefined when it is not an amount.
 * @example usdText(' $1,000.50 USD ') === '1000.50'; usdText('1,00') === undefined
 */
function usdText(text: string, signed: boolean): string | undefined {
	const m = /^(-?)\s*\$?\s*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s*usd)?$/i.exec(text.trim())
	if (!m || (m[1] && !signed)) return undefined
	return `${m[1]}${m[2]!.replaceAll(',', '')}${m[3] ?? ''}`
}

/**
 * A USD amount with at most 6 decimals (the gateway's precision), read by the ledger's own parser; `signed` allows a
 * leading minus. A `$`, `USD` and thousands separators are taken (see usdText).
 * @example parseUsd('2.50') === 2.5; parseUsd('-$5', true) === -5; parseUsd('$1,000') === 1000
 */
export function parseUsd(text: string, signed = false, what = 'Enter an amount in USD'): number {
	const s = usdText(text, signed)
	const example = signed ? '10, $2.50 or -5' : '10 or $2.50'
	if (s === undefined) throw new Error(`${what}, such as ${example}`)
	try {
		return microsToUsd(usdToMicros(s))
	} catch (e) {
		// Past what integer micro-USD holds, or finer than a micro-USD.
		if (/out of range/.test((e as Error).message)) throw new Error(`${what} up to ${MAX_USD.toLocaleString('en-US')}: ${text.trim()} is out of range`)
		throw new Error(`${what} with at most 6 decimals, such as ${example}`)
	}
}

const MAX_USD = Math.floor(Number.MAX_SAFE_INTEGER / MICROS_PER_USD)

/**
 * The spend-limit field: '' → null (no limit); otherwise a non-negative USD amount, typed as parseUsd takes it.
 * @example parseLimit(' $5.5 ') === 5.5; parseLimit('') === null
 */
export const parseLimit = (text: string): number | null => (text.trim() ? parseUsd(text, false, 'The spend limit must be an amount in USD') : null)

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
