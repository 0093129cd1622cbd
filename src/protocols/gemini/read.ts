/**
 * Defensive readers for Gemini JSON. Google's proto-JSON mapping accepts every field under its lowerCamel name and
 * its original snake_case name (the docs' own curl samples send `system_instruction`, `inline_data`, `mime_type`),
 * so decoders read both. Keys inside user data (function args, schema property names) are never renamed.
 * @module
 */

export type Obj = Record<string, unknown>

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * Reads a field by its lowerCamel name, falling back to the snake_case spelling.
 * @example get({ system_instruction: x }, 'systemInstruction') === x
 */
export function get(o: Obj, camel: string): unknown {
	const v = o[camel]
	return v !== undefined ? v : o[snake(camel)]
}

/** Both spellings of a field, to tell known keys from unknown ones. */
export const spellings = (camel: string): string[] => [camel, snake(camel)]

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** Gemini ids and names may hold characters the other protocols' id patterns reject (Anthropic: ^[a-zA-Z0-9_-]+$). */
export const idSafe = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_')

/**
 * A tool-call id for a Gemini `functionCall` that came without one (the Developer API often omits `id`).
 * Deterministic from its position, so the same history always yields the same ids and a later
 * `functionResponse` can be matched to its call.
 * @example syntheticCallId(3, 0, 'get_weather') === 'call_3_0_get_weather'
 */
export const syntheticCallId = (scope: string | number, n: number, name: string): string =>
	`call_${idSafe(String(scope))}_${n}_${idSafe(name)}`

/**
 * Prefix marking an Anthropic `redacted_thinking` payload carried in a Gemini `thoughtSignature` (Gemini has no
 * encrypted-thinking part). It is base64 of `redacted:` (9 bytes, no padding), so prefix + base64 data is still
 * valid base64 and survives SDKs that decode `thoughtSignature` to bytes and re-encode it.
 */
export const REDACTED_PREFIX = 'cmVkYWN0ZWQ6'

/**
 * Renders code-execution parts (`executableCode`, `codeExecutionResult`) as markdown text: the canonical model has no
 * slot for them and other protocols have no equivalent, so they are shown rather than dropped.
 */
export function codePartText(part: Obj): string | undefined {
	const code = get(part, 'executableCode')
	if (isObj(code)) {
		const lang = (str(code.language) ?? '').toLowerCase().replace('language_unspecified', '')
		return `\n\`\`\`${lang}\n${str(code.code) ?? ''}\n\`\`\`\n`
	}
	const result = get(part, 'codeExecutionResult')
	if (isObj(result)) return `\n\`\`\`output\n${str(result.output) ?? ''}\n\`\`\`\n`
	return undefined
}
