/**
 * Anthropic's checks on a structured-outputs schema (`output_config.format`, or the beta's `output_format`):
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations — "if you use an
 * unsupported feature, you'll receive a 400 error with details", worded as the API does
 * ("output_config.format.schema: For 'integer' type, property 'minimum' is not supported"). Also refuses a format
 * on a conversation that ends with an assistant turn (prefill is incompatible with structured outputs). Strict tools'
 * input schemas (strict tool use) are held to the same subset.
 * @module
 */
import { asArr, asObj, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { invalid } from './errors'

const UNSUPPORTED: Record<string, string[]> = {
	integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
	number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
	string: ['minLength', 'maxLength'],
	array: ['maxItems', 'uniqueItems'],
}

function check(s: Obj, at: string): string | undefined {
	for (const type of asArr(s.type).length ? asArr(s.type) : [s.type]) {
		const t = String(type)
		const bad = (UNSUPPORTED[t] ?? []).find((k) => k in s)
		if (bad) return `${at}: For '${t}' type, property '${bad}' is not supported`
		if (t === 'array' && s.minItems !== undefined && s.minItems !== 0 && s.minItems !== 1) return `${at}: For 'array' type, 'minItems' values other than 0 or 1 are not supported`
	}
	const children: Obj[] = [
		...Object.values(asObj(s.properties) ?? {}),
		s.items,
		...asArr(s.anyOf),
		...asArr(s.allOf),
		...Object.values(asObj(s.$defs) ?? {}),
		...Object.values(asObj(s.definitions) ?? {}),
	]
		.map(asObj)
		.filter((c): c is Obj => c !== undefined)
	for (const c of children) {
		const found = check(c, at)
		if (found) return found
	}
	return undefined
}

/** Strict tools (`strict: true`) take the same schema subset. */
export function checkStrictTools(b: Obj): JsonReply | undefined {
	for (const [i, t] of asArr(b.tools).entries()) {
		const tool = asObj(t)
		const schema = asObj(tool?.input_schema)
		const refused = tool?.strict === true && schema ? check(schema, `tools.${i}.custom.input_schema`) : undefined
		if (refused) return invalid(refused)
	}
	return undefined
}

export function checkOutputFormat(b: Obj): JsonReply | undefined {
	const [path, format] = asObj(asObj(b.output_config)?.format) ? ['output_config.format', asObj(asObj(b.output_config)?.format)] : ['output_format', asObj(b.output_format)]
	if (!format) return undefined
	const messages = asArr(b.messages).map((m) => asObj(m) ?? {})
	if (messages[messages.length - 1]?.role === 'assistant') return invalid('Prefilling assistant messages is not supported when using structured outputs.')
	const schema = asObj(format.schema)
	if (!schema) return format.type === 'json_schema' ? invalid(`${path}.schema: Field required`) : undefined
	const refused = check(schema, `${path}.schema`)
	return refused ? invalid(refused) : undefined
}
