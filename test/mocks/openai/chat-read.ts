/**
 * Reads and validates a Chat Completions request the way OpenAI does, producing the neutral `Conversation`.
 * Error texts are OpenAI's own (platform.openai.com/docs/api-reference/chat/create).
 * @module
 */

import { asArr, asObj, asStr, type Obj } from '../shared/json'
import type { JsonReply } from '../shared/reply'
import { formatOf } from '../shared/structured'
import { argKeyOf, forcedTool, type Conversation, type ToolSpec } from '../shared/scenario'
import { checkContentParts } from './content-parts'
import { openaiError } from './errors'

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function'])

/** Texts and image count of a message `content` (string or array of parts). */
export function contentOf(content: unknown): { texts: string[]; images: number } {
	if (typeof content === 'string') return { texts: [content], images: 0 }
	const texts: string[] = []
	let images = 0
	for (const p of asArr(content)) {
		const part = asObj(p)
		if (!part) continue
		if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text)
		else if (part.type === 'image_url') images++
	}
	return { texts, images }
}

/** Tools offered as `tools: [{ type: 'function', function: { name, parameters } }]`. */
export function toolSpecs(tools: unknown): ToolSpec[] {
	const out: ToolSpec[] = []
	for (const t of asArr(tools)) {
		const fn = asObj(asObj(t)?.function)
		const name = asStr(fn?.name)
		if (name) out.push({ name, argKey: argKeyOf(fn?.parameters), schema: fn?.parameters })
	}
	return out
}

const callIds = (m: Obj | undefined): string[] =>
	asArr(m?.tool_calls)
		.map((c) => asStr(asObj(c)?.id))
		.filter((id): id is string => !!id)

/** OpenAI's tool-message pairing rules: each `tool` message answers the preceding assistant `tool_calls`, and all are answered. */
function checkToolPairing(messages: Obj[]): JsonReply | undefined {
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i]
		if (m.role === 'assistant' && callIds(m).length > 0) {
			const answered = new Set<string>()
			for (let j = i + 1; j < messages.length && messages[j].role === 'tool'; j++) {
				const id = asStr(messages[j].tool_call_id)
				if (id) answered.add(id)
			}
			const missing = callIds(m).filter((id) => !answered.has(id))
			if (missing.length > 0) {
				return openaiError(
					400,
					`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
					`messages.[${i}].role`,
				)
			}
		}
		if (m.role !== 'tool') continue
		let k = i - 1
		while (k >= 0 && messages[k].role === 'tool') k--
		const owner = k >= 0 ? messages[k] : undefined
		if (owner?.role !== 'assistant' || callIds(owner).length === 0) {
			return openaiError(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`)
		}
		const id = asStr(m.tool_call_id) ?? ''
		if (!callIds(owner).includes(id)) {
			return openaiError(400, `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`, `messages.[${i}].tool_call_id`)
		}
	}
}

/** Validates `messages` (present, non-empty, known roles, tool pairing). */
export function checkMessages(messages: unknown): JsonReply | undefined {
	if (messages === undefined) return openaiError(400, "Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter')
	if (!Array.isArray(messages)) {
		return openaiError(400, `Invalid type for 'messages': expected an array of objects, but got ${typeof messages} instead.`, 'messages', 'invalid_type')
	}
	if (messages.length === 0) {
		return openaiError(400, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array')
	}
	for (let i = 0; i < messages.length; i++) {
		const role = asObj(messages[i])?.role
		if (typeof role !== 'string' || !ROLES.has(role)) {
			return openaiError(
				400,
				`Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
				`messages[${i}].role`,
				'invalid_value',
			)
		}
	}
	return checkContentParts(messages as Obj[]) ?? checkToolCallIds(messages as Obj[]) ?? checkToolPairing(messages as Obj[])
}

/**
 * OpenAI refuses a tool call id over 40 characters, on the assistant's call and on the tool message alike (reported
 * against the API as `string_above_max_length`, e.g. vercel/ai#5171, agno-agi/agno#5382).
 */
function checkToolCallIds(messages: Obj[]): JsonReply | undefined {
	const tooLong = (id: unknown, param: string) =>
		typeof id === 'string' && id.length > 40
			? openaiError(400, `Invalid '${param}': string too long. Expected a string with maximum length 40, but got a string with length ${id.length} instead.`, param, 'string_above_max_length')
			: undefined
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i]!
		const calls = asArr(m.tool_calls)
		for (let j = 0; j < calls.length; j++) {
			const bad = tooLong(asObj(calls[j])?.id, `messages[${i}].tool_calls[${j}].id`)
			if (bad) return bad
		}
		const bad = tooLong(m.tool_call_id, `messages[${i}].tool_call_id`)
		if (bad) return bad
	}
	return undefined
}

/**
 * JSON mode needs the word: "When using JSON mode, you must always instruct the model to produce JSON via some message
 * in the conversation", which the API enforces with a 400 when no message mentions it.
 */
export function checkJsonMode(body: Obj): JsonReply | undefined {
	if (asStr(asObj(body.response_format)?.type) !== 'json_object') return undefined
	const texts = asArr(body.messages).flatMap((m) => contentOf(asObj(m)?.content).texts)
	if (texts.some((t) => /json/i.test(t))) return undefined
	return openaiError(400, "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", 'messages')
}

/** The neutral conversation of a validated Chat Completions body. */
export function readChat(body: Obj, prefixes = false): Conversation {
	const messages = asArr(body.messages).map((m) => asObj(m) ?? {})
	const inputTexts: string[] = []
	let images = 0
	let lastUserText = ''
	let lastUserImages = 0
	let seenUser = false
	for (const m of messages) {
		const c = contentOf(m.content)
		inputTexts.push(...c.texts)
		images += c.images
		if (m.role === 'user') {
			lastUserText = c.texts.join(' ')
			lastUserImages = c.images
			seenUser = true
		}
	}
	let toolResults: string[] | undefined
	let k = messages.length - 1
	while (k >= 0 && messages[k].role === 'tool') k--
	if (k < messages.length - 1) toolResults = messages.slice(k + 1).map((m) => contentOf(m.content).texts.join(' '))
	const stop = typeof body.stop === 'string' ? [body.stop] : asArr(body.stop).filter((s): s is string => typeof s === 'string')
	const effort = asStr(body.reasoning_effort)
	const maxTokens = body.max_completion_tokens ?? body.max_tokens
	const allowed = asObj(body.tool_choice)?.type === 'allowed_tools' ? asObj(asObj(body.tool_choice)?.allowed_tools) : undefined
	const allowedNames = allowed && asArr(allowed.tools).map((t) => asStr(asObj(asObj(t)?.function)?.name))
	const offered = toolSpecs(body.tools).filter((t) => !allowedNames || allowedNames.includes(t.name))
	return {
		inputTexts,
		images,
		lastUserText: seenUser ? lastUserText : '',
		lastUserImages: toolResults ? 0 : lastUserImages,
		toolResults,
		// `tool_choice: 'none'`: the model sees the tools but may not call them; `allowed_tools`: only those it lists.
		tools: body.tool_choice === 'none' ? [] : offered,
		stop,
		maxTokens: typeof maxTokens === 'number' ? maxTokens : undefined,
		thinking: !!effort && effort !== 'none',
		format: formatOf(body.response_format, (f) => asObj(f.json_schema)?.schema),
		forcedCall: forcedTool(offered, { required: body.tool_choice === 'required' || allowed?.mode === 'required', name: asStr(asObj(asObj(body.tool_choice)?.function)?.name) }),
		singleCall: body.parallel_tool_calls === false,
		// DeepSeek's and Mistral's chat prefix completion: a final assistant message marked `prefix: true` is continued.
		prefill: prefixes && messages.at(-1)?.role === 'assistant' && messages.at(-1)?.prefix === true ? contentOf(messages.at(-1)!.content).texts.join('') : undefined,
	}
}
