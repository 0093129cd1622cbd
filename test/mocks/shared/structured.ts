/**
 * Structured output: when a request asks for JSON (OpenAI chat `response_format`, Responses `text.format`, Anthropic
 * `output_config.format`, Gemini `responseMimeType: application/json` with `responseJsonSchema`/`responseSchema`),
 * the mocks answer a JSON document that satisfies the schema instead of the usual text: every string is the last
 * user text, numbers 42, booleans true, arrays one element, enums their first value. A local `$ref` (`#/$defs/…`,
 * `#/definitions/…`, which Pydantic and Zod emit for every nested model) is followed, as all three vendors take them:
 * OpenAI strict schemas, Anthropic structured outputs and Gemini `responseJsonSchema` list `$ref`/`$defs` as supported.
 * @module
 */
import { asArr, asObj, asStr } from './json'

/** The JSON format a request asked for: a schema, or `{}` for "any JSON object" (json_object mode). */
export type JsonFormat = { schema: Record<string, unknown> }

/** The schema a local `$ref` (`#/$defs/Step`, `#/definitions/Step`) points at in `root`, or undefined. */
function resolveRef(ref: string, root: Record<string, unknown>): unknown {
	if (!ref.startsWith('#/')) return undefined
	let at: unknown = root
	for (const key of ref.slice(2).split('/')) at = asObj(at)?.[key.replaceAll('~1', '/').replaceAll('~0', '~')]
	return at
}

/**
 * A value satisfying `schema` (the subset the SDKs send: object, array, string, number, integer, boolean, enum,
 * anyOf/oneOf, nullable types, local `$ref`s into `root`; Gemini's upper-case OpenAPI types too).
 * @example sampleFor({ type: 'object', properties: { city: { type: 'string' } } }, 'hi') // { city: 'hi' }
 */
export function sampleFor(schema: unknown, text: string, root: Record<string, unknown> = asObj(schema) ?? {}, refs = 0): unknown {
	let s = asObj(schema) ?? {}
	// A recursive model refers to itself: past a few references the answer stops with an empty object.
	if (typeof s.$ref === 'string') {
		s = refs > 8 ? {} : (asObj(resolveRef(s.$ref, root)) ?? {})
		refs++
	}
	const en = asArr(s.enum)
	if (en.length) return en[0]
	if ('const' in s) return s.const
	const alt = asArr(s.anyOf ?? s.oneOf).map(asObj).find((x) => x && String(x.type).toLowerCase() !== 'null')
	if (alt) return sampleFor(alt, text, root, refs)
	const types = (Array.isArray(s.type) ? s.type : [s.type]).map((t) => String(t ?? '').toLowerCase()).filter((t) => t !== 'null')
	const type = types[0] || (s.properties ? 'object' : s.items ? 'array' : 'object')
	if (type === 'string') return text
	if (type === 'number' || type === 'integer') return 42
	if (type === 'boolean') return true
	if (type === 'array') return [sampleFor(s.items, text, root, refs)]
	const props = asObj(s.properties) ?? {}
	return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sampleFor(v, text, root, refs)]))
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
