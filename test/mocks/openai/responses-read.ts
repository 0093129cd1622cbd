/**
 * Reads and validates a Responses API request (platform.openai.com/docs/api-reference/responses/create).
 * @module
 */

import { asArr, asObj, asStr, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { formatOf } from '../shared/structured'
import { argKeyOf, forcedTool, type Conversation, type ToolSpec } from '../shared/scenario'
import { openaiError } from './errors'

/** The message content part types OpenAI's Responses API takes (its 400 lists them; a chat-style `image_url` is refused). */
const PART_TYPES = ['input_text', 'input_image', 'input_audio', 'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', 'encrypted_content']

/** Texts and images of a Responses message `content` (string or input/output parts). */
function contentOf(content: unknown): { texts: string[]; images: number } {
	if (typeof content === 'string') return { texts: [content], images: 0 }
	const texts: string[] = []
	let images = 0
	for (const p of asArr(content)) {
		const part = asObj(p)
		if (!part) continue
		if ((part.type === 'input_text' || part.type === 'output_text' || part.type === 'text') && typeof part.text === 'string') texts.push(part.text)
		else if (part.type === 'input_image') images++
	}
	return { texts, images }
}

/** The `output` of a `function_call_output` item as text (a string, or input_text parts). */
const outputText = (output: unknown): string => (typeof output === 'string' ? output : contentOf(output).texts.join(' '))

/** Responses tools are flat: `{ type: 'function', name, parameters }`. */
function toolSpecs(tools: unknown): ToolSpec[] {
	const out: ToolSpec[] = []
	for (const t of asArr(tools)) {
		const tool = asObj(t)
		const name = asStr(tool?.name)
		if (tool?.type === 'function' && name) out.push({ name, argKey: argKeyOf(tool.parameters), schema: tool.parameters })
	}
	return out
}

/** The input as a list of items (a string input is one user message). */
export const inputItems = (input: unknown): Obj[] =>
	typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : asArr(input).map((i) => asObj(i) ?? {})

/** Validates `input`: present, message parts of known types, and function calls and their outputs pair up by `call_id` (unless continuing a stored response). */
export function checkInput(body: Obj): JsonReply | undefined {
	// The WebSocket mode's lane is "not part of POST /v1/responses" (the SDKs' ResponseCreate): an argument POST does not know.
	if (body.stream_id !== undefined) return openaiError(400, "Unknown parameter: 'stream_id'.", 'stream_id', 'unknown_parameter')
	if (body.input === undefined && body.previous_response_id === undefined) {
		return openaiError(400, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter')
	}
	const items = inputItems(body.input)
	// Reasoning OpenAI did not encrypt (here: not the mock's `mock-reasoning:` blobs) is refused, as OpenAI does
	// (openai/codex#8145, continuedev/continue#10643: "The encrypted content for item rs_… could not be verified.").
	for (const item of items) {
		const enc = item.type === 'reasoning' ? asStr(item.encrypted_content) : undefined
		if (enc !== undefined && !Buffer.from(enc, 'base64').toString('utf8').startsWith('mock-reasoning:'))
			return openaiError(400, `The encrypted content for item ${asStr(item.id) ?? 'rs_unknown'} could not be verified.`, null, 'invalid_encrypted_content')
	}
	// With `store: false` nothing is kept to find a reasoning item by its id: one replayed without its
	// `encrypted_content` is refused, as OpenAI answers it (vercel/ai#7543, can1357/oh-my-pi#41).
	if (body.store === false)
		for (const item of items) {
			const id = item.type === 'reasoning' && asStr(item.encrypted_content) === undefined ? asStr(item.id) : undefined
			if (id !== undefined)
				return openaiError(404, `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, 'input')
		}
	for (const [i, item] of items.entries()) {
		if (item.type !== undefined && item.type !== 'message') continue
		for (const [j, part] of asArr(item.content).entries()) {
			const type = asObj(part)?.type
			if (!PART_TYPES.includes(String(type)))
				return openaiError(400, `Invalid value: '${String(type)}'. Supported values are: ${PART_TYPES.map((t) => `'${t}'`).join(', ')}.`, `input[${i}].content[${j}].type`, 'invalid_value')
		}
	}
	if (body.previous_response_id !== undefined) return
	// A `local_shell_call` is answered by a `function_call_output` too; a custom tool call by a `custom_tool_call_output`.
	const ids = (...types: string[]) => new Set(items.filter((i) => types.includes(String(i.type))).map((i) => asStr(i.call_id)))
	for (const [callTypes, outputType, what] of [
		[['function_call', 'local_shell_call'], 'function_call_output', 'function call'],
		[['custom_tool_call'], 'custom_tool_call_output', 'custom tool call'],
	] as const) {
		const calls = ids(...callTypes)
		const outputs = ids(outputType)
		for (const id of outputs) if (!calls.has(id)) return openaiError(400, `No tool call found for ${what} output with call_id ${id}.`, 'input')
		for (const id of calls) if (!outputs.has(id)) return openaiError(400, `No tool output found for ${what} ${id}.`, 'input')
	}
}

/** JSON mode needs the word in the instructions or the input, as in chat (chat-read.ts `checkJsonMode`); the rule is OpenAI's, this 400's wording the chat one's counterpart. */
export function checkJsonMode(body: Obj): JsonReply | undefined {
	if (asStr(asObj(asObj(body.text)?.format)?.type) !== 'json_object') return undefined
	const texts = readResponses(body).inputTexts
	if (texts.some((t) => /json/i.test(t))) return undefined
	return openaiError(400, "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.", 'input')
}

/** The neutral conversation of a validated Responses body. */
export function readResponses(body: Obj): Conversation {
	const items = inputItems(body.input)
	const inputTexts: string[] = []
	if (typeof body.instructions === 'string') inputTexts.push(body.instructions)
	let images = 0
	let lastUserText = ''
	let lastUserImages = 0
	for (const item of items) {
		if (item.type === 'function_call_output') {
			inputTexts.push(outputText(item.output))
			continue
		}
		if (item.type !== undefined && item.type !== 'message') continue
		const c = contentOf(item.content)
		inputTexts.push(...c.texts)
		images += c.images
		if (item.role === 'user') {
			lastUserText = c.texts.join(' ')
			lastUserImages = c.images
		}
	}
	// The last turn is tool results when only calls and their outputs follow the last message. Clients that record a
	// call and its output as a pair (Codex) send parallel calls interleaved: call A, output A, call B, output B.
	let k = items.length - 1
	while (k >= 0 && (items[k].type === 'function_call_output' || items[k].type === 'function_call')) k--
	const trailing = items.slice(k + 1).filter((i) => i.type === 'function_call_output')
	const toolResults = trailing.length > 0 && items[items.length - 1].type === 'function_call_output' ? trailing.map((i) => outputText(i.output)) : undefined
	const effort = asStr(asObj(body.reasoning)?.effort)
	return {
		inputTexts,
		images,
		lastUserText,
		lastUserImages: toolResults ? 0 : lastUserImages,
		toolResults,
		tools: body.tool_choice === 'none' ? [] : toolSpecs(body.tools),
		stop: [],
		maxTokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined,
		thinking: !!effort && effort !== 'none',
		format: formatOf(asObj(body.text)?.format, (f) => f.schema),
		forcedCall: forcedTool(toolSpecs(body.tools), { required: body.tool_choice === 'required', name: asObj(body.tool_choice)?.type === 'function' ? asStr(asObj(body.tool_choice)?.name) : undefined }),
		singleCall: body.parallel_tool_calls === false,
	}
}
