/**
 * Makes the document valid OpenAPI 3.1. @elysiajs/swagger labels it 3.0.3, but the routes' schemas are TypeBox's, JSON
 * Schema 2020-12 (`const`, `type: 'null'`, numeric `exclusiveMinimum`), which only 3.1 allows; and Elysia's
 * `t.Nullable` adds 3.0's `nullable: true` beside the `anyOf` that already lists null, which 3.1 no longer has. So the
 * document is relabelled 3.1.0 and what is 3.0-only is rewritten as 3.1 says it (QA: both labels failed validation).
 *
 * - `nullable: true` → null added to the schema's `anyOf` or `type` (dropped when null is there already), or the
 *   schema wrapped as `anyOf: [schema, {type: 'null'}]`.
 * - boolean `exclusiveMinimum`/`exclusiveMaximum` (3.0: a flag on `minimum`/`maximum`) → the bound as a number.
 * - an operation's `hide` (Elysia's `detail.hide`, copied as `hide: false` by the plugin onto those it lists) dropped.
 *
 * Only schemas are rewritten (reached through `schema` and `components.schemas`), walked by their keywords: a
 * property may be named `nullable` or `type`.
 * @module
 */

type Json = Record<string, unknown>

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Keywords whose value is a schema, a list of schemas or a map of them. */
const ONE = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties', 'additionalItems']
const LIST = ['anyOf', 'allOf', 'oneOf', 'prefixItems']
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

const isNull = (s: unknown) => isObj(s) && s.type === 'null'

function nullable(s: Json) {
	const on = s.nullable
	delete s.nullable
	if (on !== true) return
	if (Array.isArray(s.anyOf)) {
		if (!s.anyOf.some(isNull)) s.anyOf.push({ type: 'null' })
	} else if (typeof s.type === 'string' || Array.isArray(s.type)) {
		const types = [s.type].flat() as string[]
		if (!types.includes('null')) s.type = [...types, 'null']
		// `enum` restricts the values whatever `type` says.
		if (Array.isArray(s.enum) && !s.enum.includes(null)) s.enum.push(null)
	} else {
		const inner = { ...s }
		for (const k of Object.keys(s)) delete s[k]
		s.anyOf = [inner, { type: 'null' }]
	}
}

function exclusive(s: Json, flag: 'exclusiveMinimum' | 'exclusiveMaximum', bound: 'minimum' | 'maximum') {
	if (typeof s[flag] !== 'boolean') return
	if (s[flag] && typeof s[bound] === 'number') {
		s[flag] = s[bound]
		delete s[bound]
	} else delete s[flag]
}

function schema31(s: unknown) {
	if (!isObj(s)) return
	// Children first: a schema wrapped for `nullable` moves its keys into `anyOf`.
	for (const k of ONE) schema31(s[k])
	for (const k of LIST) if (Array.isArray(s[k])) for (const x of s[k]) schema31(x)
	for (const k of MAP) if (isObj(s[k])) for (const x of Object.values(s[k])) schema31(x)
	exclusive(s, 'exclusiveMinimum', 'minimum')
	exclusive(s, 'exclusiveMaximum', 'maximum')
	if (typeof s.nullable === 'boolean') nullable(s)
}

/** Every `schema` outside schemas: parameters', headers' and media types'. */
function findSchemas(v: unknown) {
	if (Array.isArray(v)) for (const x of v) findSchemas(x)
	else if (isObj(v)) for (const [k, x] of Object.entries(v)) k === 'schema' ? schema31(x) : findSchemas(x)
}

export function toOpenApi31(doc: Json): Json {
	doc.openapi = '3.1.0'
	if (isObj(doc.paths))
		for (const item of Object.values(doc.paths)) if (isObj(item)) for (const m of METHODS) if (isObj(item[m])) delete item[m].hide
	findSchemas(doc.paths)
	if (isObj(doc.components)) {
		const { schemas, ...rest } = doc.components
		if (isObj(schemas)) for (const s of Object.values(schemas)) schema31(s)
		findSchemas(rest)
	}
	return doc
}
