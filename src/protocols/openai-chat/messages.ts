/**
 * `messages` ⇄ canonical system + messages. The canonical model has two roles; OpenAI has five:
 * system/developer hoist to the top-level system prompt (in order), `tool` messages become tool_result parts of
 * a user turn, and consecutive same-role messages merge (Anthropic requires alternation, WIRE-NOTES wire §20).
 * @module
 */
import { badRequest } from '../../core/errors'
import type { AudioPart, CacheControl, FilePart, ImagePart, Message, Part, RedactedThinkingPart, TextPart, ThinkingPart, ToolCallPart, ToolResultPart, VendorOnly } from '../../core/ir'

/** What only OpenAI's models take, found in the messages (the caller tags it with the protocol). */
export type OpenAIOnly = Omit<VendorOnly, 'protocol'>
import { openaiToolCallId, packToolCallId, plainToolCallId, unpackToolCallId } from '../../core/tool-ids'
import { asPlainParts, cannotSend } from '../files'
import { decodeImageUrl, decodeReasoning, encodeReasoning, imageUrlOf, parseArguments, type ReasoningDetailOut } from './content'
import { decodeAudioPart, decodeFilePart, encodeAudioPart, encodeFilePart, type WireFilePart } from './files'
import { isObject, notObject, notString, optString, reqArray, reqObject, reqString, type Json } from './guards'
import { dropPastReasoning } from './past-reasoning'

type WireContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } } | WireFilePart

/** A message as encodeRequest writes it. */
export type WireMessage =
	| { role: 'system'; content: string }
	| { role: 'user'; content: string | WireContentPart[] }
	| {
			role: 'assistant'
			content: string | null
			tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
			reasoning_content?: string
			reasoning_details?: ReasoningDetailOut[]
			/** DeepSeek's and Mistral's chat prefix completion: this final message is continued (openai-chat/request.ts). */
			prefix?: true
	  }
	| { role: 'tool'; tool_call_id: string; content: string }

// ── decode ─────────────────────────────────────────────────────────────────────────────────────────────
// Loops rather than forEach and map with closures, and a field's path for its error message built only when it is
// thrown: agents resend their whole history on every turn (hundreds of messages), and this runs on every request.

/**
 * A prompt-caching breakpoint written the way OpenRouter and LiteLLM take it in chat completions: `cache_control:
 * {type: 'ephemeral', ttl?: '5m' | '1h'}` on a content part, a tool, a tool call, or a message (its last part), which clients
 * offering Claude through an OpenAI-compatible API send (https://openrouter.ai/docs/features/prompt-caching). Claude
 * caches only where told, so without it a long conversation pays full input price every turn. Anything else is left
 * out, as OpenAI (which caches by itself and has no such field) would leave it.
 */
export function cacheControlOf(v: unknown): CacheControl | undefined {
	if (v === undefined || !isObject(v) || v.type !== 'ephemeral') return undefined
	return v.ttl === '5m' || v.ttl === '1h' ? { type: 'ephemeral', ttl: v.ttl } : { type: 'ephemeral' }
}

type Cacheable = Exclude<Part, AudioPart | ThinkingPart | RedactedThinkingPart>
const canCache = (p: Part | undefined): p is Cacheable => p !== undefined && p.type !== 'audio' && p.type !== 'thinking' && p.type !== 'redacted_thinking'

/** Sets the breakpoint of `raw` (a part or message) on `part`; `part` is returned. */
function cached<T extends Cacheable>(part: T, raw: Json): T {
	const cc = raw.cache_control === undefined ? undefined : cacheControlOf(raw.cache_control)
	if (cc) part.cacheControl = cc
	return part
}

/** A message-level breakpoint (LiteLLM's form, also on a string content) marks the message's last part. */
function cachedLast<T extends Part>(parts: T[], m: Json): T[] {
	const last = parts[parts.length - 1]
	if (m.cache_control !== undefined && canCache(last)) cached(last, m)
	return parts
}

function textParts(content: unknown, param: string): TextPart[] {
	if (typeof content === 'string') return [{ type: 'text', text: content }]
	const list = reqArray(content, param)
	const out: TextPart[] = []
	for (let i = 0; i < list.length; i++) {
		const part = list[i]
		if (!isObject(part)) throw notObject(`${param}[${i}]`)
		if (part.type !== 'text') throw badRequest(`${param}[${i}].type must be 'text' here`, `${param}[${i}].type`)
		if (typeof part.text !== 'string') throw notString(`${param}[${i}].text`)
		out.push(cached({ type: 'text', text: part.text }, part))
	}
	return out
}

type UserPart = TextPart | ImagePart | FilePart | AudioPart

function userParts(content: unknown, param: string): UserPart[] {
	if (typeof content === 'string') return [{ type: 'text', text: content }]
	const list = reqArray(content, param)
	if (!list.length) throw badRequest(`${param} must not be an empty array`, param)
	const out: UserPart[] = []
	for (let i = 0; i < list.length; i++) {
		const at = `${param}[${i}]`
		const part = reqObject(list[i], at)
		if (part.type === 'text') {
			out.push(cached({ type: 'text', text: reqString(part.text, `${at}.text`) }, part))
			continue
		}
		if (part.type === 'image_url') {
			const image = reqObject(part.image_url, `${at}.image_url`)
			const img: ImagePart = { type: 'image', source: decodeImageUrl(reqString(image.url, `${at}.image_url.url`), `${at}.image_url.url`) }
			const detail = optString(image.detail, `${at}.image_url.detail`)
			if (detail) img.detail = detail
			out.push(cached(img, part))
			continue
		}
		if (part.type === 'file') {
			out.push(decodeFilePart(part, at))
			continue
		}
		if (part.type === 'input_audio') {
			out.push(decodeAudioPart(part, at))
			continue
		}
		throw badRequest(`${at}.type must be one of text, image_url, input_audio, file (got ${JSON.stringify(part.type)})`, `${at}.type`)
	}
	return out
}

function assistantParts(m: Json, i: number, toolNames: Map<string, string>, only: OpenAIOnly[]): Part[] {
	const parts: Part[] =
		m.reasoning_content == null && m.reasoning == null && m.reasoning_details == null
			? []
			: decodeReasoning(
					optString(m.reasoning_content, `messages[${i}].reasoning_content`) ?? optString(m.reasoning, `messages[${i}].reasoning`),
					m.reasoning_details,
				)
	const content = m.content
	if (typeof content === 'string') {
		if (content) parts.push({ type: 'text', text: content })
	} else if (content !== null && content !== undefined) {
		const list = reqArray(content, `messages[${i}].content`)
		for (let j = 0; j < list.length; j++) {
			const at = `messages[${i}].content[${j}]`
			const part = reqObject(list[j], at)
			if (part.type === 'text') parts.push(cached({ type: 'text', text: reqString(part.text, `${at}.text`) }, part))
			else if (part.type === 'refusal') parts.push({ type: 'text', text: reqString(part.refusal, `${at}.refusal`) })
			else throw badRequest(`${at}.type must be 'text' or 'refusal'`, `${at}.type`)
		}
	}
	if (m.refusal != null) {
		const refusal = optString(m.refusal, `messages[${i}].refusal`)
		if (refusal && !parts.some((p) => p.type === 'text')) parts.push({ type: 'text', text: refusal })
	}
	const calls = m.tool_calls === null || m.tool_calls === undefined ? undefined : reqArray(m.tool_calls, `messages[${i}].tool_calls`)
	if (calls)
		for (let j = 0; j < calls.length; j++) {
			const call = calls[j]
			if (!isObject(call)) throw notObject(`messages[${i}].tool_calls[${j}]`)
			// A custom tool's call (freeform text input): only OpenAI models have such tools. Kept for them, as written.
			if (call.type === 'custom') {
				only.push({ what: 'a call of a custom (freeform) tool', path: `messages[${i}].tool_calls[${j}]` })
				continue
			}
			if (call.type !== undefined && call.type !== 'function') {
				const at = `messages[${i}].tool_calls[${j}].type`
				throw badRequest(`${at} must be 'function' (got ${JSON.stringify(call.type)})`, at)
			}
			const fn = call.function
			if (!isObject(fn)) throw notObject(`messages[${i}].tool_calls[${j}].function`)
			if (typeof call.id !== 'string') throw notString(`messages[${i}].tool_calls[${j}].id`)
			if (typeof fn.name !== 'string') throw notString(`messages[${i}].tool_calls[${j}].function.name`)
			// A breakpoint on the call itself: the AI SDK's openai-compatible provider puts a message's mark on its last part,
			// which in an assistant turn without text (opencode's tool loop) is its last call.
			const part: ToolCallPart = cached({ type: 'tool_call', id: plainToolCallId(call.id), name: fn.name, input: parseArguments(fn.arguments) }, call)
			const signature = part.id === call.id ? undefined : unpackToolCallId(call.id).signature
			if (signature) part.signature = signature
			toolNames.set(part.id, part.name)
			parts.push(part)
		}
	// Legacy function calling: converting it would answer `tool_calls` where such a client reads `function_call`.
	if (m.function_call != null) only.push({ what: 'legacy function calling (function_call; send tool_calls instead)', path: `messages[${i}].function_call` })
	if ((content === null || content === undefined) && !calls?.length && !parts.length && m.function_call == null)
		throw badRequest(`messages[${i}].content is required unless tool_calls is set`, `messages[${i}].content`)
	return parts
}

function toolResult(m: Json, i: number, toolNames: Map<string, string>): ToolResultPart {
	if (typeof m.tool_call_id !== 'string') throw notString(`messages[${i}].tool_call_id`)
	const id = plainToolCallId(m.tool_call_id)
	const content = typeof m.content === 'string' ? (m.content ? [{ type: 'text' as const, text: m.content }] : []) : textParts(m.content, `messages[${i}].content`).filter((p) => p.text !== '')
	const part: ToolResultPart = cached({ type: 'tool_result', toolCallId: id, content }, m)
	// Gemini's functionResponse needs the name; OpenAI only links by id, so look it up in the history.
	const name = toolNames.get(id)
	if (name) part.name = name
	return part
}

/** Anthropic requires a user turn to start with its tool_result blocks (WIRE-NOTES wire §9); most already do. */
function toolResultsFirst(parts: Part[]): Part[] {
	let other = false
	for (const p of parts) {
		if (p.type !== 'tool_result') other = true
		else if (other) return [...parts.filter((q) => q.type === 'tool_result'), ...parts.filter((q) => q.type !== 'tool_result')]
	}
	return parts
}

/**
 * Decodes `messages`. Throws a 400 naming the offending field.
 * @example decodeMessages([{ role: 'system', content: 'Be brief' }, { role: 'user', content: 'Hi' }])
 * // { system: [{ type: 'text', text: 'Be brief' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] }
 */
export function decodeMessages(raw: unknown): { system: TextPart[]; messages: Message[]; openaiOnly: OpenAIOnly[] } {
	const list = reqArray(raw, 'messages')
	if (!list.length) throw badRequest('messages must contain at least one message', 'messages')
	const system: TextPart[] = []
	const messages: Message[] = []
	const toolNames = new Map<string, string>()
	const openaiOnly: OpenAIOnly[] = []
	const push = (role: Message['role'], parts: Part[]) => {
		if (!parts.length) return
		const last = messages[messages.length - 1]
		if (last?.role === role) last.content.push(...parts)
		else messages.push({ role, content: parts })
	}
	for (let i = 0; i < list.length; i++) {
		const m = list[i]
		if (!isObject(m)) throw notObject(`messages[${i}]`)
		switch (m.role) {
			case 'system':
			case 'developer':
				system.push(...cachedLast(textParts(m.content, `messages[${i}].content`), m))
				break
			case 'user':
				push('user', cachedLast(userParts(m.content, `messages[${i}].content`), m))
				break
			case 'assistant':
				push('assistant', cachedLast(assistantParts(m, i, toolNames, openaiOnly), m))
				break
			case 'tool':
				push('user', [toolResult(m, i, toolNames)])
				break
			case 'function':
				// Legacy function calling's result: its text still counts as input on OpenAI's own models.
				openaiOnly.push({ what: "legacy function calling (role 'function'; send role 'tool' instead)", path: `messages[${i}].role` })
				if (typeof m.content === 'string' && m.content) push('user', [{ type: 'text', text: m.content }])
				break
			default:
				throw badRequest(
					`messages[${i}].role must be one of system, developer, user, assistant, tool, function (got ${JSON.stringify(m.role)})`,
					`messages[${i}].role`,
				)
		}
	}
	for (const m of messages) if (m.role === 'user') m.content = toolResultsFirst(m.content)
	return { system, messages, openaiOnly }
}

// ── encode ─────────────────────────────────────────────────────────────────────────────────────────────

const imagePart = (p: ImagePart): WireContentPart => ({
	type: 'image_url',
	image_url: p.detail ? { url: imageUrlOf(p.source), detail: p.detail } : { url: imageUrlOf(p.source) },
})

/** String content when it is a single text (older compatibles reject arrays), parts otherwise. */
function userContent(parts: Array<{ part: UserPart; where: string }>): string | WireContentPart[] {
	const wire = parts.flatMap(({ part: p, where }): WireContentPart[] => {
		if (p.type === 'text') return [{ type: 'text', text: p.text }]
		if (p.type === 'image') return [imagePart(p)]
		if (p.type === 'audio') return [encodeAudioPart(p, where)]
		return encodeFilePart(p, where)
	})
	if (wire.length === 1 && wire[0].type === 'text') return wire[0].text
	return wire
}

/**
 * A failed call's result (Anthropic `is_error: true`, Gemini's `error` key) as OpenAI chat carries it. Its `role:"tool"`
 * message has no field saying so (content and `tool_call_id` only:
 * https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages), and dropping the flag makes the
 * model read a failure as a result like any other. So the failure is stated in a line of its own ahead of the tool's
 * text, which follows unchanged, as other gateways settled on (sgl-project/sglang#32610, brightwave-inc/tidebreak#1308);
 * LiteLLM drops it. A successful result goes as it is.
 * @example toolContent('ENOENT', true) // 'Error: the tool call failed.\nENOENT'
 */
export const toolContent = (text: string, isError: boolean): string => (isError ? (text ? `${TOOL_FAILED}\n${text}` : TOOL_FAILED) : text)

const TOOL_FAILED = 'Error: the tool call failed.'

/** The tool message of a result that returned only images or files, which OpenAI takes in a user message only. */
const CARRIED = '(The tool returned images or files: they follow in the next message.)'

/**
 * A user turn → one `role:"tool"` message per tool result, then a user message with the rest. Several texts of one
 * result are joined by a newline, so their boundary survives in OpenAI's single string.
 */
function encodeUser(parts: Part[], packedIds: Map<string, string>, out: WireMessage[], mi: number, idOut: (id: string) => string) {
	const groups: Array<{ id: string; parts: Array<{ part: UserPart; where: string }> }> = []
	parts.forEach((p, pi) => {
		if (p.type !== 'tool_result') return
		const texts: string[] = []
		const carried: Array<{ part: UserPart; where: string }> = []
		p.content.forEach((c, ci) => {
			const where = `messages[${mi}].content[${pi}].content[${ci}]`
			if (c.type === 'text') texts.push(c.text)
			else if (c.type === 'file' && asPlainParts(c)) {
				// A plain-text or custom-content document is the tool's answer in text: it stays in the tool message (in a
				// user message after it, the call read as answering nothing and the file as the user's words).
				for (const q of asPlainParts(c)!) {
					if (q.type === 'text') texts.push(q.text)
					else carried.push({ part: q, where })
				}
			}
			// OpenAI tool messages are text-only: images and files a tool returned travel in the user turn that follows.
			else carried.push({ part: c, where })
		})
		const id = idOut(packedIds.get(p.toolCallId) ?? p.toolCallId)
		// A result of media alone says where its media went, rather than answer its call with nothing.
		const text = texts.length || !carried.length ? texts.join('\n') : CARRIED
		out.push({ role: 'tool', tool_call_id: id, content: toolContent(text, p.isError === true) })
		if (carried.length) groups.push({ id, parts: carried })
	})
	// Several results' media in one user message: each group is headed by its call, or the model cannot tell whose
	// screenshot is whose (QA: two tool results of one image each).
	const rest = groups.length > 1 ? groups.flatMap((g) => [{ part: { type: 'text' as const, text: `Returned by tool call ${g.id}:` }, where: g.parts[0]!.where }, ...g.parts]) : (groups[0]?.parts ?? [])
	parts.forEach((p, pi) => {
		if (p.type === 'text' || p.type === 'image' || p.type === 'file' || p.type === 'audio') rest.push({ part: p, where: `messages[${mi}].content[${pi}]` })
	})
	if (rest.length) out.push({ role: 'user', content: userContent(rest) })
}

/** An assistant message has no slot for files or audio (user input in OpenAI chat): refused rather than dropped. */
function refuseAssistantMedia(parts: Part[], mi: number) {
	parts.forEach((p, pi) => {
		if (p.type === 'file' || p.type === 'audio') throw cannotSend(p, 'OpenAI chat', 'it takes files and audio in user messages only', `messages[${mi}].content[${pi}]`)
	})
}

function encodeAssistant(parts: Part[], idOut: (id: string) => string): WireMessage {
	const text = parts.filter((p): p is TextPart => p.type === 'text').map((p) => p.text).join('')
	const calls = parts
		.filter((p): p is ToolCallPart => p.type === 'tool_call')
		.map((c) => ({
			id: idOut(packToolCallId(c.id, c.signature)),
			type: 'function' as const,
			function: { name: c.name, arguments: JSON.stringify(c.input) },
		}))
	const msg: WireMessage = { role: 'assistant', content: text || (calls.length ? null : ''), ...encodeReasoning(parts) }
	if (calls.length) msg.tool_calls = calls
	return msg
}

/**
 * Encodes the canonical conversation as OpenAI `messages`: the system prompt as one system message, tool results
 * as one `role:"tool"` message each placed before the rest of their user turn, and thinking as
 * `reasoning_content` / `reasoning_details` on the assistant message that produced it, while it still counts
 * (past-reasoning.ts: not after a finished answer that called no tool).
 */
export function encodeMessages(system: TextPart[] | undefined, messages: Message[], idOut: (id: string) => string = openaiToolCallId): WireMessage[] {
	const out: WireMessage[] = []
	// Tool results must echo the exact id the assistant message carries, which includes a packed signature.
	const packedIds = new Map<string, string>()
	for (const m of messages)
		for (const p of m.content) if (p.type === 'tool_call' && p.signature) packedIds.set(p.id, packToolCallId(p.id, p.signature))
	if (system?.length) out.push({ role: 'system', content: system.map((p) => p.text).join('\n\n') })
	messages.forEach((m, mi) => {
		if (m.role === 'assistant') {
			refuseAssistantMedia(m.content, mi)
			out.push(encodeAssistant(m.content, idOut))
		} else encodeUser(m.content, packedIds, out, mi, idOut)
	})
	return dropPastReasoning(out)
}
