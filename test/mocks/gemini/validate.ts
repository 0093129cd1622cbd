/**
 * Gemini request checks with the API's own texts: the OpenAPI-subset `parameters` schema (unknown keys such as
 * `$schema`/`additionalProperties` and list-valued `type` are rejected as "Invalid JSON payload received"), and
 * Gemini 3 thought signatures on function calls of the current turn (ai.google.dev/gemini-api/docs/thought-signatures).
 * @module
 */

import { asArr, asObj, pick, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { base64, hash36 } from '../shared/text'
import { badRequest, geminiError } from './errors'
import { checkParts } from './media'

/** Fields of Gemini's `Schema` message (ai.google.dev/api/caching#Schema), in both JSON spellings. */
const SCHEMA_FIELDS = new Set(
	[
		'type format title description nullable enum maxItems minItems properties required minProperties maxProperties',
		'minLength maxLength pattern example anyOf propertyOrdering default items minimum maximum',
		'max_items min_items min_properties max_properties min_length max_length any_of property_ordering',
	]
		.join(' ')
		.split(' '),
)

type Violation = { field: string; description: string }

function walkSchema(schema: Obj, at: string, out: Violation[]): void {
	for (const [key, value] of Object.entries(schema)) {
		if (!SCHEMA_FIELDS.has(key)) {
			out.push({ field: at, description: `Invalid JSON payload received. Unknown name "${key}" at '${at}': Cannot find field.` })
		} else if (key === 'type' && Array.isArray(value)) {
			out.push({ field: at, description: `Invalid JSON payload received. Unknown name "type" at '${at}': Proto field is not repeating, cannot start list.` })
		}
	}
	const props = asObj(schema.properties)
	if (props) Object.values(props).forEach((p, i) => asObj(p) && walkSchema(p as Obj, `${at}.properties[${i}].value`, out))
	const items = asObj(schema.items)
	if (items) walkSchema(items, `${at}.items`, out)
	asArr(pick(schema, 'anyOf', 'any_of')).forEach((s, i) => asObj(s) && walkSchema(s as Obj, `${at}.any_of[${i}]`, out))
}

/** Function declarations of `tools` (both spellings). */
export const declarationsOf = (tools: unknown): Obj[][] =>
	asArr(tools).map((t) => asArr(pick(asObj(t), 'functionDeclarations', 'function_declarations')).map((d) => asObj(d) ?? {}))

/** FunctionDeclaration.name: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 64" (https://ai.google.dev/api/caching#FunctionDeclaration). */
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/

/** Every function name must be one Gemini takes; it answers each other one with a field violation (google-gemini/gemini-cli#2966, #7869). */
export function checkFunctionNames(tools: unknown): JsonReply | undefined {
	const out: Violation[] = []
	declarationsOf(tools).forEach((decls, i) =>
		decls.forEach((d, j) => {
			if (FUNCTION_NAME.test(String(d.name))) return
			const field = `tools[${i}].function_declarations[${j}].name`
			out.push({ field, description: `* GenerateContentRequest.${field}: Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.` })
		}),
	)
	if (out.length > 0) return badRequest(out)
}

/**
 * `generationConfig.stopSequences`: "The set of character sequences (up to 5) that will stop output generation"
 * (ai.google.dev/api/generate-content#generationconfig); more are a 400 INVALID_ARGUMENT field violation (the wording
 * here is the mock's own).
 */
export function checkStopSequences(b: Obj): JsonReply | undefined {
	const stops = asArr(pick(asObj(pick(b, 'generationConfig', 'generation_config')), 'stopSequences', 'stop_sequences'))
	if (stops.length <= 5) return undefined
	const field = 'generation_config.stop_sequences'
	return badRequest([{ field, description: `* GenerateContentRequest.${field}: at most 5 stop sequences are allowed, got ${stops.length}` }])
}

/** Every `parameters` schema must stay inside the OpenAPI subset (`parametersJsonSchema` takes full JSON Schema). */
export function checkSchemas(tools: unknown): JsonReply | undefined {
	const out: Violation[] = []
	declarationsOf(tools).forEach((decls, i) =>
		decls.forEach((d, j) => {
			const params = asObj(d.parameters)
			if (params) walkSchema(params, `tools[${i}].function_declarations[${j}].parameters`, out)
		}),
	)
	if (out.length > 0) return badRequest(out)
}

/**
 * A JSON response (`responseMimeType: application/json`) with function declarations: models before Gemini 3 answer
 * 400 INVALID_ARGUMENT "Function calling with a response mime type: 'application/json' is unsupported" (reported
 * against gemini-2.5-flash in symfony/ai#1777 and the Gemini forum); Gemini 3 models take structured outputs with tools.
 */
export function checkJsonWithFunctions(model: string, b: Obj): JsonReply | undefined {
	const cfg = asObj(pick(b, 'generationConfig', 'generation_config'))
	const json = cfg && pick(cfg, 'responseMimeType', 'response_mime_type') === 'application/json'
	if (json && !/^gemini-([3-9]|\d{2,})/.test(model) && declarationsOf(b.tools).some((d) => d.length > 0))
		return geminiError(400, "Function calling with a response mime type: 'application/json' is unsupported")
}

/**
 * `thinkingConfig` per generation (ai.google.dev/gemini-api/docs/thinking): Gemini 2.5 models take a `thinkingBudget`
 * and no `thinkingLevel`; Gemini 3 models take a level (Gemini 3 Pro low or high; minimal and medium on Flash), and
 * `thinkingBudget` only for backwards compatibility; both together are a 400; Gemini 3 Pro cannot turn thinking off
 * (budget 0). The wording of these 400s is the mock's own.
 */
export function checkThinkingConfig(model: string, b: Obj): JsonReply | undefined {
	const cfg = asObj(pick(asObj(pick(b, 'generationConfig', 'generation_config')), 'thinkingConfig', 'thinking_config'))
	if (!cfg) return undefined
	const level = pick(cfg, 'thinkingLevel', 'thinking_level')
	const budget = pick(cfg, 'thinkingBudget', 'thinking_budget')
	if (level !== undefined && budget !== undefined) return geminiError(400, 'thinking_level and thinking_budget cannot be set together.')
	const gemini3 = /^gemini-([3-9]|\d{2,})/.test(model)
	if (level !== undefined && !gemini3) return geminiError(400, 'Thinking level is not supported for this model.')
	const pro3 = /^gemini-3-pro/.test(model)
	const levels = pro3 ? ['LOW', 'HIGH'] : ['MINIMAL', 'LOW', 'MEDIUM', 'HIGH']
	if (level !== undefined && !levels.includes(String(level).toUpperCase())) return geminiError(400, `Thinking level ${String(level)} is not supported for this model.`)
	if (pro3 && budget === 0) return geminiError(400, 'Thinking cannot be turned off for this model.')
	// Gemini 2.5's documented ranges (Pro 128–32768, Flash 0–24576, Flash-Lite 512–24576; 0 off where allowed),
	// refused in Google's words ("The thinking budget (52428) is invalid.", reported by Roo Code #4399).
	const range = /^gemini-2\.5-flash-lite/.test(model) ? [512, 24_576] : /^gemini-2\.5-flash/.test(model) ? [0, 24_576] : /^gemini-2\.5-pro/.test(model) ? [128, 32_768] : undefined
	if (range && typeof budget === 'number' && budget !== -1 && budget !== 0 && (budget < range[0]! || budget > range[1]!)) return geminiError(400, `The thinking budget (${budget}) is invalid.`)
	if (range && budget === 0 && range[0] === 128) return geminiError(400, 'Budget 0 is invalid. This model only works in thinking mode.')
}

/**
 * `candidateCount` is 1–8 (ai.google.dev/api/generate-content#generationconfig: "If unset, this will default to 1";
 * Gemini's models answer at most 8 candidates); the wording of the 400 is the mock's own.
 */
export function checkCandidateCount(b: Obj): JsonReply | undefined {
	const n = pick(asObj(pick(b, 'generationConfig', 'generation_config')), 'candidateCount', 'candidate_count')
	if (typeof n === 'number' && (n < 1 || n > 8)) return geminiError(400, `candidate_count must be between 1 and 8 (got ${n}).`)
}

/**
 * A `toolConfig.functionCallingConfig` needs function declarations to apply to: without any, Gemini answers
 * 400 INVALID_ARGUMENT "Function calling config is set without function_declarations."
 */
export function checkToolConfig(b: Obj): JsonReply | undefined {
	const config = asObj(pick(asObj(pick(b, 'toolConfig', 'tool_config')), 'functionCallingConfig', 'function_calling_config'))
	if (config && declarationsOf(b.tools).every((d) => d.length === 0)) return geminiError(400, 'Function calling config is set without function_declarations.')
}

/**
 * The thought signature the mock puts on the first functionCall part of a turn, and expects back on that part.
 * @example thoughtSignatureFor('get_weather', { city: 'Paris' })
 */
export const thoughtSignatureFor = (name: string, args: unknown): string => base64(`mock-thought|${name}|${hash36(JSON.stringify(args ?? {}))}`)

/**
 * The thought signature a Gemini 3 model puts on the text part of an answer without function calls, and expects back
 * on that part: the one with this text, or the empty text part right after it (where streams send it).
 * @example textSignatureFor('Hello! You said: hi')
 */
export const textSignatureFor = (text: string): string => base64(`${TEXT_MARK}${hash36(text)}`)

const TEXT_MARK = 'mock-text|'

/** Dummy values Google documents for injected history; the API accepts them instead of a real signature. */
const DUMMY_SIGNATURES = new Set(['skip_thought_signature_validator', 'context_engineering_is_the_way_to_go'])

const isUserText = (c: Obj): boolean => c.role !== 'model' && asArr(c.parts).some((p) => typeof asObj(p)?.text === 'string')

/**
 * Gemini 3 validates the current turn (everything after the last user text): the first functionCall part of each
 * model step must carry the signature the API issued for it.
 */
export function checkSignatures(contents: Obj[]): JsonReply | undefined {
	let start = contents.length - 1
	while (start >= 0 && !isUserText(contents[start])) start--
	for (let i = start + 1; i < contents.length; i++) {
		if (contents[i].role !== 'model') continue
		const first = asArr(contents[i].parts)
			.map((p) => asObj(p) ?? {})
			.find((p) => pick(p, 'functionCall', 'function_call'))
		if (!first) continue
		const call = asObj(pick(first, 'functionCall', 'function_call')) ?? {}
		const sig = pick(first, 'thoughtSignature', 'thought_signature')
		if (sig === undefined) {
			return geminiError(
				400,
				`Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(call.name)}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
			)
		}
		if (!DUMMY_SIGNATURES.has(String(sig)) && sig !== thoughtSignatureFor(String(call.name), call.args)) {
			return geminiError(400, 'Corrupted thought signature.')
		}
	}
}

/**
 * Text-part signatures this mock issued must come back on the part they were issued for, and as issued: one with
 * bytes before or after it (another vendor's wrapping, say) or on another part is corrupted. Google's guide asks for
 * each signature back in the part it came in, and signatures are model-specific
 * (ai.google.dev/gemini-api/docs/thought-signatures); the mock holds clients to that more strictly than the API is
 * documented to for text parts. Signatures the mock did not issue on text parts (another vendor's, from a model
 * switch) are not judged here; function calls are, by `checkSignatures`.
 */
export function checkTextSignatures(contents: Obj[]): JsonReply | undefined {
	const partsOf = (c: Obj) => asArr(c.parts).map((p) => asObj(p) ?? {})
	for (let i = 0; i < contents.length; i++) {
		if (contents[i].role !== 'model') continue
		const parts = partsOf(contents[i])
		for (let j = 0; j < parts.length; j++) {
			const sig = pick(parts[j], 'thoughtSignature', 'thought_signature')
			if (typeof sig !== 'string') continue
			const at = Buffer.from(sig, 'base64').toString('latin1').indexOf(TEXT_MARK)
			if (at === -1) continue
			const part = parts[j]
			const signed = pick(part, 'functionCall', 'function_call') || part.thought === true ? undefined : part.text === '' ? answerBefore(contents, i, j, partsOf) : part.text
			if (at !== 0 || typeof signed !== 'string' || sig !== textSignatureFor(signed)) return geminiError(400, 'Corrupted thought signature.')
		}
	}
}

/**
 * The answer a streamed signature (on an empty text part at the end) signs: the text parts right before it, back to the
 * thoughts or the previous turn. A client may keep the answer as one part, or as the chunks came, each chunk's content
 * its own model turn: google-genai's chats do (Python `chats.send_message_stream`, JS `sendMessageStream`), and the API
 * reads consecutive model turns as one.
 */
function answerBefore(contents: Obj[], i: number, j: number, partsOf: (c: Obj) => Obj[]): string | undefined {
	const texts: string[] = []
	for (let ci = i; ci >= 0 && contents[ci].role === 'model'; ci--) {
		const parts = ci === i ? partsOf(contents[ci]).slice(0, j) : partsOf(contents[ci])
		for (let k = parts.length - 1; k >= 0; k--) {
			if (typeof parts[k].text !== 'string' || parts[k].thought === true) return texts.length ? texts.join('') : undefined
			texts.unshift(String(parts[k].text))
		}
	}
	return texts.length ? texts.join('') : undefined
}

/** `contents` must be a non-empty list of user/model turns with parts. */
export function checkContents(contents: unknown): JsonReply | undefined {
	if (!Array.isArray(contents) || contents.length === 0) return geminiError(400, '* GenerateContentRequest.contents: contents is not specified\n')
	for (let i = 0; i < contents.length; i++) {
		const c = asObj(contents[i]) ?? {}
		if (c.role !== undefined && c.role !== 'user' && c.role !== 'model' && c.role !== 'function') return geminiError(400, 'Please use a valid role: user, model.')
		if (asArr(c.parts).length === 0) return geminiError(400, `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`)
	}
	return checkParts(contents) ?? checkFunctionResponses(contents)
}

const countParts = (content: unknown, ...keys: [string, string]) => asArr(asObj(content)?.parts).filter((p) => pick(asObj(p), ...keys)).length

/**
 * The turn after a model turn with N functionCall parts answers them with N functionResponse parts in one content:
 * responses split over several contents are refused (google-gemini/gemini-cli#4217; pydantic/pydantic-ai#580).
 */
function checkFunctionResponses(contents: unknown[]): JsonReply | undefined {
	for (let i = 0; i + 1 < contents.length; i++) {
		const calls = countParts(contents[i], 'functionCall', 'function_call')
		const responses = countParts(contents[i + 1], 'functionResponse', 'function_response')
		if (calls > 0 && responses > 0 && calls !== responses)
			return geminiError(400, 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.')
	}
}
