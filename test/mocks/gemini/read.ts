/**
 * Reads a generateContent request into the neutral conversation. Field names are accepted in both JSON spellings
 * (lowerCamel and snake_case), as the Google API's proto-JSON parser accepts both.
 * @module
 */

import { asArr, asNum, asObj, asStr, pick, type Obj } from '../shared/json'
import { argKeyOf, forcedTool, resultText, type Conversation, type ToolSpec } from '../shared/scenario'
import { declarationsOf } from './validate'

/** Parts of a content (or of `systemInstruction`, which may also be a plain string). */
export const partsOf = (content: unknown): Obj[] =>
	typeof content === 'string' ? [{ text: content }] : asArr(asObj(content)?.parts).map((p) => asObj(p) ?? {})

function toolSpecs(tools: unknown): ToolSpec[] {
	const out: ToolSpec[] = []
	for (const decls of declarationsOf(tools)) {
		for (const d of decls) {
			const name = asStr(d.name)
			if (!name) continue
			const schema = d.parameters ?? pick(d, 'parametersJsonSchema', 'parameters_json_schema')
			out.push({ name, argKey: argKeyOf(schema), schema })
		}
	}
	return out
}

/** The generation config (both spellings). */
export const configOf = (b: Obj): Obj => asObj(pick(b, 'generationConfig', 'generation_config')) ?? {}

/** The neutral conversation of a validated generateContent body. */
export function readGenerate(b: Obj): Conversation {
	const inputTexts: string[] = []
	for (const p of partsOf(pick(b, 'systemInstruction', 'system_instruction'))) if (typeof p.text === 'string') inputTexts.push(p.text)
	let images = 0
	let lastUserText = ''
	let lastUserImages = 0
	let toolResults: string[] | undefined
	let prefill: string | undefined
	for (const c of asArr(b.contents).map((x) => asObj(x) ?? {})) {
		const texts: string[] = []
		const results: string[] = []
		let imgs = 0
		for (const p of partsOf(c)) {
			// Thought parts are the model's own reasoning, not input text the user wrote.
			if (typeof p.text === 'string' && p.thought !== true) texts.push(p.text)
			else if (pick(p, 'inlineData', 'inline_data') || pick(p, 'fileData', 'file_data')) imgs++
			else {
				const fr = asObj(pick(p, 'functionResponse', 'function_response'))
				if (fr) results.push(resultText(fr.response))
			}
		}
		inputTexts.push(...texts, ...results)
		images += imgs
		// A trailing model turn of text is continued, as Gemini 2.x and 3 models do (not one with function calls).
		prefill = c.role === 'model' && !partsOf(c).some((p) => pick(p, 'functionCall', 'function_call')) ? texts.join('') || undefined : undefined
		if (c.role === 'model') continue
		if (texts.length > 0) lastUserText = texts.join(' ')
		lastUserImages = imgs
		toolResults = results.length > 0 ? results : undefined
	}
	const config = configOf(b)
	const thinking = asObj(pick(config, 'thinkingConfig', 'thinking_config'))
	return {
		inputTexts,
		images,
		lastUserText,
		lastUserImages: toolResults ? 0 : lastUserImages,
		toolResults,
		// Mode NONE: the model sees the functions but may not call them; allowedFunctionNames limits the ones it calls.
		tools: modeOf(b) === 'NONE' ? [] : callable(b),
		stop: asArr(pick(config, 'stopSequences', 'stop_sequences')).filter((s): s is string => typeof s === 'string'),
		maxTokens: asNum(pick(config, 'maxOutputTokens', 'max_output_tokens')),
		thinking: pick(thinking, 'includeThoughts', 'include_thoughts') === true,
		format:
			pick(config, 'responseMimeType', 'response_mime_type') === 'application/json'
				? { schema: asObj(pick(config, 'responseJsonSchema', 'response_json_schema') ?? pick(config, 'responseSchema', 'response_schema')) ?? {} }
				: undefined,
		forcedCall: forcedCallOf(b),
		prefill,
	}
}

const callingConfig = (b: Obj) => asObj(pick(asObj(pick(b, 'toolConfig', 'tool_config')), 'functionCallingConfig', 'function_calling_config'))

/** `toolConfig.functionCallingConfig.mode`: AUTO, ANY, NONE or VALIDATED. */
const modeOf = (b: Obj) => asStr(callingConfig(b)?.mode)

/**
 * The functions the model may call: `allowedFunctionNames`, "when provided, limits the functions the model will call"
 * (set with mode ANY or VALIDATED; https://ai.google.dev/api/caching#FunctionCallingConfig).
 */
function callable(b: Obj): ToolSpec[] {
	const allowed = asArr(pick(callingConfig(b), 'allowedFunctionNames', 'allowed_function_names'))
	const specs = toolSpecs(b.tools)
	return allowed.length ? specs.filter((s) => allowed.includes(s.name)) : specs
}

/** `toolConfig.functionCallingConfig` mode ANY forces a call (of the first allowed function, when it names some). */
function forcedCallOf(b: Obj): Conversation['forcedCall'] {
	if (modeOf(b) !== 'ANY') return undefined
	return forcedTool(callable(b), { required: true })
}
