/**
 * The price dialog's text fields → the body of POST or PATCH /api/models, and the server's refusals in the dialog's
 * words (the field's label, or the unit-price line). Pure, so the unit tests run it without a browser.
 * @module
 */
import { UNIT_PRICE_NAMES, isUnitPrice, namesPrice } from '../../billing/unit-prices'
import { ApiError, fieldDetail, messageOf } from '../api'
import { pairLines, parseUsd } from './input'

/** What the dialog's fields hold, as typed. */
export type PriceForm = {
	name: string
	input: string
	output: string
	cacheRead: string
	cacheWrite: string
	perRequest: string
	maxOut: string
	context: string
	units: string
}

/** API field → the dialog field it is typed in, and that field's label. */
const FIELDS = {
	input_per_mtok: ['input', 'Input (USD / 1M tokens)'],
	output_per_mtok: ['output', 'Output (USD / 1M tokens)'],
	cache_read_per_mtok: ['cacheRead', 'Cache read (USD / 1M tokens)'],
	cache_write_per_mtok: ['cacheWrite', 'Cache write (USD / 1M tokens)'],
	per_request: ['perRequest', 'Per request (USD)'],
	max_output_tokens: ['maxOut', 'Max output tokens'],
	context_window: ['context', 'Context window (tokens)'],
	name: ['name', 'Model name'],
} as const satisfies Record<string, readonly [keyof PriceForm, string]>

const UNITS_LABEL = 'Unit prices'

const unknownUnit = (key: string) => `"${key}" is not a unit price this gateway charges. Use one of: ${UNIT_PRICE_NAMES}`

/** parseUsd, its message led by where the amount was typed. */
function amount(text: string, where: string): number {
	try {
		return parseUsd(text)
	} catch (e) {
		const m = messageOf(e)
		throw new Error(`${where}: ${m.charAt(0).toLowerCase()}${m.slice(1)}`)
	}
}

/**
 * The request body. Adding (no `stored`), an empty field is left out; editing, an empty field or a removed unit-price
 * line is sent as null, which removes the stored price (PATCH keeps whatever is left out).
 * @example priceBody({ ...form, perRequest: '' }, { prices: { per_image: 0.04 } }) // { …, per_request: null, per_image: null }
 */
export function priceBody(f: PriceForm, stored?: { prices: Record<string, number> }): Record<string, unknown> {
	const body: Record<string, unknown> = { name: f.name.trim() }
	for (const [key, [field, label]] of Object.entries(FIELDS)) {
		if (key === 'name') continue
		const text = f[field].trim()
		if (!text) {
			if (stored) body[key] = null
		} else if (key === 'max_output_tokens' || key === 'context_window') {
			if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(`${label}: enter a whole number above 0, or leave it empty for the model's default`)
			body[key] = Number(text)
		} else body[key] = amount(text, label)
	}
	const lines = pairLines(f.units, UNITS_LABEL)
	for (const { key, value, line } of lines) {
		const where = `${UNITS_LABEL}, line ${line}`
		if (!isUnitPrice(key)) throw new Error(`${where}: ${unknownUnit(key)}`)
		body[key] = amount(value, where)
	}
	// Every field left empty would add the model free, unasked: the server refuses it too (modules/admin/models).
	if (!stored && !namesPrice(body)) throw new Error(`Enter a price: ${FIELDS.input_per_mtok[1]} and ${FIELDS.output_per_mtok[1]} (0 for a model served free), or another price`)
	// A stored name from before names were checked is not sent: the server refuses it, and drops it on any update.
	for (const key of Object.keys(stored?.prices ?? {})) if (!(key in body) && isUnitPrice(key)) body[key] = null
	return body
}

/**
 * A failed save in the dialog's words: a 400 about one field is led by that field's label, or by the unit-price line
 * it came from, instead of the API's field name. Anything else keeps the server's message.
 * @example priceError(new ApiError('Input_per_mtok: USD amount out of range: 1e11', 400, undefined, 'input_per_mtok'), form)
 *   // 'Input (USD / 1M tokens): USD amount out of range: 1e11'
 */
export function priceError(e: unknown, f: PriceForm): string {
	if (!(e instanceof ApiError) || e.status !== 400 || !e.param) return messageOf(e)
	const param = e.param
	// The server names the field as `Invalid body: "field" …` (schema) or `field: …` (amount checks).
	const detail = e.detail ?? fieldDetail(e.message, param) ?? e.message
	const known = FIELDS[param as keyof typeof FIELDS]
	if (known) return `${known[1]}: ${detail}`
	const line = pairLines(f.units, UNITS_LABEL).find((p) => p.key === param)?.line
	const where = line ? `${UNITS_LABEL}, line ${line}` : UNITS_LABEL
	return `${where}: ${isUnitPrice(param) ? detail : unknownUnit(param)}`
}
