/**
 * Structured output: when a request asks for JSON (OpenAI chat `response_format`, Responses `text.format`, Anthropic
 * `output_config.format`, Gemini `responseMimeType: application/json` with `responseJsonSchema`/`responseSchema`),
 * the mocks answer a JSON document that satisfies the schema instead of the usual text: every string is the last
 * user text, numbers 42, booleans true, arrays one element, enums their first value.
 * @module
 */
import { asArr, asObj, asStr } from './json'

/** The JSON format a request asked for: a schema, or `{}` for "any JSON object" (json_object mode). */
export type JsonFormat = { schema: Record<string, unknown> }

/**
 * A value satisfying `schema` (the subset the SDKs send: object, array, string, number, integer, boolean, enum,
 * anyOf/oneOf, nullable types; Gemini's upper-case OpenAPI types too).
 * @example sampleFor({ type: 'object', properties: { city: { type: 'string' } } }, 'hi') // { city: 'hi' }
 */
export function sampleFor(schema: unknown, text: string): unknown {
	const s = asObj(schema) ?? {}
	const en = asArr(s.enum)
	if (en.length) return en[0]
	if ('const' in s) return s.const
	const alt = asArr(s.anyOf ?? s.oneOf).map(asObj).find((x) => x && String(x.type).toLowerCase() !== 'null')
	if (alt) return sampleFor(alt, text)
	const types = (Array.isArray(s.type) ? s.type : [s.type]).map((t) => String(t ?? '').toLowerCase()).filter((t) => t !== 'null')
	const type = types[0] || (s.properties ? 'object' : s.items ? 'array' : 'object')
	if (type === 'string') return text
	if (type === 'number' || type === 'integer') return 42
	if (type === 'boolean') return true
	if (type === 'array') return [sampleFor(s.items, text)]
	const props = asObj(s.properties) ?? {}
	return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sampleFor(v, text)]))
}

/** The answer text for a JSON format. */
export const structuredText = (f: JsonFormat, lastUserText: string): string => JSON.stringify(sampleFor(f.schema, lastUserText))

/** A `{type: 'json_schema', schema}` or `{type: 'json_object'}` format object (`schema` at `schemaAt` in it). */
export function formatOf(f: unknown, schemaOf: (f: Record<string, unknown>) => unknown): JsonFormat | undefined {
	const o = asObj(f)
	const type = asStr(o?.type)
	if (type === 'json_object') return { schema: {} }
	if (type === 'json_schema') return { schema: asObj(schemaOf(o!)) ?? {} }
	return undefined
}
