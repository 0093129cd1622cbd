/**
 * Responses request ⇄ canonical request (https://platform.openai.com/docs/api-reference/responses/create).
 *
 * `extra` convention (as openai-chat): fields without a canonical slot (`store`, `metadata`, `include`, `truncation`,
 * `text.verbosity`…) ride in `extra` with `extra.__protocol = 'openai-responses'` and are re-emitted only by this
 * codec's `encodeRequest`. Features that need state only OpenAI keeps (`previous_response_id`, stored prompts,
 * `item_reference`) or tools only OpenAI runs are not errors here, since OpenAI channels take the body verbatim;
 * `unconvertible` names them for the relay, which refuses to convert such a request for another vendor.
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import type { AudioPart, ChatRequest, FilePart, Message, ResponseFormat, Tool, ToolChoice, ToolResultPart } from '../../core/ir'
import { budgetToEffort, nearestEffort, openaiEffort } from '../../core/reasoning'
import { packToolCallId } from '../../core/tool-ids'
import type { UpstreamOptions } from '../codec'
import { cannotSend } from '../files'
import { formatAsInstruction, systemAskingJson } from '../json-instruction'
import { samplesAtEffort } from '../../routing/reasoning-models'
import { refuseVendorOnly } from '../vendor-only'
import { imageUrlOf } from '../openai-chat/content'
import { encodeFilePart } from '../openai-chat/files'
import { openaiUser } from '../openai-chat/user'
import { isObject, optBoolean, optInteger, optNumber, optString, reqArray, reqObject, reqString, str, type Json } from '../openai-chat/guards'
import { decodeInput } from './items'
import { customToolFunction } from './custom-tools'
import { joinNamespace } from './namespaces'
import { isClientSearchItem, isClientToolSearch, offeredTools, offersClientToolSearch, toolSearchFunction, TOOL_SEARCH } from './tool-search'
import { isTypedCallItem, isTypedOutputItem, typedKind, typedToolFunction } from './typed-tools'
import { decodeWebSearchTool, encodeWebSearchTool, isWebSearchType } from './web-search'
import { decodePromptCacheHint } from '../prompt-cache-hint'

export const PROTOCOL = 'openai-responses'
const EXTRA_KEY = '__protocol'

const KNOWN = new Set([
	'model',
	'input',
	'instructions',
	'tools',
	'tool_choice',
	'parallel_tool_calls',
	'max_output_tokens',
	'temperature',
	'top_p',
	'text',
	'reasoning',
	'stream',
	'user',
	'safety_identifier',
])

function decodeTools(raw: unknown, req: ChatRequest, maxToolCalls: unknown): Tool[] {
	const list = reqArray(raw, 'tools')
	// With a client-run search, a deferred function is not offered until a search loads it (tool-search.ts).
	const deferring = offersClientToolSearch(list)
	const tools: Tool[] = []
	list.forEach((item, i) => {
		const tool = reqObject(item, `tools[${i}]`)
		// The search runs at whichever vendor serves the model (core/ir.ts `WebSearch`). `external_web_access: false` asks
		// for OpenAI's cached index only (Codex CLI's default); the other vendors search the live web, so no search then.
		if (isWebSearchType(tool.type)) {
			if (tool.external_web_access !== false) req.webSearch = decodeWebSearchTool(tool, maxToolCalls)
		}
		// A client-run tool search goes upstream as a function of the client's schema (tool-search.ts).
		else if (isClientToolSearch(tool)) tools.push(toolSearchFunction(tool))
		// shell, apply_patch, local_shell: functions of their calls' documented fields (typed-tools.ts).
		else if (typedKind(tool)) tools.push(typedToolFunction(typedKind(tool)!))
		else tools.push(...decodeClientTool(tool, `tools[${i}]`, deferring))
	})
	return tools
}

/**
 * A function, custom or namespace tool → the functions it goes upstream as (none for a built-in tool: see
 * unconvertible(), nor for a deferred one when `deferring`).
 */
function decodeClientTool(tool: Json, at: string, deferring: boolean): Tool[] {
	if (deferring && tool.defer_loading === true) return []
	if (tool.type === 'function') return [decodeFunction(tool, at)]
	// A custom (freeform) tool goes upstream as a function of one string (custom-tools.ts).
	if (tool.type === 'custom') return [customToolFunction(tool, at)]
	if (tool.type !== 'namespace') return []
	// Each function of a namespace goes upstream flat, under its joined name (namespaces.ts).
	const namespace = reqString(tool.name, `${at}.name`)
	return reqArray(tool.tools, `${at}.tools`).flatMap((inner, j) => {
		const f = reqObject(inner, `${at}.tools[${j}]`)
		if (f.type !== 'function' || (deferring && f.defer_loading === true)) return [] // a custom tool: see unconvertible()
		const out = decodeFunction(f, `${at}.tools[${j}]`)
		return [{ ...out, name: joinNamespace(namespace, out.name) }]
	})
}

/**
 * The tools the client's replayed searches loaded (`tool_search_output` items), offered upstream from then on as the
 * request's own, `defer_loading` notwithstanding: OpenAI keeps them callable for the rest of the conversation.
 */
function decodeLoadedTools(input: unknown, tools: Tool[]) {
	if (!Array.isArray(input)) return
	const names = new Set(tools.map((t) => t.name))
	input.forEach((item, i) => {
		if (!isObject(item) || item.type !== 'tool_search_output' || !Array.isArray(item.tools)) return
		item.tools.forEach((t, j) => {
			for (const out of decodeClientTool(reqObject(t, `input[${i}].tools[${j}]`), `input[${i}].tools[${j}]`, false)) {
				if (names.has(out.name)) continue
				names.add(out.name)
				tools.push(out)
			}
		})
	})
}

function decodeFunction(tool: Json, at: string): Tool {
	const name = reqString(tool.name, `${at}.name`)
	if (!name) throw badRequest(`${at}.name must not be empty`, `${at}.name`)
	const params = tool.parameters
	const out: Tool = { name, parameters: params === undefined || params === null ? { type: 'object', properties: {} } : reqObject(params, `${at}.parameters`) }
	const description = optString(tool.description, `${at}.description`)
	if (description) out.description = description
	const strict = optBoolean(tool.strict, `${at}.strict`)
	if (strict !== undefined) out.strict = strict
	return out
}

/**
 * `tool_choice`: the three modes, a named function or custom tool, or `allowed_tools` (a mode over a subset of the tools, which
 * narrows the canonical tool list to that subset).
 */
function decodeToolChoice(raw: unknown, req: ChatRequest, declared: Set<string>) {
	if (raw === 'auto' || raw === 'none' || raw === 'required') return void (req.toolChoice = { type: raw })
	const c = reqObject(raw, 'tool_choice')
	if (c.type === 'function' || c.type === 'custom') return void (req.toolChoice = { type: 'tool', name: chosen(reqString(c.name, 'tool_choice.name'), declared) })
	if (c.type === 'allowed_tools') {
		const allowed = new Set(reqArray(c.tools, 'tool_choice.tools').flatMap((t) => (isObject(t) && (t.type === 'function' || t.type === 'custom') && typeof t.name === 'string' ? [chosen(t.name, declared)] : [])))
		req.tools = req.tools?.filter((t) => allowed.has(t.name))
		req.toolChoice = { type: c.mode === 'required' ? 'required' : 'auto' }
	}
	if (isWebSearchType(c.type) && req.webSearch) req.webSearch.forced = true
	// The client-run search, offered to other vendors as a function of that name (tool-search.ts).
	if (c.type === 'tool_search' && req.tools?.some((t) => t.name === TOOL_SEARCH)) req.toolChoice = { type: 'tool', name: TOOL_SEARCH }
	// `{type: "shell"}` / `{type: "apply_patch"}` force the typed tool, offered as a function of that name (typed-tools.ts).
	if ((c.type === 'shell' || c.type === 'apply_patch') && req.tools?.some((t) => t.name === c.type)) req.toolChoice = { type: 'tool', name: c.type }
	// Other built-in tool choices (`{type:'file_search'}`…): see unconvertible().
}

/**
 * A function or custom tool `tool_choice` names, refused as OpenAI refuses it when no tool has that name (400 `Tool
 * choice 'x' not found in 'tools' parameter.`): another vendor would be asked to force a call it cannot make, and
 * refuse in its own words.
 */
function chosen(name: string, declared: Set<string>): string {
	if (!declared.has(name)) throw new GatewayError('invalid_request', `Tool choice '${name}' not found in 'tools' parameter.`, { param: 'tool_choice' })
	return name
}

/**
 * Every name a tool offered to the model has (`offeredTools`: the request's and those a replayed search loaded), of any
 * type, also inside a namespace: what a `tool_choice` may name. Wider than the converted tools, so nothing OpenAI takes
 * is refused.
 */
function declaredNames(offered: unknown): Set<string> {
	const names = new Set<string>()
	const add = (list: unknown) => {
		if (!Array.isArray(list)) return
		for (const t of list) {
			if (!isObject(t)) continue
			if (typeof t.name === 'string') names.add(t.name)
			if (t.type === 'namespace') add(t.tools)
		}
	}
	add(offered)
	return names
}

function decodeFormat(raw: unknown): ResponseFormat | undefined {
	if (raw === undefined || raw === null) return undefined
	const f = reqObject(raw, 'text.format')
	if (f.type === 'text' || f.type === 'json_object') return { type: f.type }
	if (f.type !== 'json_schema') throw badRequest('text.format.type must be one of text, json_object, json_schema', 'text.format.type')
	const out: ResponseFormat = { type: 'json_schema', name: reqString(f.name, 'text.format.name'), schema: f.schema === undefined ? {} : reqObject(f.schema, 'text.format.schema') }
	const strict = optBoolean(f.strict, 'text.format.strict')
	if (strict !== undefined) out.strict = strict
	const description = optString(f.description, 'text.format.description')
	if (description !== undefined) out.description = description
	return out
}

/**
 * Client body → canonical request. Throws GatewayError('invalid_request') naming the field for malformed input.
 * @param opts.stream overrides `body.stream`
 */
export function decodeRequest(body: unknown, opts: { stream?: boolean } = {}): ChatRequest {
	const b = reqObject(body, 'body')
	const model = reqString(b.model, 'model')
	if (!model) throw badRequest('model must not be empty', 'model')
	const { system, messages } = decodeInput(b.input, optString(b.instructions, 'instructions'))
	const req: ChatRequest = { model, messages, stream: opts.stream ?? optBoolean(b.stream, 'stream') ?? false }
	if (system.length) req.system = system
	const extra: Json = {}
	for (const [k, v] of Object.entries(b)) if (!KNOWN.has(k) && v !== undefined && v !== null) extra[k] = v

	const tools = b.tools !== undefined && b.tools !== null ? decodeTools(b.tools, req, b.max_tool_calls) : []
	decodeLoadedTools(b.input, tools)
	if (tools.length) req.tools = tools
	if (b.tool_choice !== undefined && b.tool_choice !== null) decodeToolChoice(b.tool_choice, req, declaredNames(offeredTools(b.tools, b.input)))
	const parallel = optBoolean(b.parallel_tool_calls, 'parallel_tool_calls')
	if (parallel !== undefined) req.parallelToolCalls = parallel
	const maxTokens = optInteger(b.max_output_tokens, 'max_output_tokens', 1)
	if (maxTokens !== undefined) req.maxTokens = maxTokens
	const temperature = optNumber(b.temperature, 'temperature')
	if (temperature !== undefined) req.temperature = temperature
	const topP = optNumber(b.top_p, 'top_p')
	if (topP !== undefined) req.topP = topP
	decodeInclude(b.include)
	decodeLogprobs(b, req)

	if (b.text !== undefined && b.text !== null) {
		const { format, ...rest } = reqObject(b.text, 'text')
		const rf = decodeFormat(format)
		if (rf) req.responseFormat = rf
		if (Object.keys(rest).length) extra.text = rest // verbosity
	}
	if (b.reasoning !== undefined && b.reasoning !== null) {
		const r = reqObject(b.reasoning, 'reasoning')
		const effort = optString(r.effort, 'reasoning.effort')
		const summary = optString(r.summary, 'reasoning.summary')
		if (effort === 'none') req.reasoning = { enabled: false }
		else if (effort !== undefined || summary !== undefined) {
			const canonical = effort === undefined ? undefined : openaiEffort(effort)
			if (effort !== undefined && !canonical) throw badRequest('reasoning.effort must be one of none, minimal, low, medium, high, xhigh, max', 'reasoning.effort')
			// `xhigh` and `max` have no canonical value: the nearest meaning for other vendors, the original for OpenAI ones.
			req.reasoning = { enabled: true, ...(canonical && { effort: canonical }) }
			// Asking for a summary is asking to see the reasoning (Gemini `includeThoughts`).
			if (summary !== undefined) req.reasoning.includeThoughts = true
		}
		extra.reasoning = r
	}
	const user = optString(b.safety_identifier, 'safety_identifier') ?? optString(b.user, 'user')
	if (user !== undefined) req.user = user
	decodePromptCacheHint(b, req)
	// Always marked, extras or not: refusals name the client's own fields by it (final-turn.ts `conversationField`).
	req.extra = { [EXTRA_KEY]: PROTOCOL, ...extra }
	return req
}

/** What `include` may ask for (openai-node 7.59 `ResponseIncludable`). */
const INCLUDABLE = [
	'file_search_call.results',
	'web_search_call.results',
	'web_search_call.action.sources',
	'message.input_image.image_url',
	'computer_call_output.output.image_url',
	'code_interpreter_call.outputs',
	'reasoning.encrypted_content',
	'message.output_text.logprobs',
]

/**
 * `include` held to OpenAI's 400s (`invalid_type` for no array, `invalid_value` naming the value it does not know),
 * whichever vendor serves the model: a converted answer would otherwise be given, and billed, for a body OpenAI refuses.
 */
function decodeInclude(raw: unknown) {
	if (raw === undefined || raw === null) return
	if (!Array.isArray(raw))
		throw new GatewayError('invalid_request', `Invalid type for 'include': expected an array of strings, but got ${typeof raw === 'object' ? 'an object' : `a ${typeof raw}`} instead.`, {
			param: 'include',
			code: 'invalid_type',
		})
	raw.forEach((v, i) => {
		if (typeof v !== 'string') throw new GatewayError('invalid_request', `Invalid type for 'include[${i}]': expected a string, but got ${JSON.stringify(v)} instead.`, { param: `include[${i}]`, code: 'invalid_type' })
		if (!INCLUDABLE.includes(v))
			throw new GatewayError('invalid_request', `Invalid value: '${v}'. Supported values are: ${INCLUDABLE.map((x) => `'${x}'`).join(', ')}.`, { param: `include[${i}]`, code: 'invalid_value' })
	})
}

/** What asks a Responses answer for the log probabilities of its text (`output_text.logprobs`). */
const LOGPROBS_INCLUDE = 'message.output_text.logprobs'

/**
 * `include: ["message.output_text.logprobs"]` and `top_logprobs` (0 to 20 alternatives per token) → canonical
 * logprobs, as chat's `logprobs` / `top_logprobs` (https://platform.openai.com/docs/api-reference/responses/create).
 * Either asks for them; a vendor that has none (Claude) refuses the request rather than answer without them.
 */
function decodeLogprobs(b: Json, req: ChatRequest) {
	const top = optInteger(b.top_logprobs, 'top_logprobs', 0)
	if (top !== undefined && top > 20) throw badRequest('top_logprobs must be an integer between 0 and 20', 'top_logprobs')
	const included = Array.isArray(b.include) && b.include.includes(LOGPROBS_INCLUDE)
	if (!included && !top) return
	req.logprobs = true
	if (top !== undefined) req.topLogprobs = top
}

/** Item types other vendors take: a `web_search_call` is a record of a search OpenAI ran, left out for them (items.ts). */
const CONVERTIBLE_TYPES = new Set(['message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning', 'web_search_call'])

/**
 * Why this request cannot be converted for a vendor other than OpenAI, or undefined when it can. Such features
 * need OpenAI's stored state or OpenAI-run tools; answering 400 beats dropping them silently (WIRE-NOTES #8).
 * @example unconvertible({ model: 'm', previous_response_id: 'resp_1' }) // 'previous_response_id needs …'
 */
export function unconvertible(body: Record<string, unknown>): string | undefined {
	if (typeof body.previous_response_id === 'string')
		// Point at what does work for every model: the gateway's own conversations (what the Agents SDK's
		// `conversationId` and `OpenAIConversationsSession` use), or the whole history in `input`.
		return 'previous_response_id needs the conversation stored by OpenAI, and this model is served by another vendor: send the whole conversation in `input` instead, or keep it in a conversation of this gateway (`conversation`, created with POST /v1/conversations), which works for every model'
	if (body.conversation !== undefined && body.conversation !== null) return '`conversation` needs server-side state only OpenAI keeps: send the whole conversation in `input` instead'
	if (body.prompt !== undefined && body.prompt !== null) return '`prompt` (a stored prompt template) is only available on OpenAI models'
	if (body.background === true) return '`background` mode is only available on OpenAI models'
	const items = Array.isArray(body.input) ? body.input : []
	for (const [i, item] of items.entries()) {
		if (!isObject(item)) continue
		const type = str(item.type) ?? 'message'
		// A reference the gateway could not resolve (modules/responses/converted-items.ts): say how to do without.
		if (type === 'item_reference')
			return `input[${i}] of type 'item_reference' names an item this gateway does not hold (only OpenAI stores responses for later reference): send the items themselves in \`input\` (with the Vercel AI SDK, providerOptions.openai.store = false)`
		// A search the client ran is a call and its result (tool-search.ts); one OpenAI ran is OpenAI's.
		if (type === 'tool_search_call' || type === 'tool_search_output') {
			if (!isClientSearchItem(item)) return `input[${i}] of type '${type}' records a tool search run by OpenAI (execution '${str(item.execution) ?? 'server'}'), which only OpenAI models take`
			const loaded = type === 'tool_search_output' && Array.isArray(item.tools) ? item.tools : []
			const why = unconvertibleTool(loaded, (j) => `input[${i}].tools[${j}]`)
			if (why) return why
			continue
		}
		if (!CONVERTIBLE_TYPES.has(type) && !isTypedCallItem(type) && !isTypedOutputItem(type)) return `input[${i}] of type '${type}' is only available on OpenAI models`
		const parts = Array.isArray(item.content) ? item.content : Array.isArray(item.output) ? item.output : []
		for (const [j, p] of parts.entries()) {
			if (!isObject(p)) continue
			// A file given as `file_data` or by `file_url` is converted (items.ts); one of OpenAI's file store is not.
			if ((p.type === 'input_file' && !str(p.file_data) && !str(p.file_url)) || p.type === 'input_audio' || (p.type === 'input_image' && !str(p.image_url)))
				return `input[${i}] content[${j}] (${p.type === 'input_image' ? 'an image by file_id' : p.type}) is only available on OpenAI models`
		}
	}
	const why = unconvertibleTool(Array.isArray(body.tools) ? body.tools : [], (i) => `tools[${i}]`)
	if (why) return why
	const choice = body.tool_choice
	const offers = (kind: string) => Array.isArray(body.tools) && body.tools.some((t) => typedKind(t) === kind)
	const takes = (type: unknown) =>
		type === 'function' ||
		type === 'custom' ||
		type === 'allowed_tools' ||
		isWebSearchType(type) ||
		(type === 'tool_search' && offersClientToolSearch(body.tools)) ||
		((type === 'shell' || type === 'apply_patch') && offers(type))
	if (isObject(choice) && !takes(choice.type)) return `tool_choice of type '${str(choice.type)}' is only available on OpenAI models`
	return undefined
}

/** Why one of these tools (the request's, or those a replayed search loaded) cannot go to another vendor. */
function unconvertibleTool(tools: unknown[], at: (i: number) => string): string | undefined {
	for (const [i, t] of tools.entries()) {
		if (!isObject(t) || t.type === 'function' || t.type === 'custom' || isWebSearchType(t.type) || isClientToolSearch(t) || typedKind(t)) continue
		if (t.type === 'namespace') {
			const custom = (Array.isArray(t.tools) ? t.tools : []).findIndex((f) => !isObject(f) || f.type !== 'function')
			if (custom < 0) continue
			return `${at(i)}.tools[${custom}] of namespace '${str(t.name)}' is not a function tool, which only OpenAI models take inside a namespace: declare it as a tool of type 'function' for this model`
		}
		// Search run at OpenAI (`execution` defaults to server): only a client-run one is the client's own tool.
		if (t.type === 'tool_search') return `${at(i)} of type 'tool_search' with execution '${str(t.execution) ?? 'server'}' is run by OpenAI: set execution 'client' and run the search yourself for this model`
		if (t.type === 'shell')
			return `${at(i)} of type 'shell' runs in OpenAI's container (environment '${isObject(t.environment) ? str(t.environment.type) : ''}'), which only OpenAI models have: use environment {type: 'local'} and run the commands yourself for this model`
		// Claude's computer tool has another action vocabulary and screenshot flow: not mapped.
		if (t.type === 'computer_use_preview' || t.type === 'computer')
			return `${at(i)} of type '${str(t.type)}' (computer use) is only available on OpenAI models: its actions and screenshots have no equivalent for this model through the Responses API`
		return `${at(i)} of type '${str(t.type)}' is an OpenAI built-in tool`
	}
	return undefined
}

const toolChoiceOut = (c: ToolChoice) => (c.type === 'tool' ? { type: 'function', name: c.name } : c.type)

/** A file as input parts: `input_file` takes chat's `file` fields (file_data, file_id, filename); audio is refused. */
function fileInput(p: FilePart | AudioPart, where: string): Json[] {
	if (p.type === 'audio') throw cannotSend(p, 'OpenAI Responses', 'it takes no audio input', where)
	return encodeFilePart(p, where).map((w) =>
		w.type === 'file' ? { type: 'input_file', ...w.file } : w.type === 'image_url' ? { type: 'input_image', image_url: w.image_url.url, detail: 'auto' } : w.type === 'text' ? { type: 'input_text', text: w.text } : w,
	)
}

/** A tool result's `output`: a string, or input parts when the tool returned images or files. */
function toolOutput(p: ToolResultPart): string | Json[] {
	if (p.content.every((c) => c.type === 'text')) return p.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
	return p.content.flatMap((c) =>
		c.type === 'text' ? [{ type: 'input_text', text: c.text }] : c.type === 'image' ? [{ type: 'input_image', image_url: imageUrlOf(c.source), detail: c.detail ?? 'auto' }] : fileInput(c, 'input'),
	)
}

function encodeInput(messages: Message[]): Json[] {
	const items: Json[] = []
	for (const m of messages) {
		const content: Json[] = []
		const flush = () => {
			if (content.length) items.push({ type: 'message', role: m.role, content: content.splice(0) })
		}
		for (const p of m.content) {
			if (p.type === 'text') content.push({ type: m.role === 'user' ? 'input_text' : 'output_text', text: p.text })
			else if (p.type === 'image') content.push({ type: 'input_image', image_url: imageUrlOf(p.source), detail: p.detail ?? 'auto' })
			else if (p.type === 'file' || p.type === 'audio') content.push(...fileInput(p, 'input'))
			else if (p.type === 'tool_call') {
				flush()
				items.push({ type: 'function_call', call_id: packToolCallId(p.id, p.signature), name: p.name, arguments: JSON.stringify(p.input) })
			} else if (p.type === 'tool_result') {
				flush()
				items.push({ type: 'function_call_output', call_id: p.toolCallId, output: toolOutput(p) })
			}
			// Thinking is left out: the vendor takes back only reasoning it encrypted itself, which a converted answer does
			// not keep, and refuses any other ("The encrypted content for item rs_… could not be verified.", which
			// modules/responses/native.ts `withoutForeignReasoning` avoids for Responses clients).
		}
		flush()
	}
	return items
}

/** Canonical request → a Responses body for an upstream that speaks this protocol. */
export function encodeRequest(req: ChatRequest, model: string, upstream?: UpstreamOptions): Json {
	refuseVendorOnly(req, PROTOCOL)
	const body: Json = {}
	if (req.extra?.[EXTRA_KEY] === PROTOCOL) for (const [k, v] of Object.entries(req.extra)) if (k !== EXTRA_KEY) body[k] = v
	body.model = model
	// The client's own body (extra) already lists its tools as written; another protocol's search is added here.
	const own = req.extra?.[EXTRA_KEY] === PROTOCOL
	const system = own ? req.system : systemAskingJson(req)
	if (system?.length) body.instructions = system.map((p) => p.text).join('\n\n')
	body.input = encodeInput(req.messages)
	if (req.tools?.length || req.webSearch) {
		body.tools = (req.tools ?? []).map((t) => ({
			type: 'function',
			name: t.name,
			...(t.description !== undefined && { description: t.description }),
			parameters: t.parameters,
			strict: t.strict ?? false,
		}))
		if (req.webSearch) (body.tools as Json[]).push(encodeWebSearchTool(req.webSearch))
		if (req.webSearch?.forced) body.tool_choice = { type: 'web_search' }
		else if (req.toolChoice) body.tool_choice = toolChoiceOut(req.toolChoice)
		if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls
		if (req.webSearch?.maxUses !== undefined && !own) body.max_tool_calls = req.webSearch.maxUses
		// Another protocol's search answers with the pages found (Anthropic's results, Gemini's grounding chunks), which
		// OpenAI lists only when asked (https://platform.openai.com/docs/guides/tools-web-search, "Sources").
		if (req.webSearch && !own) body.include = [...(Array.isArray(body.include) ? body.include : []), 'web_search_call.action.sources']
	}
	if (req.maxTokens !== undefined) body.max_output_tokens = req.maxTokens
	// Another protocol's schema whose root is no object goes as the instruction alone (openai-chat/request.ts).
	const instructed = !own && formatAsInstruction(req.responseFormat)
	if (req.responseFormat && !instructed) {
		const rf = req.responseFormat
		const format = rf.type === 'json_schema' ? { type: 'json_schema', name: rf.name, schema: rf.schema, ...(rf.strict !== undefined && { strict: rf.strict }), ...(rf.description !== undefined && { description: rf.description }) } : { type: rf.type }
		body.text = { ...(isObject(body.text) ? body.text : {}), format }
	}
	// A model that does not reason refuses `reasoning` (chat's request.ts): it answers without thinking.
	const r = upstream?.reasoningEffort === false ? undefined : req.reasoning
	if (r && !isObject(body.reasoning)) {
		const asked = r.enabled ? (r.effort ?? (r.budgetTokens !== undefined ? budgetToEffort(r.budgetTokens) : undefined)) : 'none'
		// The nearest the model takes: "none" to a model that cannot turn reasoning off is its least.
		const effort = asked && nearestEffort(asked, upstream?.efforts)
		if (effort || r.includeThoughts) body.reasoning = { ...(effort && { effort }), ...(r.includeThoughts && { summary: 'auto' }) }
	}
	// A reasoning model refuses sampling settings, but at effort none (as in openai-chat/request.ts).
	if (!upstream?.fixedSampling || samplesAtEffort(model, isObject(body.reasoning) ? body.reasoning.effort : undefined)) {
		if (req.temperature !== undefined) body.temperature = req.temperature
		if (req.topP !== undefined) body.top_p = req.topP
	}
	if (req.stream) body.stream = true
	// At most 64 characters, as on chat (Claude Code's metadata.user_id is 150): its sha256 past that.
	if (req.user !== undefined) body.user = openaiUser(req.user)
	return body
}
