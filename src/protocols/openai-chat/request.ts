/**
 * Chat-completions request ⇄ canonical request (https://platform.openai.com/docs/api-reference/chat/create).
 *
 * `extra` convention: decodeRequest puts every field without a canonical slot into `extra` together with
 * `extra.__protocol = 'openai-chat'`; encodeRequest re-emits `extra` only when that marker is present, so
 * OpenAI-only fields (metadata, logit_bias, service_tier…) reach OpenAI-compatible upstreams and nobody else.
 * @module
 */
import { badRequest, unsupportedForModel } from '../../core/errors'
import type { ChatRequest, Reasoning, ReasoningEffort, ResponseFormat, Tool, ToolChoice, VendorOnly } from '../../core/ir'
import { budgetToEffort, nearestEffort, openaiEffort } from '../../core/reasoning'
import { alnum9ToolCallId } from '../../core/tool-ids'
import type { UpstreamOptions } from '../codec'
import { continuedPrefill } from '../final-turn'
import { formatAsInstruction, systemAskingJson } from '../json-instruction'
import { refuseVendorOnly } from '../vendor-only'
import { decodeWebSearchOptions, encodeWebSearchOptions } from './web-search'
import { isObject, optBoolean, optInteger, optNumber, optString, reqArray, reqObject, reqString, type Json } from './guards'
import { cacheControlOf, decodeMessages, encodeMessages, type OpenAIOnly } from './messages'
import type { OpenAIChatBody } from './model'
import { openaiUser } from './user'
import { decodePromptCacheHint } from '../prompt-cache-hint'
import { openaiEfforts, samplesAtEffort, takesReasoningEffort } from '../../routing/reasoning-models'

/** Key in `ChatRequest.extra` naming the protocol the extras came from. */
export const EXTRA_PROTOCOL_KEY = '__protocol'
export const PROTOCOL = 'openai-chat'

const KNOWN = new Set([
	'model',
	'messages',
	'max_tokens',
	'max_completion_tokens',
	'temperature',
	'top_p',
	'stop',
	'tools',
	'tool_choice',
	'parallel_tool_calls',
	'response_format',
	'reasoning_effort',
	'stream',
	'stream_options',
	'user',
	'seed',
	'presence_penalty',
	'frequency_penalty',
	'logprobs',
	'top_logprobs',
])

const EFFORTS: ReadonlySet<string> = new Set(['minimal', 'low', 'medium', 'high'])

function decodeTools(raw: unknown, only: OpenAIOnly[]): Tool[] {
	return reqArray(raw, 'tools').flatMap((item, i) => {
		const at = `tools[${i}]`
		const tool = reqObject(item, at)
		// A custom (freeform) tool takes text, not JSON arguments: only OpenAI models have them. Kept for them as written.
		if (tool.type === 'custom') {
			only.push({ what: `custom (freeform) tool '${String(reqObject(tool.custom, `${at}.custom`).name)}'`, path: at })
			return []
		}
		if (tool.type !== 'function') throw badRequest(`${at}.type must be 'function' or 'custom' (got ${JSON.stringify(tool.type)})`, `${at}.type`)
		const fn = reqObject(tool.function, `${at}.function`)
		const name = reqString(fn.name, `${at}.function.name`)
		if (!name) throw badRequest(`${at}.function.name must not be empty`, `${at}.function.name`)
		// OpenAI treats a missing `parameters` as a function that takes no arguments.
		const parameters =
			fn.parameters === undefined || fn.parameters === null
				? { type: 'object', properties: {} }
				: reqObject(fn.parameters, `${at}.function.parameters`)
		const out: Tool = { name, parameters }
		const description = optString(fn.description, `${at}.function.description`)
		if (description !== undefined) out.description = description
		const strict = optBoolean(fn.strict, `${at}.function.strict`)
		if (strict !== undefined) out.strict = strict
		// LiteLLM's breakpoint on a tool (the tools precede the system prompt in Claude's cache order).
		const cc = tool.cache_control === undefined ? undefined : cacheControlOf(tool.cache_control)
		if (cc) out.cacheControl = cc
		return [out]
	})
}

/** The tool choice, and for `allowed_tools` the names of the functions it allows. */
function decodeToolChoice(raw: unknown, only: OpenAIOnly[]): { choice?: ToolChoice; allowed?: Set<string> } {
	if (raw === 'auto' || raw === 'none' || raw === 'required') return { choice: { type: raw } }
	// Gemini's VALIDATED mode by name, which GitHub Copilot CLI sends for `gemini-…` models (core/ir.ts ToolChoice).
	if (raw === 'validated') return { choice: { type: 'auto', validated: true } }
	if (isObject(raw) && raw.type === 'function') {
		const fn = reqObject(raw.function, 'tool_choice.function')
		return { choice: { type: 'tool', name: reqString(fn.name, 'tool_choice.function.name') } }
	}
	if (isObject(raw) && raw.type === 'custom') {
		only.push({ what: `a forced custom (freeform) tool ('${String(reqObject(raw.custom, 'tool_choice.custom').name)}')`, path: 'tool_choice' })
		return {}
	}
	if (isObject(raw) && raw.type === 'allowed_tools') {
		const at = reqObject(raw.allowed_tools, 'tool_choice.allowed_tools')
		if (at.mode !== 'auto' && at.mode !== 'required') throw badRequest("tool_choice.allowed_tools.mode must be 'auto' or 'required'", 'tool_choice.allowed_tools.mode')
		const names = reqArray(at.tools, 'tool_choice.allowed_tools.tools').flatMap((t) => (isObject(t) && t.type === 'function' && isObject(t.function) && typeof t.function.name === 'string' ? [t.function.name] : []))
		return { choice: { type: at.mode }, allowed: new Set(names) }
	}
	throw badRequest(`tool_choice must be 'auto', 'none', 'required', 'validated', {type:'function',function:{name}}, {type:'custom',custom:{name}} or {type:'allowed_tools',allowed_tools}`, 'tool_choice')
}

function decodeResponseFormat(raw: unknown): ResponseFormat {
	const rf = reqObject(raw, 'response_format')
	// JSON mode with its schema beside the type is Together's and Fireworks' form (docs.together.ai/docs/json-mode),
	// instructor-js's JSON_SCHEMA mode, where the schema is nowhere else: another vendor gets it as a JSON schema
	// format (not enforced, so never OpenAI's strict mode), not as bare JSON mode. OpenAI channels get the body as written.
	if (rf.type === 'json_object' && isObject(rf.schema)) return { type: 'json_schema', name: 'response', schema: rf.schema }
	if (rf.type === 'text' || rf.type === 'json_object') return { type: rf.type }
	if (rf.type !== 'json_schema') throw badRequest(`response_format.type must be one of text, json_object, json_schema`, 'response_format.type')
	const js = reqObject(rf.json_schema, 'response_format.json_schema')
	const out: ResponseFormat = {
		type: 'json_schema',
		name: reqString(js.name, 'response_format.json_schema.name'),
		schema: js.schema === undefined || js.schema === null ? {} : reqObject(js.schema, 'response_format.json_schema.schema'),
	}
	const strict = optBoolean(js.strict, 'response_format.json_schema.strict')
	if (strict !== undefined) out.strict = strict
	const description = optString(js.description, 'response_format.json_schema.description')
	if (description !== undefined) out.description = description
	return out
}

/**
 * A number in the range OpenAI documents for the field (chat create reference: temperature "between 0 and 2",
 * presence and frequency penalties "between -2.0 and 2.0", top_logprobs "an integer between 0 and 20"); OpenAI answers
 * 400 outside it, and so does the gateway, for every model, rather than clamp or forward it.
 */
function optRange(v: unknown, param: string, min: number, max: number): number | undefined {
	const n = optNumber(v, param)
	if (n !== undefined && (n < min || n > max)) throw badRequest(`${param} must be between ${min} and ${max} (got ${n})`, param)
	return n
}

function decodeStop(raw: unknown): string[] | undefined {
	if (raw === undefined || raw === null) return undefined
	if (typeof raw === 'string') return [raw]
	const list = reqArray(raw, 'stop').map((s, i) => reqString(s, `stop[${i}]`))
	return list.length ? list : undefined
}

/**
 * Client body → canonical request. Throws GatewayError('invalid_request') naming the field for anything OpenAI
 * would reject.
 * Takes `unknown` on purpose: bodies also arrive without route validation (tests, replays, other callers).
 * @param opts.stream overrides `body.stream` (the route knows which endpoint was called)
 */
export function decodeRequest(body: unknown, opts: { stream?: boolean } = {}): ChatRequest {
	const b = reqObject(body, 'body')
	const model = reqString(b.model, 'model')
	if (!model) throw badRequest('model must not be empty', 'model')
	const { system, messages, openaiOnly } = decodeMessages(b.messages)
	const req: ChatRequest = { model, messages, stream: opts.stream ?? optBoolean(b.stream, 'stream') ?? false }
	if (system.length) req.system = system
	const extra: Json = {}
	let extras = false
	// A key loop rather than Object.entries: no array per member, on every request.
	for (const k in b) {
		const v = b[k]
		if (v !== undefined && !KNOWN.has(k)) {
			extra[k] = v
			extras = true
		}
	}
	// Several choices stay in `extra` (the fast path forwards the body as written); `choices` tells the relay, which
	// asks another vendor for them as it can (src/relay/choices.ts) rather than quietly returning one (OpenAI allows 1–128).
	const choices = optInteger(b.n, 'n', 1)
	if (choices !== undefined && choices > 128) throw badRequest('n must be an integer <= 128', 'n')
	if (choices !== undefined && choices > 1) req.choices = choices

	const maxTokens = optInteger(b.max_completion_tokens, 'max_completion_tokens', 1) ?? optInteger(b.max_tokens, 'max_tokens', 1)
	if (maxTokens !== undefined) req.maxTokens = maxTokens
	const temperature = optRange(b.temperature, 'temperature', 0, 2)
	if (temperature !== undefined) req.temperature = temperature
	const topP = optRange(b.top_p, 'top_p', 0, 1)
	if (topP !== undefined) req.topP = topP
	decodeSampling(b, req)
	const stop = decodeStop(b.stop)
	if (stop) req.stop = stop
	let tools = b.tools !== undefined && b.tools !== null ? decodeTools(b.tools, openaiOnly) : []
	if (b.tool_choice !== undefined && b.tool_choice !== null) {
		const { choice, allowed } = decodeToolChoice(b.tool_choice, openaiOnly)
		if (choice) req.toolChoice = choice
		// Another vendor is offered only the allowed tools (OpenAI keeps the list whole so its prompt cache holds).
		if (allowed) tools = tools.filter((t) => allowed.has(t.name))
	}
	if (tools.length) req.tools = tools
	// OpenAI answers 400 for a named function that is not among the tools; Claude and Gemini would be asked to force a
	// call they cannot make.
	const forced = req.toolChoice?.type === 'tool' ? req.toolChoice.name : undefined
	if (forced !== undefined && !req.tools?.some((t) => t.name === forced))
		throw badRequest(`Invalid value for 'tool_choice': function '${forced}' is not among the tools given`, 'tool_choice')
	const parallel = optBoolean(b.parallel_tool_calls, 'parallel_tool_calls')
	if (parallel !== undefined) req.parallelToolCalls = parallel
	if (b.response_format !== undefined && b.response_format !== null) req.responseFormat = decodeResponseFormat(b.response_format)

	const effort = optString(b.reasoning_effort, 'reasoning_effort')
	if (effort !== undefined) {
		req.reasoning = effortReasoning(effort, 'reasoning_effort')
		// No canonical value: the original is kept for OpenAI upstreams.
		if (!EFFORTS.has(effort)) {
			extra.reasoning_effort = effort
			extras = true
		}
	} else if (isObject(b.reasoning)) {
		const r = decodeReasoningObject(b.reasoning)
		if (r) req.reasoning = r
	} else if (b.thinking !== undefined && b.thinking !== null) req.reasoning = decodeThinkingObject(b.thinking)
	const google = googleThinkingConfig(b)
	if (google !== undefined) {
		if (effort !== undefined) throw badRequest('reasoning_effort and extra_body.google.thinking_config cannot both be set: use one', 'reasoning_effort')
		req.reasoning = decodeGoogleThinking(google)
	}
	// `user` is deprecated for `safety_identifier`, the same abuse-tracking id: either fills the canonical slot
	// (Anthropic metadata.user_id). safety_identifier stays in `extra` for OpenAI upstreams as well.
	const user = optString(b.user, 'user') ?? optString(b.safety_identifier, 'safety_identifier')
	if (user !== undefined) req.user = user
	// The search runs at whichever vendor serves the model (core/ir.ts `WebSearch`); the field itself stays in `extra`.
	if (isObject(b.web_search_options)) req.webSearch = decodeWebSearchOptions(b.web_search_options)
	const only = [...openaiOnly.map((o) => ({ protocol: PROTOCOL, ...o })), ...vendorOnlyOf(b)]
	if (only.length) req.vendorOnly = only
	decodePromptCacheHint(b, req)
	if (extras) req.extra = { [EXTRA_PROTOCOL_KEY]: PROTOCOL, ...extra }
	return req
}

/**
 * An effort name → canonical reasoning. "none", "xhigh" and "max" have no canonical value: other vendors get the nearest
 * meaning, "none" an explicit zero budget so Gemini 2.5 turns its default thinking off.
 * @example effortReasoning('none', 'reasoning_effort') // { enabled: false, budgetTokens: 0 }
 */
function effortReasoning(effort: string, param: string): Reasoning {
	if (effort === 'none') return { enabled: false, budgetTokens: 0 }
	const canonical = openaiEffort(effort)
	if (canonical) return { enabled: true, effort: canonical }
	throw badRequest(`${param} must be one of none, minimal, low, medium, high, xhigh, max`, param)
}

/**
 * OpenRouter's `reasoning` object (https://openrouter.ai/docs/use-cases/reasoning-tokens): `effort` or `max_tokens`
 * (a budget), or `enabled`. Qwen Code sends it instead of `reasoning_effort` (`model.generationConfig.reasoning`);
 * OpenAI-compatible upstreams still get it as written (it stays in `extra`), OpenAI's own models as their
 * `reasoning_effort` (reasoningObjectFor), the others get it as thinking rather than not at all.
 * @example decodeReasoningObject({ max_tokens: 2000 }) // { enabled: true, budgetTokens: 2000 }
 */
export function decodeReasoningObject(o: Json): Reasoning | undefined {
	const enabled = optBoolean(o.enabled, 'reasoning.enabled')
	const effort = optString(o.effort, 'reasoning.effort')
	const budget = optInteger(o.max_tokens, 'reasoning.max_tokens')
	if (enabled === false) return { enabled: false }
	if (budget !== undefined) return budget === 0 ? { enabled: false, budgetTokens: 0 } : { enabled: true, budgetTokens: budget }
	if (effort !== undefined) return effortReasoning(effort, 'reasoning.effort')
	return enabled === true ? { enabled: true } : undefined
}

/**
 * Anthropic's `thinking` object on chat completions, as LiteLLM reads it there: LibreChat's configs for Claude behind an
 * OpenAI-compatible proxy put it in `modelKwargs`, which LangChain's ChatOpenAI sends as written. OpenAI upstreams get
 * it as written (it stays in `extra`, for the vendor to judge), the others as thinking rather than not at all.
 * @example decodeThinkingObject({ type: 'enabled', budget_tokens: 2000 }) // { enabled: true, budgetTokens: 2000 }
 */
function decodeThinkingObject(raw: unknown): Reasoning {
	const o = reqObject(raw, 'thinking')
	switch (o.type) {
		case 'disabled':
			return { enabled: false }
		case 'adaptive':
			return { enabled: true }
		case 'enabled': {
			const budget = optInteger(o.budget_tokens, 'thinking.budget_tokens')
			return budget === undefined ? { enabled: true } : { enabled: true, budgetTokens: budget }
		}
		default:
			throw badRequest(`thinking.type must be one of enabled, disabled, adaptive (got ${JSON.stringify(o.type)})`, 'thinking.type')
	}
}

/**
 * Google's extension of chat completions for Gemini (https://ai.google.dev/gemini-api/docs/openai#thinking): the body's
 * `extra_body.google.thinking_config` (what the OpenAI Python SDK sends for `extra_body={"extra_body": {"google": …}}`,
 * and the JS SDK for an `extra_body` field), read for every model as the `thinking` and `reasoning` objects are.
 * Google refuses it beside `reasoning_effort`, which overlaps it. The field itself stays in `extra`, for OpenAI upstreams.
 */
function googleThinkingConfig(b: Json): unknown {
	if (!isObject(b.extra_body) || !isObject(b.extra_body.google)) return undefined
	const g = b.extra_body.google
	return g.thinking_config ?? g.thinkingConfig ?? undefined
}

/**
 * Gemini's thinking config in either JSON spelling: a budget (0 off, -1 dynamic), a Gemini 3 level, whether thought
 * summaries come back (as `reasoning_content`).
 * @example decodeGoogleThinking({ thinking_budget: 1024, include_thoughts: true }) // { enabled: true, budgetTokens: 1024, includeThoughts: true }
 */
function decodeGoogleThinking(raw: unknown): Reasoning {
	const at = 'extra_body.google.thinking_config'
	const o = reqObject(raw, at)
	const budget = optInteger(o.thinking_budget ?? o.thinkingBudget, `${at}.thinking_budget`, -1)
	const level = optString(o.thinking_level ?? o.thinkingLevel, `${at}.thinking_level`)
	const include = optBoolean(o.include_thoughts ?? o.includeThoughts, `${at}.include_thoughts`)
	const r: Reasoning = { enabled: budget !== 0 }
	if (budget !== undefined && budget >= 0) r.budgetTokens = budget
	if (level !== undefined) {
		const effort = level.toLowerCase()
		if (!EFFORTS.has(effort)) throw badRequest(`${at}.thinking_level must be one of minimal, low, medium, high`, `${at}.thinking_level`)
		r.effort = effort as ReasoningEffort
	}
	if (include !== undefined) r.includeThoughts = include
	return r
}

/**
 * What only OpenAI does, refused for other vendors rather than dropped (vendor-only.ts): audio output (`modalities`
 * with "audio") and legacy `functions`.
 */
function vendorOnlyOf(b: Json): VendorOnly[] {
	const out: VendorOnly[] = []
	if (Array.isArray(b.modalities) && b.modalities.includes('audio')) out.push({ protocol: PROTOCOL, what: 'audio output (modalities "audio")', path: 'modalities' })
	// The deprecated `functions` list: converting it would answer `tool_calls` where such a client reads `function_call`.
	if (Array.isArray(b.functions) && b.functions.length) out.push({ protocol: PROTOCOL, what: 'legacy function calling (functions; send tools instead)', path: 'functions' })
	return out
}

/** seed, penalties and log probabilities: canonical, so Gemini gets them too (its generationConfig has all five). */
function decodeSampling(b: Json, req: ChatRequest) {
	const seed = optInteger(b.seed, 'seed', Number.MIN_SAFE_INTEGER)
	if (seed !== undefined) req.seed = seed
	const presence = optRange(b.presence_penalty, 'presence_penalty', -2, 2)
	if (presence !== undefined) req.presencePenalty = presence
	const frequency = optRange(b.frequency_penalty, 'frequency_penalty', -2, 2)
	if (frequency !== undefined) req.frequencyPenalty = frequency
	const logprobs = optBoolean(b.logprobs, 'logprobs')
	if (logprobs !== undefined) req.logprobs = logprobs
	const top = optRange(b.top_logprobs, 'top_logprobs', 0, 20)
	if (top !== undefined) {
		if (!Number.isInteger(top)) throw badRequest('top_logprobs must be an integer between 0 and 20', 'top_logprobs')
		// OpenAI: "logprobs must be set to true if this parameter is used" (a 0 asks for nothing and passes).
		if (logprobs !== true && top > 0) throw badRequest('top_logprobs requires logprobs: true', 'top_logprobs')
		if (logprobs === true) req.topLogprobs = top
	}
}

/** Whether the client asked for the final usage chunk (`stream_options.include_usage`), for EncodeContext. */
export const includeUsageOf = (body: unknown): boolean =>
	isObject(body) && isObject(body.stream_options) && body.stream_options.include_usage === true

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5…) reject `max_tokens` and want `max_completion_tokens`
 * ("Unsupported parameter: 'max_tokens' is not supported with this model").
 */
export const usesCompletionTokens = (model: string): boolean => /^(o\d|gpt-5)/.test(model.slice(model.lastIndexOf('/') + 1))

/**
 * Stop sequences an OpenAI chat model takes: "Up to 4 sequences" (a 5th is 400 `array_above_max_length`), and none on
 * the reasoning models ("Not supported with latest reasoning models o3 and o4-mini"; o1 and gpt-5 answer the same 400
 * "Unsupported parameter: 'stop' is not supported with this model"): https://platform.openai.com/docs/api-reference/chat/create#chat-create-stop
 */
export const stopsTaken = (model: string): number => (usesCompletionTokens(model) ? 0 : 4)

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

const toolChoiceOut = (c: ToolChoice) => (c.type === 'tool' ? { type: 'function' as const, function: { name: c.name } } : c.type)

/**
 * Canonical request → body for an OpenAI-compatible upstream. Streaming requests always ask for the usage chunk,
 * because billing reads it (WIRE-NOTES #12, wire §12).
 */
export function encodeRequest(req: ChatRequest, model: string, upstream?: UpstreamOptions): OpenAIChatBody {
	refuseVendorOnly(req, PROTOCOL)
	const body: Json = {}
	if (req.extra?.[EXTRA_PROTOCOL_KEY] === PROTOCOL)
		for (const [k, v] of Object.entries(req.extra)) if (k !== EXTRA_PROTOCOL_KEY) body[k] = v
	body.model = model
	if (req.webSearch && body.web_search_options === undefined) body.web_search_options = encodeWebSearchOptions(req, model)
	// An OpenAI client's own request goes as written, for the vendor to judge.
	const own = req.extra?.[EXTRA_PROTOCOL_KEY] === PROTOCOL
	const system = own ? req.system : systemAskingJson(req)
	const messages = encodeMessages(system, req.messages, upstream?.toolCallIds === 'alnum9' ? alnum9ToolCallId : undefined)
	if (continuedPrefill(req) !== undefined) {
		// OpenAI has no way to continue a final assistant message: its model answers afresh after it, and the client
		// would take that answer for the continuation of its prefill (Anthropic's, or Gemini's trailing model turn).
		// Retryable, so a channel of the model that continues it is tried next.
		if (!upstream?.prefix)
			throw unsupportedForModel(
				`messages: the conversation ends with an assistant message for the model to continue (a prefill), which model "${req.model}" cannot do on this channel: OpenAI's chat completions answer afresh after it. Leave that message out, or use a model served by Anthropic, Gemini, DeepSeek or Mistral`,
				true,
				'messages',
			)
		const last = messages[messages.length - 1]
		if (last?.role === 'assistant') last.prefix = true
	}
	body.messages = messages
	if (req.maxTokens !== undefined) body[usesCompletionTokens(model) ? 'max_completion_tokens' : 'max_tokens'] = req.maxTokens
	if (req.seed !== undefined) body.seed = req.seed
	if (req.stop?.length) body.stop = req.stop
	// Several answers of another protocol's client (Gemini `candidateCount`): OpenAI's `n`.
	if (req.choices !== undefined) body.n = req.choices
	if (req.tools?.length) {
		body.tools = req.tools.map((t) => ({
			type: 'function',
			function: {
				name: t.name,
				...(t.description !== undefined && { description: t.description }),
				parameters: t.parameters,
				// Strict mode refuses (400) a schema short of its rules, which another vendor's client (Claude's strict
				// tools take optional properties) did not write for: asked for only where the schema meets them.
				...(t.strict !== undefined && (!t.strict || strictReady(t.parameters)) && { strict: t.strict }),
			},
		}))
		// OpenAI rejects tool_choice and parallel_tool_calls when no tools are given, so they ride with tools.
		if (req.toolChoice) body.tool_choice = toolChoiceOut(req.toolChoice)
		if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls
	}
	// Another protocol's schema whose root is no object (Gemini's list or enum) goes as the instruction alone
	// (`systemAskingJson`, above): OpenAI refuses it as a format, and JSON mode would answer an object.
	const instructed = !own && formatAsInstruction(req.responseFormat)
	if (req.responseFormat && !instructed) {
		const rf = req.responseFormat
		// A schema another vendor enforced asks for strict mode, which refuses (400) a schema short of its rules: only
		// where it meets them. An OpenAI client's own `strict` goes as it was written.
		const strict = rf.type === 'json_schema' ? (rf.strict ?? (rf.enforced && strictReady(rf.schema) ? true : undefined)) : undefined
		body.response_format =
			rf.type === 'json_schema'
				? {
						type: 'json_schema',
						json_schema: {
							name: rf.name,
							...(rf.description !== undefined && { description: rf.description }),
							schema: rf.schema,
							...(strict !== undefined && { strict }),
						},
					}
				: { type: rf.type }
	}
	// A model that does not reason refuses the effort: it answers without thinking, as Claude does with thinking off.
	// An OpenAI client's own reasoning_effort (among the extras) goes as it was written, for the vendor to judge.
	// Thinking turned off (Anthropic `disabled`, Gemini `thinkingBudget: 0`) goes to an OpenAI reasoning model as the
	// least effort it takes (`none` where it has one), as in openai-responses/request.ts: without an effort it would
	// reason at its default. Other vendors' models, whose efforts are not known here, get none, as before.
	const r = req.reasoning
	if (body.reasoning !== undefined && takesReasoningEffort(model) !== undefined) delete body.reasoning
	if (r && body.reasoning_effort === undefined && upstream?.reasoningEffort !== false) {
		const effort = effortFor(r, upstream?.efforts)
		if (effort) body.reasoning_effort = effort
	}
	// A reasoning model refuses sampling settings (400): another protocol's client, which could not know, gets the
	// model's fixed sampling, as a model that does not reason answers without the thinking asked of it. GPT-5.1 and
	// later take temperature, top_p and log probabilities (not the penalties) at effort none, their default.
	const samples = !upstream?.fixedSampling
	if (samples || samplesAtEffort(model, body.reasoning_effort)) {
		if (req.temperature !== undefined) body.temperature = req.temperature
		if (req.topP !== undefined) body.top_p = req.topP
		if (req.logprobs !== undefined) body.logprobs = req.logprobs
		if (req.topLogprobs !== undefined && req.logprobs) body.top_logprobs = clamp(req.topLogprobs, 0, 20)
	}
	if (samples) {
		// OpenAI's ranges: a value another protocol allows beyond them is clamped, as temperature is for Claude.
		if (req.presencePenalty !== undefined) body.presence_penalty = clamp(req.presencePenalty, -2, 2)
		if (req.frequencyPenalty !== undefined) body.frequency_penalty = clamp(req.frequencyPenalty, -2, 2)
	}
	if (req.stream) {
		body.stream = true
		body.stream_options = { include_usage: true }
	} else delete body.stream_options
	// A user id that came as safety_identifier goes back as that alone (already among the extras).
	if (req.user !== undefined && body.safety_identifier !== req.user) body.user = openaiUser(req.user)
	return body as OpenAIChatBody
}

/** The `reasoning_effort` for canonical reasoning, among `efforts` when the model's are known; off is the least it takes. */
const effortFor = (r: Reasoning, efforts: readonly string[] | undefined): string | undefined => {
	const effort = r.enabled ? (r.effort ?? (r.budgetTokens !== undefined ? budgetToEffort(r.budgetTokens) : undefined)) : efforts && 'none'
	return effort && nearestEffort(effort, efforts)
}

/**
 * OpenRouter's `reasoning` object in a body for OpenAI's own model `model`, whose Chat Completions know no such field
 * (400 "Unrecognized request argument supplied: reasoning"): the object comes off, and a reasoning model gets it as the
 * `reasoning_effort` it takes unless the body has one. Undefined when the body stays: no object, or a name of another
 * vendor's (an OpenAI-compatible API, OpenRouter among them, may take the object).
 * @example reasoningObjectFor({ reasoning: { effort: 'medium' } }, 'gpt-5.5') // { reasoning_effort: 'medium' }
 */
export function reasoningObjectFor(body: Json, model: string): Json | undefined {
	if (!isObject(body.reasoning)) return undefined
	const takes = takesReasoningEffort(model)
	if (takes === undefined) return undefined
	const { reasoning, ...rest } = body
	const r = decodeReasoningObject(reasoning as Json)
	const effort = takes && r && rest.reasoning_effort == null ? effortFor(r, openaiEfforts(model)) : undefined
	return effort ? { ...rest, reasoning_effort: effort } : rest
}

/**
 * OpenAI's strict-mode rules for a schema (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas):
 * an object at the root, and every object closed (`additionalProperties: false`) with all its properties required.
 */
export function strictReady(schema: Record<string, unknown>): boolean {
	const ok = (s: unknown): boolean => {
		if (Array.isArray(s)) return s.every(ok)
		if (!isObject(s)) return true
		const types = Array.isArray(s.type) ? s.type : [s.type]
		if (types.includes('object') || isObject(s.properties)) {
			const props = isObject(s.properties) ? Object.keys(s.properties) : []
			const required = Array.isArray(s.required) ? s.required : []
			if (s.additionalProperties !== false || !props.every((k) => required.includes(k))) return false
		}
		return [s.properties, s.$defs, s.definitions].every((m) => !isObject(m) || Object.values(m).every(ok)) && [s.items, s.anyOf, s.allOf].every(ok)
	}
	return schema.type === 'object' && !('anyOf' in schema) && ok(schema)
}
