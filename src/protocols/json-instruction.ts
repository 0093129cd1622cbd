/**
 * A JSON answer format stated as a system instruction, for an upstream that cannot enforce it alongside the rest of the
 * request: Claude without structured outputs (Anthropic's documented "prompt for JSON" approach), Gemini models before
 * Gemini 3 when function tools are offered too (protocols/gemini/request.ts), OpenAI's JSON mode when nothing the
 * client wrote asks for JSON, and a schema OpenAI's structured outputs cannot take at its root (`systemAskingJson`).
 * @module
 */
import type { ChatRequest, ResponseFormat, TextPart } from '../core/ir'

/**
 * The instruction for a JSON response format; undefined for plain text.
 * @example jsonInstruction({ type: 'json_object' }) // 'Respond with a single valid JSON object and nothing else (…).'
 */
export function jsonInstruction(f: ResponseFormat): string | undefined {
	if (f.type === 'json_object') return 'Respond with a single valid JSON object and nothing else (no prose, no code fences).'
	if (f.type === 'json_schema')
		return `Respond with a single ${jsonKind(f.schema)} that conforms to the JSON Schema "${f.name}" below, and nothing else (no prose, no code fences).\n${JSON.stringify(f.schema)}`
	return undefined
}

/**
 * What the schema's root asks for, so the instruction does not contradict it: Gemini's `responseSchema` may be a list
 * (google-genai's `response_schema=list[Model]` gives `type: ARRAY`) or a single enum or scalar value.
 * @example jsonKind({ type: 'ARRAY', items: {} }) === 'JSON array'
 */
function jsonKind(schema: Record<string, unknown>): string {
	const type = typeof schema.type === 'string' ? schema.type.toLowerCase() : undefined
	return type === 'array' ? 'JSON array' : type === undefined || type === 'object' ? 'JSON object' : 'JSON value'
}

/**
 * Whether a schema's root is an object, as OpenAI's structured outputs require ("the root level object of a schema must
 * be an object": 400 otherwise). Gemini's list or enum `responseSchema` is not. Such a schema goes to OpenAI as an
 * instruction with no response format (`systemAskingJson`), as Claude's prompted JSON: JSON mode could not give a list
 * or a bare value either ("constrained to only generate strings that parse into valid JSON object").
 * @example objectRooted({ type: 'array', items: {} }) === false
 */
const objectRooted = (schema: Record<string, unknown>): boolean => schema.type === 'object'

/** Whether a format goes to OpenAI as the instruction alone, with no format (`objectRooted`). */
export const formatAsInstruction = (f: ResponseFormat | undefined): boolean => f?.type === 'json_schema' && !objectRooted(f.schema)

/**
 * The system text of a request for an OpenAI upstream: OpenAI refuses JSON mode unless the conversation mentions JSON
 * (400 "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'", the
 * same for the Responses `input`), which another vendor's client did not write for (Gemini's `responseMimeType:
 * application/json` without a schema needs no such word): the instruction is added then. A schema whose root is no
 * object (`objectRooted`) is not sent as a format, so it is always given as the instruction.
 */
export function systemAskingJson(req: ChatRequest): TextPart[] | undefined {
	const f = req.responseFormat
	if (f && formatAsInstruction(f)) return [...(req.system ?? []), { type: 'text', text: jsonInstruction(f)! }]
	if (f?.type !== 'json_object') return req.system
	const mentions = (text: string) => /json/i.test(text)
	if (req.system?.some((p) => mentions(p.text))) return req.system
	if (req.messages.some((m) => m.content.some((p) => p.type === 'text' && mentions(p.text)))) return req.system
	return [...(req.system ?? []), { type: 'text', text: jsonInstruction(f)! }]
}
