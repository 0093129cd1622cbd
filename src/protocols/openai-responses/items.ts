/**
 * Responses input items ⇄ canonical system prompt and messages
 * (https://platform.openai.com/docs/api-reference/responses/create#responses-create-input).
 * `message` items map to turns (system/developer hoist to the system prompt), `function_call` items to assistant
 * tool calls, `function_call_output` items to tool results in a user turn (placed first, WIRE-NOTES wire §9), and
 * `reasoning` items to thinking, a client-run search's `tool_search_call` / `tool_search_output` to a call of the
 * `tool_search` function and its result (tool-search.ts), typed shell/apply_patch/local_shell calls and outputs to
 * calls of their functions and results (typed-tools.ts). Consecutive same-role items merge into one turn.
 * Item kinds with no canonical meaning (`item_reference`, built-in tool calls) are skipped here: they only reach a
 * non-OpenAI vendor after `unconvertible` (request.ts) has refused the request.
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import type { FilePart, ImagePart, Message, Part, TextPart, ToolResultPart } from '../../core/ir'
import { guessMediaType, parseDataUrl } from '../files'
import { decodeImageUrl, parseArguments } from '../openai-chat/content'
import { reqArray, reqObject, reqString, str, type Json } from '../openai-chat/guards'
import { callIdIn } from './call-ids'
import { CUSTOM_INPUT } from './custom-tools'
import { joinNamespace } from './namespaces'
import { decodeReasoningItem } from './reasoning'
import { searchArgumentsOf, searchOutputText, TOOL_SEARCH } from './tool-search'
import { readingOrder } from './tool-pairing'
import { isTypedCallItem, isTypedOutputItem, outputCallId, typedCallArguments, typedOutputResult } from './typed-tools'

type Turn = { role: Message['role']; parts: Part[] }

/**
 * The content part types OpenAI's Responses API takes, in its own 400's order (a chat-style `image_url` part gets
 * "Invalid value: 'image_url'. Supported values are: …", langchain-ai/langchainjs#11248); chat's `text` is also taken here.
 */
const PART_TYPES = ['input_text', 'input_image', 'input_audio', 'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', 'encrypted_content']

/** OpenAI's 400 for a field an item must have (`Missing required parameter: 'input[0].content'.`). */
const missing = (at: string) => new GatewayError('invalid_request', `Missing required parameter: '${at}'.`, { param: at, code: 'missing_required_parameter' })

/** A call's or output's `call_id`, which it must have. */
function callIdOf(item: Json, at: string): string {
	if (item.call_id === undefined || item.call_id === null) throw missing(`${at}.call_id`)
	return reqString(item.call_id, `${at}.call_id`)
}

/**
 * Text, image and file parts of a message or tool output. Parts with no canonical slot (a file or image by OpenAI
 * `file_id`) are skipped: they reach a non-OpenAI vendor only after `unconvertible` refused them.
 * A part of a type OpenAI does not know is refused as OpenAI refuses it, rather than dropped unseen.
 */
function contentParts(content: unknown, at: string): Array<TextPart | ImagePart | FilePart> {
	if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : []
	if (content === undefined || content === null) throw missing(at)
	if (!Array.isArray(content)) throw badRequest(`${at} must be a string or an array of content parts`, at)
	return content.flatMap((raw, i): Array<TextPart | ImagePart | FilePart> => {
		const p = reqObject(raw, `${at}[${i}]`)
		if (p.type !== 'text' && !PART_TYPES.includes(p.type as string))
			throw badRequest(`Invalid value: '${String(p.type)}'. Supported values are: ${PART_TYPES.map((t) => `'${t}'`).join(', ')}.`, `${at}[${i}].type`)
		if (p.type === 'input_text' || p.type === 'output_text' || p.type === 'text') {
			const text = reqString(p.text, `${at}[${i}].text`)
			return text ? [{ type: 'text', text }] : []
		}
		if (p.type === 'refusal') return [{ type: 'text', text: reqString(p.refusal, `${at}[${i}].refusal`) }]
		if (p.type === 'input_image') {
			const url = str(p.image_url)
			// Neither is the client's to fix, whichever vendor serves the model (not "by file_id", which it did not send).
			if (!url && !str(p.file_id))
				throw new GatewayError('invalid_request', `Invalid '${at}[${i}]': an input_image needs 'image_url' or 'file_id'.`, { param: `${at}[${i}]`, code: 'missing_required_parameter' })
			if (!url) return [] // a file_id image: OpenAI's file store only
			const image: ImagePart = { type: 'image', source: decodeImageUrl(url, `${at}[${i}].image_url`, 'responses') }
			if (typeof p.detail === 'string') image.detail = p.detail
			return [image]
		}
		if (p.type === 'input_file' && typeof p.file_data === 'string') return [fileData(p, `${at}[${i}]`)]
		if (p.type === 'input_file' && typeof p.file_url === 'string') return [fileUrl(p, `${at}[${i}]`)]
		return []
	})
}

/**
 * `{type:"input_file", file_data, filename?}` → a file part, as chat's `file` part decodes (openai-chat/files.ts):
 * `file_data` is a base64 data URL (https://platform.openai.com/docs/guides/pdf-files), or bare base64 whose media
 * type its bytes or the file name tell.
 */
function fileData(p: Json, at: string): FilePart {
	const data = p.file_data as string
	const filename = str(p.filename)
	const parsed = parseDataUrl(data)
	if (!parsed && data.startsWith('data:')) throw badRequest(`${at}.file_data must be a base64 data URL (data:<media-type>;base64,<data>) or base64 data`, `${at}.file_data`)
	const out: FilePart = { type: 'file', source: parsed ? { kind: 'base64', ...parsed } : { kind: 'base64', mediaType: guessMediaType(data, filename), data }, path: at }
	if (filename !== undefined) out.filename = filename
	return out
}

/**
 * `{type:"input_file", file_url, filename?}` → a file part by URL: a public address any vendor that reads documents by
 * URL reads (Claude's `url` document), or the relay downloads for one that takes them only inline (Gemini,
 * relay/images.ts). The Vercel AI SDK's Responses model sends a PDF given as a URL this way. The media type is the one
 * the file name or the URL's path tells, if any; the vendors then read it as the PDF such a URL usually is.
 */
function fileUrl(p: Json, at: string): FilePart {
	const url = p.file_url as string
	// A URL that does not parse (`http://a b/x.pdf`) is the caller's to fix, as on every other URL field, not a 500.
	const parsed = /^https?:\/\//i.test(url) ? URL.parse(url) : null
	if (!parsed) throw badRequest(`${at}.file_url must be an http(s) URL`, `${at}.file_url`)
	const filename = str(p.filename)
	const guessed = guessMediaType('', filename ?? parsed.pathname)
	const out: FilePart = { type: 'file', source: guessed === 'application/octet-stream' ? { kind: 'url', url } : { kind: 'url', url, mediaType: guessed }, path: at }
	if (filename !== undefined) out.filename = filename
	return out
}

/**
 * Decodes `instructions` + `input`. Throws a 400 naming the field for malformed items; `field` is the name the client
 * gave the items under (a conversation's are `items`, checkItems()).
 * @example decodeInput('Hi', 'Be brief') // { system: [{type:'text',text:'Be brief'}], messages: [{role:'user',content:[{type:'text',text:'Hi'}]}] }
 */
export function decodeInput(input: unknown, instructions?: string | null, field = 'input'): { system: TextPart[]; messages: Message[] } {
	const system: TextPart[] = instructions ? [{ type: 'text', text: instructions }] : []
	const turns: Turn[] = []
	const toolNames = new Map<string, string>()
	const push = (role: Message['role'], parts: Part[]) => {
		if (!parts.length) return
		const last = turns[turns.length - 1]
		if (last?.role === role) last.parts.push(...parts)
		else turns.push({ role, parts })
	}
	const items = input === undefined || input === null ? [] : typeof input === 'string' ? [{ role: 'user', content: input }] : reqArray(input, field)
	/** A replayed call of any kind as the canonical call of `name`: in its answer's step when it was not the first (call-ids.ts). */
	const pushCall = (item: Json, at: string, name: string, input: Record<string, unknown>) => {
		const { id, signature, sibling } = callIdIn(callIdOf(item, at))
		toolNames.set(id, name)
		const call: Part = { type: 'tool_call', id, name, input, ...(signature && { signature }) }
		const step = sibling ? parallelStep(turns) : undefined
		if (step) step.parts.push(call)
		else push('assistant', [call])
	}
	// An output given before its call is read after it (tool-pairing.ts); paths still name the client's own indices.
	for (const i of readingOrder(items)) {
		const raw = items[i]
		const at = `${field}[${i}]`
		const item = reqObject(raw, at)
		const type = item.type ?? 'message'
		if (type === 'message') decodeMessageItem(item, at, system, push)
		else if (type === 'function_call' || type === 'custom_tool_call') {
			// A call of a namespaced function carries its namespace beside its name (namespaces.ts).
			const namespace = str(item.namespace)
			const name = namespace ? joinNamespace(namespace, reqString(item.name, `${at}.name`)) : reqString(item.name, `${at}.name`)
			// Read as no arguments, it would go to another vendor as a call with none, where OpenAI refuses it.
			if (type === 'function_call' && (item.arguments === undefined || item.arguments === null)) throw missing(`${at}.arguments`)
			// A custom tool's call is one of the function it went upstream as (custom-tools.ts).
			pushCall(item, at, name, type === 'custom_tool_call' ? { [CUSTOM_INPUT]: reqString(item.input, `${at}.input`) } : parseArguments(item.arguments))
		} else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
			const { id } = callIdIn(callIdOf(item, at))
			const part: ToolResultPart = { type: 'tool_result', toolCallId: id, content: contentParts(item.output ?? '', `${at}.output`) }
			const name = toolNames.get(id)
			if (name) part.name = name
			push('user', [part])
		} else if (type === 'tool_search_call') {
			// A search the client ran: a call of the function it went upstream as (tool-search.ts).
			pushCall(item, at, TOOL_SEARCH, searchArgumentsOf(item.arguments))
		} else if (type === 'tool_search_output') {
			// Its result: the definitions it loaded, which request.ts also offers upstream as tools.
			const { id } = callIdIn(reqString(item.call_id, `${at}.call_id`))
			push('user', [{ type: 'tool_result', toolCallId: id, name: TOOL_SEARCH, content: [{ type: 'text', text: searchOutputText(item.tools) }] }])
		} else if (isTypedCallItem(String(type))) {
			// A shell, apply_patch or local_shell call: one of the function it went upstream as (typed-tools.ts).
			const { name, input } = typedCallArguments(item)
			pushCall(item, at, name, input)
		} else if (isTypedOutputItem(String(type))) {
			const { id } = callIdIn(reqString(outputCallId(item), `${at}.call_id`))
			const { name, text, isError } = typedOutputResult(item)
			push('user', [{ type: 'tool_result', toolCallId: id, name, content: [{ type: 'text', text }], ...(isError && { isError }) }])
		} else if (type === 'reasoning') {
			const part = decodeReasoningItem(item, at)
			if (part) push('assistant', [part])
		}
	}
	const messages: Message[] = turns.map((t) => ({
		role: t.role,
		// Anthropic requires a user turn to start with its tool results (WIRE-NOTES wire §9).
		content: t.role === 'user' ? [...t.parts.filter((p) => p.type === 'tool_result'), ...t.parts.filter((p) => p.type !== 'tool_result')] : t.parts,
	}))
	return { system, messages }
}

/**
 * The assistant step a later call of an answer (call-ids.ts) belongs to when the outputs of that step's calls came
 * between them: clients that record each call with its output (Codex CLI) replay parallel calls interleaved, call A,
 * output A, call B, output B. Read as written, call B would be a step of its own, without the thinking block that
 * starts the answer on Anthropic (which wants the message back as received) and without the signature of a step's
 * first call on Gemini. Undefined when anything else came between (the call then starts a turn as written).
 */
function parallelStep(turns: Turn[]): Turn | undefined {
	const results = turns[turns.length - 1]
	const step = turns[turns.length - 2]
	if (results?.role !== 'user' || !results.parts.every((p) => p.type === 'tool_result')) return undefined
	return step?.role === 'assistant' && step.parts[step.parts.length - 1]?.type === 'tool_call' ? step : undefined
}

function decodeMessageItem(item: Json, at: string, system: TextPart[], push: (role: Message['role'], parts: Part[]) => void) {
	const role = item.role
	const parts = contentParts(item.content, `${at}.content`)
	if (role === 'system' || role === 'developer') system.push(...parts.filter((p): p is TextPart => p.type === 'text'))
	else if (role === 'user') push('user', parts)
	else if (role === 'assistant') push('assistant', parts.filter((p): p is TextPart => p.type === 'text'))
	else if (role === undefined || role === null) throw missing(`${at}.role`)
	else
		throw new GatewayError('invalid_request', `Invalid value: '${typeof role === 'string' ? role : JSON.stringify(role)}'. Supported values are: 'user', 'assistant', 'system', and 'developer'.`, {
			param: `${at}.role`,
			code: 'invalid_value',
		})
}

/**
 * The item types OpenAI's Responses API takes as input (openai-node 7.59 `ResponseInputItem`), `message` for an item
 * without a type.
 */
const INPUT_ITEM_TYPES = [
	'message',
	'file_search_call',
	'computer_call',
	'computer_call_output',
	'web_search_call',
	'function_call',
	'function_call_output',
	'tool_search_call',
	'tool_search_output',
	'additional_tools',
	'configuration_update',
	'reasoning',
	'compaction',
	'compaction_trigger',
	'image_generation_call',
	'code_interpreter_call',
	'local_shell_call',
	'local_shell_call_output',
	'shell_call',
	'shell_call_output',
	'apply_patch_call',
	'apply_patch_call_output',
	'mcp_list_tools',
	'mcp_approval_request',
	'mcp_approval_response',
	'mcp_call',
	'custom_tool_call_output',
	'custom_tool_call',
	'item_reference',
	'program',
	'program_output',
]

/**
 * Items the gateway keeps for later turns (a conversation's, under `field` `items`), held when given to the rules
 * `input` is: kept unchecked, every later turn would fail on an item its request never sent. Their type too, which on
 * `input` OpenAI checks itself (an OpenAI channel takes the body verbatim, new item kinds included).
 * @example checkItems([{ type: 'bogus' }], 'items') // throws 400 "Invalid value: 'bogus'. …", param items[0].type
 */
export function checkItems(items: unknown[], field: string): void {
	items.forEach((raw, i) => {
		const type = reqObject(raw, `${field}[${i}]`).type ?? 'message'
		if (!INPUT_ITEM_TYPES.includes(type as string))
			throw new GatewayError('invalid_request', `Invalid value: '${String(type)}'. Supported values are: ${INPUT_ITEM_TYPES.map((t) => `'${t}'`).join(', ')}.`, {
				param: `${field}[${i}].type`,
				code: 'invalid_value',
			})
	})
	decodeInput(items, undefined, field)
}
