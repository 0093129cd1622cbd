/**
 * A client's JSON Schema → the subset Claude's structured outputs accept (`output_config.format.schema`,
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations). The API answers
 * 400 for anything outside it ("For 'integer' type, property 'minimum' is not supported"), so the constraints it cannot
 * enforce move into the field's description, where the model still reads them (what Anthropic's own SDKs do); every
 * object gets `additionalProperties: false`. A schema the subset cannot express (recursive, untyped, not an object at
 * the root) gives `undefined`: the caller then asks for JSON in the system prompt instead.
 * @module
 */
import { isObject } from '../../core/json'

type Schema = Record<string, unknown>

const STRING_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid'])
/** Keywords that annotate rather than constrain: dropped, not described. */
const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', 'strict'])

const isPrimitive = (v: unknown) => v === null || typeof v !== 'object'

class Inexpressible extends Error {}

export function claudeOutputSchema(schema: Schema): Schema | undefined {
	if (schema.type !== 'object' && !(typeof schema.$ref === 'string')) return undefined
	const defs = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) }
	if (isRecursive(schema, defs)) return undefined
	try {
		return convert(schema)
	} catch (e) {
		if (e instanceof Inexpressible) return undefined
		throw e
	}
}

/** Local `$ref`s (`#/$defs/X`, `#/definitions/X`) that reach themselves again. */
function isRecursive(root: Schema, defs: Schema): boolean {
	const refsIn = (node: unknown, out: Set<string>): Set<string> => {
		if (Array.isArray(node)) for (const n of node) refsIn(n, out)
		else if (isObject(node))
			for (const [k, v] of Object.entries(node)) {
				if (k === '$ref' && typeof v === 'string') out.add(v.replace(/^#\/(\$defs|definitions)\//, ''))
				else if (k !== '$defs' && k !== 'definitions') refsIn(v, out)
			}
		return out
	}
	const state = new Map<string, 'open' | 'done'>()
	const visit = (name: string): boolean => {
		if (state.get(name) === 'open') return true
		if (state.get(name) === 'done' || !(name in defs)) return false
		state.set(name, 'open')
		for (const r of refsIn(defs[name], new Set())) if (visit(r)) return true
		state.set(name, 'done')
		return false
	}
	for (const r of refsIn(root, new Set())) if (visit(r)) return true
	return Object.keys(defs).some(visit)
}

function convert(s: Schema): Schema {
	if (typeof s.$ref === 'string') return { $ref: s.$ref }
	const out: Schema = {}
	const left: Schema = { ...s }
	const take = (k: string) => {
		const v = left[k]
		delete left[k]
		return v
	}
	for (const k of ANNOTATIONS) delete left[k]
	for (const k of ['$defs', 'definitions']) {
		const defs = take(k)
		if (isObject(defs)) out[k] = Object.fromEntries(Object.entries(defs).map(([n, d]) => [n, convert(isObject(d) ? d : {})]))
	}
	if (Array.isArray(left.enum) && left.enum.length && left.enum.every(isPrimitive)) out.enum = take('enum')
	if ('const' in left && isPrimitive(left.const)) out.const = take('const')
	const type = take('type')
	const literal = 'enum' in out || 'const' in out
	const anyOf = take('anyOf') ?? take('oneOf')
	const allOf = take('allOf')
	if (Array.isArray(anyOf)) out.anyOf = anyOf.map((v) => convert(isObject(v) ? v : {}))
	if (Array.isArray(allOf)) out.allOf = allOf.map((v) => convert(isObject(v) ? v : {}))
	if (!literal && type !== undefined) out.type = type
	if (!literal && type === undefined && !out.anyOf && !out.allOf) throw new Inexpressible()
	for (const k of ['title', 'description']) if (typeof left[k] === 'string') out[k] = take(k)
	const types = Array.isArray(type) ? type : [type]
	if (types.includes('object')) {
		const props = take('properties')
		out.properties = Object.fromEntries(Object.entries(isObject(props) ? props : {}).map(([k, v]) => [k, convert(isObject(v) ? v : {})]))
		if (Array.isArray(left.required)) out.required = take('required')
		// Only `false` is accepted; a map of extra keys the model may invent cannot be enforced.
		take('additionalProperties')
		out.additionalProperties = false
	}
	if (types.includes('array')) {
		const items = take('items')
		if (isObject(items)) out.items = convert(items)
		if (left.minItems === 0 || left.minItems === 1) out.minItems = take('minItems')
	}
	if (types.includes('string') && typeof left.format === 'string' && STRING_FORMATS.has(left.format)) out.format = take('format')
	// What is left constrains without being enforceable: said in words, in the description.
	const rest = Object.entries(left)
	if (rest.length) {
		const said = rest.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')
		out.description = `${typeof out.description === 'string' ? `${out.description}\n\n` : ''}{${said}}`
	}
	return out
}
