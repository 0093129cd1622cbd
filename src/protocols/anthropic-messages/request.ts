/**
 * Anthropic request body → canonical request (client side). Validation mirrors what the Messages API itself
 * rejects (https://docs.anthropic.com/en/api/messages), with the same `field: reason` wording.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ChatRequest, Message, Reasoning, ReasoningEffort, TextPart, Tool, ToolChoice } from '../../core/ir'
import {
	at,
	invalid,
	isObject,
	type Json,
	optArray,
	optBoolean,
	optInteger,
	optNumber,
	optObject,
	optString,
	reqObject,
	reqString,
} from './check'
import { clientToolFunction, isClientTool } from './client-tools'
import { decodeCacheControl, decodeContent, decodeText, type DecodeState } from './content'
import { decodeWebSearchTool, isWebSearchTool, WEB_SEARCH_NAME } from './web-search'
import { type AnthropicExtra, PROTOCOL } from './extra'
import type { AnthropicRequest } from './model'

export { encodeRequest } from './request-encode'

/** Top-level fields with a canonical slot; every other field goes to `extra` verbatim. */
const KNOWN = new Set([
	'model',
	'max_tokens',
	'messages',
	'system',
	'tools',
	'tool_choice',
	'thinking',
	'stop_sequences',
	'temperature',
	'top_p',
	'top_k',
	'metadata',
	'stream',
])

function decodeSystem(s: unknown, path: string): TextPart[] {
	if (s === undefined || s === null) return []
	if (typeof s === 'string') return s === '' ? [] : [{ type: 'text', text: s }]
	if (!Array.isArray(s)) throw invalid(path, 'Input should be a valid string or list')
	return s.map((block, i) => {
		const p = at(path, i)
		if (!isObject(block)) throw invalid(p, 'Input should be a valid dictionary')
		if (block.type !== 'text') throw invalid(at(p, 'type'), "Input should be 'text'")
		return decodeText(block, p)
	})
}

function decodeTools(b: Json, extra: AnthropicExtra, loaded: Set<string>): Tool[] | undefined {
	const list = optArray(b, 'tools', '')
	if (!list) return undefined
	const tools: Tool[] = []
	list.forEach((raw, i) => {
		const p = at('tools', i)
		if (!isObject(raw)) throw invalid(p, 'Input should be a valid dictionary')
		if (raw.type !== undefined && raw.type !== null && raw.type !== 'custom') {
			// Anthropic-defined tools go to Claude as written: server tools (web_search_20250305, code_execution_…) run at
			// Anthropic; those the client runs (bash_20250124, text_editor_…) are also functions for other vendors.
			if (typeof raw.type !== 'string') throw invalid(at(p, 'type'), 'Input should be a valid string')
			;(extra.__tools ??= []).push({ index: i, tool: raw })
			if (isClientTool(raw.type)) tools.push(clientToolFunction(raw, p))
			return
		}
		const name = reqString(raw, 'name', p)
		if (!name) throw invalid(at(p, 'name'), 'String should have at least 1 character')
		const schema = reqObject(raw, 'input_schema', p)
		if (schema.type !== 'object') throw invalid(at(at(p, 'input_schema'), 'type'), "Input should be 'object'")
		// A deferred tool no `tool_reference` has loaded is not in the model's context at Anthropic (Claude Code sends a
		// `DeferredToolPlaceholder` so): another vendor is not offered it either. Kept as written for Anthropic.
		if (raw.defer_loading === true && !loaded.has(name)) {
			;(extra.__tools ??= []).push({ index: i, tool: raw })
			return
		}
		const tool: Tool = { name, parameters: schema }
		const description = optString(raw, 'description', p)
		if (description !== undefined) tool.description = description
		const strict = optBoolean(raw, 'strict', p)
		if (strict !== undefined) tool.strict = strict
		const cc = decodeCacheControl(raw, p)
		if (cc) tool.cacheControl = cc
		// A key loop rather than entries and a filter: agents send tens of tools on every turn.
		let rest: Json | undefined
		for (const k in raw) if (!TOOL_FIELDS.has(k)) (rest ??= {})[k] = raw[k]
		if (rest) (extra.__toolFields ??= {})[name] = rest
		tools.push(tool)
	})
	return tools
}

/** A custom tool's members with a canonical slot; others ride in `extra.__toolFields`. */
const TOOL_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'cache_control', 'strict'])

/** `any` is OpenAI's `required`; `disable_parallel_tool_use` is the inverse of `parallel_tool_calls`. */
function decodeToolChoice(b: Json): { toolChoice?: ToolChoice; parallel?: boolean } {
	const tc = optObject(b, 'tool_choice', '')
	if (!tc) return {}
	const disable = optBoolean(tc, 'disable_parallel_tool_use', 'tool_choice')
	const parallel = disable === undefined ? undefined : !disable
	switch (tc.type) {
		case 'auto':
			return { toolChoice: { type: 'auto' }, parallel }
		case 'any':
			return { toolChoice: { type: 'required' }, parallel }
		case 'none':
			return { toolChoice: { type: 'none' } }
		case 'tool':
			return { toolChoice: { type: 'tool', name: reqString(tc, 'name', 'tool_choice') }, parallel }
		default:
			throw invalid('tool_choice.type', "Input should be 'auto', 'any', 'tool' or 'none'")
	}
}

/**
 * A `tool_choice` that forces a tool the request does not offer: another vendor would be asked to force a call it
 * cannot make (OpenAI's `function.name`, Gemini's `allowedFunctionNames`) or, with no tools, would drop the choice and
 * answer without the call asked for. Refused for every model before any upstream call, as the Responses and chat
 * decoders refuse theirs. Tools of MCP servers (`mcp_servers`, an `mcp_toolset`) are listed only once connected, so
 * a request naming any is left alone.
 */
function refuseUnofferedChoice(b: Json, choice: ToolChoice): void {
	if (choice.type !== 'required' && choice.type !== 'tool') return
	if (b.mcp_servers !== undefined && b.mcp_servers !== null) return
	const list = Array.isArray(b.tools) ? b.tools : []
	const names = new Set<string>()
	for (const t of list) {
		if (!isObject(t)) continue
		if (t.type === 'mcp_toolset') return
		if (typeof t.name === 'string') names.add(t.name)
	}
	const type = choice.type === 'required' ? 'any' : 'tool'
	if (!list.length) throw invalid('tool_choice', `type '${type}' forces a tool call, but the request has no \`tools\``)
	if (choice.type === 'tool' && !names.has(choice.name)) throw invalid('tool_choice.name', `tool '${choice.name}' is not among the request's tools`)
}

const EFFORT: Record<string, ReasoningEffort> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' }

function decodeThinking(b: Json, extra: AnthropicExtra): Reasoning | undefined {
	const th = optObject(b, 'thinking', '')
	if (!th) return undefined
	const display = optString(th, 'display', 'thinking')
	// Kept whole when it says more than the canonical model can (adaptive, display, between_tools).
	if (th.type !== 'disabled' && (th.type !== 'enabled' || display !== undefined)) extra.__thinking = th
	const base: Reasoning = { enabled: true }
	// `updates` shows some thinking: another vendor's model has no progress notes, so it gets its default (thoughts shown).
	if (display === 'summarized' || display === 'omitted') base.includeThoughts = display === 'summarized'
	switch (th.type) {
		case 'disabled':
			return { enabled: false }
		case 'adaptive':
		case 'between_tools':
			return base
		case 'enabled': {
			// -1: Gemini's dynamic budget (model.ts `thinkingBudget`), the model's own default depth.
			if (th.budget_tokens === -1) return base
			const budget = optInteger(th, 'budget_tokens', 'thinking', 1024)
			if (budget === undefined) throw invalid('thinking.budget_tokens', 'Field required')
			// "`max_tokens` must be greater than `thinking.budget_tokens`" is Claude's rule, left to Claude (its 400 comes
			// back as is). Other vendors get the budget fitted under the cap (core/reasoning.ts): Qwen Code sends 32000
			// with gpt-4.1's 16384 or gemini-2.5-pro's 8192 when pointed at /v1/messages.
			return { ...base, budgetTokens: budget }
		}
		default:
			throw invalid('thinking.type', "Input should be 'enabled', 'disabled' or 'adaptive'")
	}
}

/**
 * `system`-role messages join the system prompt, wherever they stand. Anthropic takes them mid-conversation too
 * (https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages; Claude Code sends one
 * after its first user turn); the canonical request has one system prompt, as OpenAI chat's decoder reads a late one.
 */
function decodeMessages(list: unknown[], system: TextPart[], st: DecodeState): Message[] {
	const messages: Message[] = []
	for (let i = 0; i < list.length; i++) {
		const raw = list[i]
		const p = at('messages', i)
		if (!isObject(raw)) throw invalid(p, 'Input should be a valid dictionary')
		const role = raw.role
		if (raw.content === undefined || raw.content === null) throw invalid(at(p, 'content'), 'Field required')
		if (role === 'system') {
			system.push(...decodeSystem(raw.content, at(p, 'content')))
			continue
		}
		if (role !== 'user' && role !== 'assistant') throw invalid(at(p, 'role'), "Input should be 'user' or 'assistant'")
		// Anthropic's own rule, for every model: another vendor's encoder would drop the message (OpenAI then refusing an
		// empty `messages` in its own words). Whitespace-only text is not refused here: the encoders drop it on purpose.
		if ((raw.content === '' || (Array.isArray(raw.content) && !raw.content.length)) && !(role === 'assistant' && i === list.length - 1))
			throw invalid(p, 'all messages must have non-empty content except for the optional final assistant message')
		messages.push({ role, content: decodeContent(raw.content, role, messages.length, at(p, 'content'), st) })
	}
	return messages
}

/**
 * Client body → canonical request. Throws GatewayError('invalid_request') (400) naming the field for anything the
 * Messages API would refuse. Unknown fields and blocks are kept in `extra` (see extra.ts).
 */
export function decodeRequest(body: AnthropicRequest, opts?: { stream?: boolean }): ChatRequest {
	const b: unknown = body
	if (!isObject(b)) throw badRequest('request body must be a JSON object')
	const model = reqString(b, 'model', '')
	if (!model) throw invalid('model', 'String should have at least 1 character')
	const maxTokens = optInteger(b, 'max_tokens', '', 1)
	if (maxTokens === undefined) throw invalid('max_tokens', 'Field required')
	const list = optArray(b, 'messages', '')
	if (!list) throw invalid('messages', 'Field required')
	if (!list.length) throw invalid('messages', 'List should have at least 1 item')

	const extra: AnthropicExtra = { __protocol: PROTOCOL }
	const st: DecodeState = { blocks: [], toolNames: new Map(), vendorOnly: [], loaded: new Set() }
	const system = decodeSystem(b.system, 'system')
	const messages = decodeMessages(list, system, st)
	if (!messages.length) throw invalid('messages', 'at least one user or assistant message is required')
	if (st.blocks.length) extra.__blocks = st.blocks

	const req: ChatRequest = { model, messages, maxTokens, stream: opts?.stream ?? optBoolean(b, 'stream', '') ?? false }
	if (system.length) req.system = system
	const tools = decodeTools(b, extra, st.loaded)
	if (tools?.length) req.tools = tools
	// Server tools run at Anthropic; `mcp_toolset` names tools of `mcp_servers`, which the gateway's own MCP client
	// serves for other vendors (src/mcp), so it is not one.
	// The web search server tool is the canonical search (core/ir.ts `WebSearch`), run by whichever vendor serves the model.
	for (const s of extra.__tools ?? []) {
		if (s.tool.type === undefined || s.tool.type === null || s.tool.type === 'custom') continue // a deferred custom tool, not loaded yet
		if (isWebSearchTool(s.tool.type)) req.webSearch = decodeWebSearchTool(s.tool)
		else if (s.tool.type !== 'mcp_toolset' && !isClientTool(s.tool.type)) st.vendorOnly.push({ protocol: PROTOCOL, what: `server tool ${String(s.tool.type)}`, path: at('tools', s.index) })
	}
	// A message thread lives at Anthropic (https://platform.claude.com/docs/en/build-with-claude/message-threads): a
	// `continue` carries only the new messages, so another vendor answering it would answer them without the
	// conversation. It is refused as a lost thread, which the SDK replays in full under a `create`; a `create` carries the
	// whole conversation and is answered as usual (no thread is kept: its continue is that lost thread).
	if (isObject(b.thread) && b.thread.type === 'continue') st.vendorOnly.push({ protocol: PROTOCOL, what: 'message thread', path: 'thread', lost: 'thread_not_found' })
	if (st.vendorOnly.length) req.vendorOnly = st.vendorOnly
	const { toolChoice, parallel } = decodeToolChoice(b)
	if (toolChoice) refuseUnofferedChoice(b, toolChoice)
	// Naming the search forces it; it is no function tool of the canonical list.
	if (toolChoice?.type === 'tool' && toolChoice.name === WEB_SEARCH_NAME && req.webSearch) req.webSearch.forced = true
	else if (toolChoice) req.toolChoice = toolChoice
	if (parallel !== undefined) req.parallelToolCalls = parallel
	const reasoning = decodeThinking(b, extra)
	if (reasoning) req.reasoning = reasoning

	const temperature = optNumber(b, 'temperature', '', 0, 1)
	if (temperature !== undefined) req.temperature = temperature
	const topP = optNumber(b, 'top_p', '', 0, 1)
	if (topP !== undefined) req.topP = topP
	const topK = optInteger(b, 'top_k', '', 0)
	if (topK !== undefined) req.topK = topK
	const stop = optArray(b, 'stop_sequences', '')
	if (stop) {
		stop.forEach((s, i) => {
			if (typeof s !== 'string') throw invalid(at('stop_sequences', i), 'Input should be a valid string')
		})
		if (stop.length) req.stop = stop as string[]
	}
	const metadata = optObject(b, 'metadata', '')
	if (metadata) {
		const user = optString(metadata, 'user_id', 'metadata')
		if (user) req.user = user
		const rest = Object.entries(metadata).filter(([k]) => k !== 'user_id')
		if (rest.length) extra.metadata = Object.fromEntries(rest)
	}

	for (const k in b) if (!KNOWN.has(k)) extra[k] = b[k]
	decodeOutputConfig(extra.output_config, req)
	req.extra = extra
	return req
}

/** `output_config` stays in `extra` verbatim; its `format` and `effort` also fill canonical slots for other vendors. */
function decodeOutputConfig(oc: unknown, req: ChatRequest): void {
	if (oc === undefined || oc === null) return
	if (!isObject(oc)) throw invalid('output_config', 'Input should be a valid dictionary')
	const format = oc.format
	if (isObject(format) && format.type === 'json_schema' && isObject(format.schema))
		// Claude enforces the schema (constrained decoding): other vendors are asked to where they can.
		req.responseFormat = { type: 'json_schema', name: 'response', schema: format.schema, enforced: true }
	const effort = typeof oc.effort === 'string' ? EFFORT[oc.effort] : undefined
	// Effort only refines reasoning the client turned on; alone it must not switch thinking on for other vendors.
	if (effort && req.reasoning?.enabled) req.reasoning.effort = effort
}
