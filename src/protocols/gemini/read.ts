/**
 * Defensive readers for Gemini JSON. Google's proto-JSON mapping accepts every field under its lowerCamel name and
 * its original snake_case name (the docs' own curl samples send `system_instruction`, `inline_data`, `mime_type`),
 * so decoders read both. Keys inside user data (function args, schema property names) are never renamed.
 * @module
 */
import { isObject as isObj } from '../../core/json'

export type Obj = Record<string, unknown>

export { isObj }

/** snake_case names by lowerCamel name, computed once each: `get` runs for every field of every body and chunk. */
const snakes = new Map<string, string>()
const snake = (camel: string): string => {
	let s = snakes.get(camel)
	if (s === undefined) snakes.set(camel, (s = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)))
	return s
}

/**
 * The spelling of a field Google reads: of its lowerCamel and snake_case keys, the one written last when both are
 * there, since ProtoJSON keeps the last of several assignments "using duplicate or equivalent JSON keys"
 * (protobuf.dev/programming-guides/json); else the one present (lowerCamel when neither is).
 * @example spelledAs({ generationConfig: {}, generation_config: { max_output_tokens: 9 } }, 'generationConfig') === 'generation_config'
 */
export function spelledAs(o: Obj, camel: string): string {
	const s = snake(camel)
	if (o[s] === undefined) return camel
	if (o[camel] === undefined) return s
	let last = camel
	for (const k in o) if (k === camel || k === s) last = k
	return last
}

/**
 * Reads a field as Google does: by its lowerCamel or snake_case name, the one written last when both are there
 * (`@google/genai` sends an empty `generationConfig` beside a `generation_config` passed in `extraBody`).
 * @example get({ system_instruction: x }, 'systemInstruction') === x
 */
export function get(o: Obj, camel: string): unknown {
	const v = o[camel]
	const s = snake(camel)
	if (s === camel) return v
	const w = o[s]
	if (v === undefined) return w
	return w === undefined ? v : o[spelledAs(o, camel)]
}

/** Both spellings of a field, to tell known keys from unknown ones. */
export const spellings = (camel: string): string[] => [camel, snake(camel)]

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/**
 * A proto-JSON `bytes` value (`inlineData.data`) as standard, padded base64. Google's parser takes standard or URL-safe
 * base64, with or without padding (protobuf.dev/programming-guides/json), and google-genai for Python writes URL-safe
 * (LangChain's images and audio arrive so); OpenAI (`input_audio.data`, data URLs) and Anthropic ("…source.base64:
 * invalid base64 data") take standard base64 only.
 * @example standardBase64('-_8') === '+/8='
 */
export function standardBase64(data: string): string {
	if (data.length % 4 === 0 && !/[-_]/.test(data)) return data
	const std = data.replaceAll('-', '+').replaceAll('_', '/')
	return std + '='.repeat((4 - (std.length % 4)) % 4)
}

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
 * valid base64 and survives SDKs that decode `thoughtSignature` to bytes and re-encode it (google-genai for Python
 * re-encodes it URL-safe: the decoder turns such data back into standard base64, gemini/parts.ts).
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
