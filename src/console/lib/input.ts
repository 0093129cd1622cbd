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

/** The most a per-minute limit holds: the database stores it as `integer` (the management API checks it too). */
const MAX_PER_MINUTE = 2_147_483_647

/**
 * A per-minute limit field (requests, tokens): '' → null (no limit); otherwise a whole number from 1, `,` between
 * thousands taken. `what` names the field in the message.
 * @example parsePerMinute('10,000', 'Tokens per minute') === 10000; parsePerMinute(' ', 'Requests per minute') === null
 */
export function parsePerMinute(text: string, what: string): number | null {
	const s = text.trim()
	if (!s) return null
	const digits = /^\d{1,3}(,\d{3})+$/.test(s) ? s.replaceAll(',', '') : s
	if (!/^\d+$/.test(digits) || Number(digits) < 1) throw new Error(`${what} must be a whole number above 0, such as 60, or empty for no limit`)
	if (Number(digits) > MAX_PER_MINUTE) throw new Error(`${what} must be at most ${MAX_PER_MINUTE.toLocaleString('en-US')}: ${s} is out of range`)
	return Number(digits)
}

/**
 * The allowed-models field: names separated by commas or lines → a list without repeats; '' → null (every model).
 * A name holding a space is refused: names never do, and "gpt-4o gpt-4o-mini" kept as one would match no model.
 * @example parseModelList('gpt-4o, gpt-4o-mini') // ['gpt-4o', 'gpt-4o-mini']
 */
export function parseModelList(text: string): string[] | null {
	const names = [...new Set(parseList(text))]
	const spaced = names.find((n) => /\s/.test(n))
	if (spaced) throw new Error(`Allowed models: separate the names with commas (“${spaced}” holds a space)`)
	return names.length ? names : null
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
