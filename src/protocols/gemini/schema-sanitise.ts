/**
 * JSON Schema ⇄ the OpenAPI 3.0 subset Gemini accepts in `functionDeclarations[].parameters` and `responseSchema`
 * (https://ai.google.dev/api/caching#Schema). Gemini answers 400 "Invalid JSON payload … Cannot find field" for
 * `$schema`, `additionalProperties`, `propertyNames`, `const`, `$ref`…, "Proto field is not repeating" for
 * `type: [X, "null"]`, "should be non-empty for OBJECT type" for `properties: {}`, and "items: missing field" for
 * arrays without items (router-for-me/CLIProxyAPI#97, promptfoo/promptfoo#6902, zed-industries/zed#44875).
 * @module
 */
import { isObj, type Obj } from './read'

/** Keywords of Gemini's Schema object; everything else is dropped. */
const KEEP = new Set([
	'type',
	'format',
	'title',
	'description',
	'nullable',
	'enum',
	'items',
	'minItems',
	'maxItems',
	'properties',
	'required',
	'minProperties',
	'maxProperties',
	'minLength',
	'maxLength',
	'pattern',
	'example',
	'anyOf',
	'propertyOrdering',
	'default',
	'minimum',
	'maximum',
])

/** The only `format` values Gemini takes per type (the Developer API rejects others, e.g. `uri`, for strings). */
const FORMATS: Record<string, string[]> = {
	string: ['enum', 'date-time'],
	number: ['float', 'double'],
	integer: ['int32', 'int64', 'enum'],
}

const MAX_DEPTH = 32

type Ctx = { root: Obj; refs: string[]; depth: number }

function resolveRef(ref: string, root: Obj): unknown {
	if (ref === '#') return root
	const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
	if (!m) return undefined
	const defs = root[m[1]]
	return isObj(defs) ? defs[decodeURIComponent(m[2]).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined
}

const describe = (s: Obj, note: string): void => {
	s.description = typeof s.description === 'string' && s.description ? `${s.description} (${note})` : note
}

/** Shallow merge for allOf: properties and required are unioned, other keywords keep their first value. */
function mergeAll(schemas: Obj[]): Obj {
	const out: Obj = {}
	for (const s of schemas) {
		for (const [k, v] of Object.entries(s)) {
			if (k === 'properties' && isObj(v)) out.properties = { ...(isObj(out.properties) ? out.properties : {}), ...v }
			else if (k === 'required' && Array.isArray(v))
				out.required = [...new Set([...(Array.isArray(out.required) ? out.required : []), ...v])]
			else if (out[k] === undefined) out[k] = v
		}
	}
	return out
}

function convert(input: unknown, ctx: Ctx): Obj {
	if (!isObj(input) || ctx.depth > MAX_DEPTH) return {}
	let node: Obj = input
	const inner: Ctx = { ...ctx, depth: ctx.depth + 1 }
	if (typeof node.$ref === 'string') {
		const ref = node.$ref
		const target = ctx.refs.includes(ref) ? undefined : resolveRef(ref, ctx.root)
		const { $ref: _, ...siblings } = node
		// A recursive type cannot be inlined forever: cut the cycle with an untyped object.
		if (!isObj(target)) return { type: 'object', ...pickDescription(siblings) }
		return convert({ ...target, ...siblings }, { ...inner, refs: [...ctx.refs, ref] })
	}
	if (Array.isArray(node.allOf)) {
		const { allOf, ...rest } = node
		node = mergeAll([rest, ...allOf.filter(isObj).map((s) => convert(s, inner))])
	}
	const out: Obj = {}
	let nullable = node.nullable === true
	const variants = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined
	if (variants) {
		const kept = variants.filter((v) => !(isObj(v) && v.type === 'null'))
		if (kept.length < variants.length) nullable = true
		const converted = kept.map((v) => convert(v, inner))
		if (converted.length === 1) Object.assign(out, converted[0])
		else if (converted.length > 1) out.anyOf = converted
	}
	for (const [k, v] of Object.entries(node)) {
		if (k === 'anyOf' || k === 'oneOf' || k === 'nullable' || !KEEP.has(k)) continue
		if (k === 'type') continue
		if (k === 'properties') {
			if (!isObj(v)) continue
			const props: Obj = {}
			for (const [name, sub] of Object.entries(v)) props[name] = convert(sub, inner)
			if (Object.keys(props).length) out.properties = props
		} else if (k === 'items') out.items = convert(Array.isArray(v) ? v[0] : v, inner)
		else out[k] = v
	}
	// type: "X" | ["X", "null"] | ["X", "Y"]
	const types = (Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type]).filter(
		(x): x is string => typeof x === 'string',
	)
	if (types.includes('null')) nullable = true
	const real = types.filter((x) => x !== 'null').map((x) => x.toLowerCase())
	if (real.length === 1) out.type = real[0]
	else if (real.length > 1 && !out.anyOf) out.anyOf = real.map((x) => ({ type: x }))
	if ('const' in node) applyEnum(out, [node.const])
	else if (Array.isArray(node.enum)) applyEnum(out, node.enum)
	if (out.enum && (out.enum as unknown[]).length === 0) delete out.enum
	if (nullable) out.nullable = true
	// Infer a missing type from the keywords that imply one.
	if (out.type === undefined && !out.anyOf) {
		if (out.properties) out.type = 'object'
		else if (out.items) out.type = 'array'
		else if (out.enum) out.type = 'string'
	}
	if (out.type === 'array' && !out.items) out.items = { type: 'string' }
	if (typeof out.format === 'string' && !(FORMATS[String(out.type)] ?? []).includes(out.format)) delete out.format
	if (Array.isArray(out.required)) {
		const names = isObj(out.properties) ? Object.keys(out.properties) : []
		const req = out.required.filter((r): r is string => typeof r === 'string' && names.includes(r))
		if (req.length) out.required = req
		else delete out.required
	}
	return out
}

const pickDescription = (s: Obj): Obj => (typeof s.description === 'string' ? { description: s.description } : {})

/** Gemini enums are string lists; null means nullable, other scalars are stringified with `format: enum`. */
function applyEnum(out: Obj, values: unknown[]): void {
	if (values.includes(null)) out.nullable = true
	const vals = values.filter((v) => v !== null)
	if (vals.every((v) => typeof v === 'string')) {
		out.enum = vals
		return
	}
	if (vals.every((v) => typeof v === 'number' || typeof v === 'boolean')) {
		out.enum = vals.map(String)
		// Google's Schema.enum doc gives integers this form (`{type:INTEGER, format:enum, enum:["101", "201", "301"]}`, @google/genai
		// Schema); structured output keeps integer enums as they are, in responseJsonSchema (config.ts).
		if (out.type === 'integer') out.format = 'enum'
		else if (out.type !== 'string') describe(out, `one of: ${vals.map(String).join(', ')}`)
		if (out.type !== 'integer' && out.type !== 'string') delete out.enum
		return
	}
	describe(out, `one of: ${vals.map((v) => JSON.stringify(v)).join(', ')}`)
}

/**
 * Converts a JSON Schema (tool `parameters`) to Gemini's Schema subset. Returns `undefined` for an object schema with
 * no properties, which Gemini rejects: omit `parameters` entirely in that case.
 * @example sanitiseSchema({ type: 'object', properties: { a: { type: ['string', 'null'] } }, additionalProperties: false })
 * // → { type: 'object', properties: { a: { type: 'string', nullable: true } } }
 */
export function sanitiseSchema(schema: unknown): Obj | undefined {
	if (!isObj(schema)) return undefined
	const out = convert(schema, { root: schema, refs: [], depth: 0 })
	if ((out.type === 'object' || out.type === undefined) && !out.properties && !out.anyOf) return undefined
	return out
}

/**
 * Gemini Schema's int64 fields, which its JSON gives as strings (`"minItems": "1"`, https://ai.google.dev/api/caching#Schema,
 * and so `@google/genai` types them), in either spelling → the JSON Schema keyword, which takes an integer.
 */
const INT64 = new Map(
	['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties'].flatMap((k) => [
		[k, k],
		[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), k],
	]),
)

/** A Schema field's lowerCamel name from its proto name (`max_items` → `maxItems`); lowerCamel names are kept. */
const camelField = (k: string): string => (k.includes('_') ? k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) : k)

/**
 * Converts a Gemini Schema (uppercase `OBJECT`/`STRING` types as the Google SDKs send them, `nullable`) to JSON
 * Schema for the other protocols: lowercase types, `type: [X, "null"]`, integer bounds, no Gemini-only keywords.
 * Its fields are read in either proto-JSON spelling: google-genai for Python sends a pydantic model's constraints
 * as `max_length`, `min_items`, `property_ordering` (Schema's own field names are all lowerCamel without underscores,
 * so renaming them is safe; property names, under `properties`, are never renamed).
 * @example geminiSchemaToJsonSchema({ type: 'STRING', nullable: true }) // → { type: ['string', 'null'] }
 * @example geminiSchemaToJsonSchema({ type: 'ARRAY', minItems: '1' }) // → { type: 'array', minItems: 1 }
 * @example geminiSchemaToJsonSchema({ type: 'ARRAY', max_items: 3, property_ordering: [] }) // → { type: 'array', maxItems: 3 }
 */
export function geminiSchemaToJsonSchema(schema: unknown, depth = 0): Obj {
	if (!isObj(schema) || depth > MAX_DEPTH) return {}
	const out: Obj = {}
	for (const [field, v] of Object.entries(schema)) {
		const k = camelField(field)
		if (k === 'propertyOrdering' || k === 'nullable') continue
		const bound = INT64.get(k)
		if (bound && ((typeof v === 'string' && /^\d+$/.test(v)) || Number.isInteger(v))) out[bound] = Number(v)
		else if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase()
		else if (k === 'format' && v === 'enum') continue
		else if (k === 'properties' && isObj(v)) {
			const props: Obj = {}
			for (const [name, sub] of Object.entries(v)) props[name] = geminiSchemaToJsonSchema(sub, depth + 1)
			out.properties = props
		} else if (k === 'items') out.items = geminiSchemaToJsonSchema(v, depth + 1)
		else if (k === 'anyOf' && Array.isArray(v)) out.anyOf = v.map((s) => geminiSchemaToJsonSchema(s, depth + 1))
		else out[k] = v
	}
	if (schema.nullable === true) {
		if (typeof out.type === 'string') out.type = [out.type, 'null']
		else if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }]
	}
	return out
}

const GEMINI_TYPES: Record<string, string> = { STRING: 'string', NUMBER: 'number', INTEGER: 'integer', BOOLEAN: 'boolean', ARRAY: 'array', OBJECT: 'object', NULL: 'null' }
/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const ONE_SCHEMA = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems']
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems']
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']

/**
 * A JSON Schema from a Gemini client (`responseJsonSchema`, `parametersJsonSchema`) with Gemini's uppercase type names
 * lowered, for the other vendors: Gemini takes `"type": "OBJECT"` there, as Google's SDKs' `Type` enum writes it (Gemini
 * CLI's model router sends it so), where OpenAI answers 400 ("'OBJECT' is not valid under any of the given schemas") and
 * Claude's structured outputs cannot take it. Returns the schema itself when nothing changes.
 * @example lowerTypeNames({ type: 'OBJECT', properties: { type: { type: 'STRING' } } }) // → { type: 'object', properties: { type: { type: 'string' } } }
 */
export function lowerTypeNames(schema: Obj, depth = 0): Obj {
	if (depth > MAX_DEPTH) return schema
	let out: Obj | undefined
	const set = (k: string, v: unknown) => {
		if (v === schema[k]) return
		out ??= { ...schema }
		out[k] = v
	}
	const lower = (t: unknown) => (typeof t === 'string' ? (GEMINI_TYPES[t] ?? t) : t)
	const sub = (v: unknown) => (isObj(v) ? lowerTypeNames(v, depth + 1) : v)
	const t = schema.type
	if (typeof t === 'string') set('type', lower(t))
	else if (Array.isArray(t) && t.some((x) => lower(x) !== x)) set('type', t.map(lower))
	for (const k of ONE_SCHEMA) if (isObj(schema[k])) set(k, sub(schema[k]))
	for (const k of SCHEMA_LISTS) {
		const list = schema[k]
		if (!Array.isArray(list)) continue
		const mapped = list.map(sub)
		if (mapped.some((v, i) => v !== list[i])) set(k, mapped)
	}
	for (const k of SCHEMA_MAPS) {
		const map = schema[k]
		if (!isObj(map)) continue
		const entries = Object.entries(map).map(([name, v]): [string, unknown] => [name, sub(v)])
		if (entries.some(([name, v]) => v !== map[name])) set(k, Object.fromEntries(entries))
	}
	return out ?? schema
}

