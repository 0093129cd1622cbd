/**
 * OpenAI's checks on a JSON schema (a `response_format`, a function's `parameters`): every schema is validated against
 * JSON Schema, so a `type` that is not one of its seven names (Gemini's uppercase `OBJECT`, `STRING`…) is 400 "Invalid
 * schema for response_format '…': In context=(…), 'OBJECT' is not valid under any of the given schemas", strict or not.
 * And OpenAI's strict-mode schema rules (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas):
 * with `strict: true` (a response format or a function tool), every object must set `additionalProperties: false` and list every property in `required`;
 * OpenAI answers 400 "Invalid schema for response_format '…': In context=(…), …" otherwise.
 * A response format's schema must be an object at its root ("the root level object of a schema must be an object"),
 * strict or not: 400 "… schema must be a JSON Schema of 'type: "object"', got 'type: "array"'." otherwise.
 * @module
 */
import { asArr, asObj, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { openaiError } from './errors'

function fault(s: Obj, context: string[]): string | undefined {
	const types = asArr(s.type).length ? asArr(s.type) : [s.type]
	const props = asObj(s.properties)
	const at = `In context=(${context.map((c) => `'${c}'`).join(', ')}${context.length === 1 ? ',' : ''})`
	if (types.includes('object') || props) {
		if (s.additionalProperties !== false) return `${at}, 'additionalProperties' is required to be supplied and to be false.`
		const missing = Object.keys(props ?? {}).filter((k) => !asArr(s.required).includes(k))
		if (missing.length) return `${at}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0]}'.`
	}
	for (const [k, v] of Object.entries(props ?? {})) {
		const child = asObj(v)
		const found = child && fault(child, [...context, 'properties', k])
		if (found) return found
	}
	const items = asObj(s.items)
	if (items) return fault(items, [...context, 'items'])
	return undefined
}

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'])

/** A `type` that is no JSON Schema type name, in `s` or a schema below it. */
function badType(s: Obj, context: string[]): string | undefined {
	const bad = (asArr(s.type).length ? asArr(s.type) : s.type === undefined ? [] : [s.type]).find((t) => typeof t !== 'string' || !JSON_TYPES.has(t))
	if (bad !== undefined) return `In context=(${context.map((c) => `'${c}'`).join(', ')}${context.length === 1 ? ',' : ''}), ${JSON.stringify(bad).replaceAll('"', "'")} is not valid under any of the given schemas.`
	const below: Array<[unknown, string[]]> = [
		...Object.entries(asObj(s.properties) ?? {}).map(([k, v]): [unknown, string[]] => [v, [...context, 'properties', k]]),
		[s.items, [...context, 'items']],
		...['anyOf', 'oneOf', 'allOf'].flatMap((k) => asArr(s[k]).map((v, i): [unknown, string[]] => [v, [...context, k, String(i)]])),
		...['$defs', 'definitions'].flatMap((k) => Object.entries(asObj(s[k]) ?? {}).map(([n, v]): [unknown, string[]] => [v, [...context, k, n]])),
	]
	for (const [v, at] of below) {
		const child = asObj(v)
		const found = child && badType(child, at)
		if (found) return found
	}
	return undefined
}

/** The 400 for a function tool whose parameters break the rules (type names always, the strict ones with `strict`), or undefined. */
export function checkStrictTools(b: Obj): JsonReply | undefined {
	for (const t of asArr(b.tools)) {
		const fn = asObj(asObj(t)?.function)
		const typeFault = badType(asObj(fn?.parameters) ?? {}, [])
		if (typeFault) return openaiError(400, `Invalid schema for function '${String(fn?.name)}': ${typeFault}`, 'tools', 'invalid_function_parameters')
		if (fn?.strict !== true) continue
		const found = fault(asObj(fn.parameters) ?? {}, [])
		if (found) return openaiError(400, `Invalid schema for function '${String(fn.name)}': ${found}`, 'tools', 'invalid_function_parameters')
	}
	return undefined
}

/** The fault of a response format's schema whose root is not an object, as OpenAI words it (a missing type is Python's None). */
function rootFault(schema: Obj): string | undefined {
	if (schema.type === 'object') return undefined
	return `schema must be a JSON Schema of 'type: "object"', got 'type: "${typeof schema.type === 'string' ? schema.type : 'None'}"'.`
}

/** The 400 for a Responses `text.format` json_schema whose root is not an object (chat: `checkStrictFormat`). */
export function checkFormatRoot(b: Obj): JsonReply | undefined {
	const f = asObj(asObj(b.text)?.format)
	const root = f?.type === 'json_schema' ? rootFault(asObj(f.schema) ?? {}) : undefined
	return root ? openaiError(400, `Invalid schema for response_format '${String(f?.name)}': ${root}`, 'text.format.schema', 'invalid_json_schema') : undefined
}

/** The 400 for a `response_format` schema that breaks the rules (an object root and type names always, the strict ones with `strict`), or undefined. */
export function checkStrictFormat(b: Obj): JsonReply | undefined {
	const rf = asObj(b.response_format)
	const js = asObj(rf?.json_schema)
	const root = rf?.type === 'json_schema' ? rootFault(asObj(js?.schema) ?? {}) : undefined
	if (root) return openaiError(400, `Invalid schema for response_format '${String(js?.name)}': ${root}`, 'response_format', 'invalid_json_schema')
	const typeFault = rf?.type === 'json_schema' ? badType(asObj(js?.schema) ?? {}, []) : undefined
	if (typeFault) return openaiError(400, `Invalid schema for response_format '${String(js?.name)}': ${typeFault}`, 'response_format', 'invalid_json_schema')
	if (rf?.type !== 'json_schema' || js?.strict !== true) return undefined
	const found = fault(asObj(js.schema) ?? {}, [])
	return found ? openaiError(400, `Invalid schema for response_format '${String(js.name)}': ${found}`, 'response_format', 'invalid_json_schema') : undefined
}
