/**
 * Interactions create request ⇄ canonical request (https://ai.google.dev/api/interactions-api).
 *
 * `generation_config`: `max_output_tokens`, `temperature`, `top_p`, `seed`, `stop_sequences`, `thinking_level`
 * (minimal | low | medium | high, `xhigh` read as high) and `thinking_summaries` (`auto` shows the thought summaries,
 * `none` hides them), `tool_choice` (`auto` | `any` | `none` | `validated`, or `{allowed_tools: {mode, tools}}`, which
 * narrows the canonical tools to those it names). `response_format` (a text format `{type: 'text', mime_type:
 * 'application/json', schema}`, or a bare JSON schema with `response_mime_type`) is a JSON answer. Function tools
 * (`{type: 'function', name, description, parameters}`) go to every vendor, and `google_search` is the canonical web
 * search (core/ir.ts `WebSearch`), which another vendor runs as its own (as generateContent's `googleSearch`:
 * gemini/config.ts). Google's other built-in tools (code_execution, url_context, file_search, mcp_server…), a
 * `cached_content` (the route's own: it expands the gateway's caches, modules/interactions/cache.ts), transcription,
 * speech, image or video output (`generation_config.transcription_config`…, `response_modalities` other than text, an
 * audio, image or video `response_format`) go only to Gemini's Interactions API (protocols/vendor-only.ts: a 400
 * naming them elsewhere).
 *
 * `extra` (re-emitted only to this protocol): the request's other fields verbatim, `generation_config` whole, and
 * the built-in tools.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ChatRequest, Reasoning, ReasoningEffort, ResponseFormat, Tool, ToolChoice, VendorOnly } from '../../core/ir'
import { isObj, type Obj } from '../gemini/read'
import { askedTier } from '../gemini/usage'
import { refuseVendorOnly } from '../vendor-only'
import type { InteractionRequest } from './model'
import { decodeInput, encodeSteps } from './steps'

export const PROTOCOL = 'gemini-interactions'

/** Google Search as an Interactions tool (`{type: 'google_search'}`). */
const GOOGLE_SEARCH = 'google_search'

/** Fields the decoder reads; any other is carried in `extra`. `stream`, `store`, `background` and the previous id are the route's. */
const KNOWN = new Set(['model', 'input', 'system_instruction', 'tools', 'generation_config', 'response_format', 'response_mime_type', 'service_tier', 'stream', 'store', 'background', 'previous_interaction_id'])
const RESERVED = new Set(['__protocol', 'generation_config', 'tools'])

const GEMINI_ONLY_CONFIG = ['transcription_config', 'speech_config', 'image_config', 'video_config'] as const

const LEVELS: Record<string, ReasoningEffort> = { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high' }

/** Client body → canonical request (`input` with any previous interaction's steps before it: the route's job). */
export function decodeRequest(body: InteractionRequest, opts?: { stream?: boolean }): ChatRequest {
	const b: unknown = body
	if (!isObj(b)) throw badRequest('request body must be a JSON object')
	if (typeof b.model !== 'string' || !b.model) throw badRequest('model is required', 'model')
	if (b.agent !== undefined) throw badRequest('agent: agents run on Google\'s servers; this gateway serves models (`model`)', 'agent')
	if (typeof b.continuation_token === 'string' && b.continuation_token)
		throw badRequest('continuation_token: no interaction of this gateway stops for continuation, so there is none to resume', 'continuation_token')
	const messages = b.input === undefined ? [] : decodeInput(b.input)
	if (!messages.length) throw badRequest('input is required: a string, content or steps', 'input')
	const req: ChatRequest = { model: b.model.replace(/^models\//, ''), messages, stream: opts?.stream ?? b.stream === true }
	const extra: Obj = { __protocol: PROTOCOL }
	for (const [k, v] of Object.entries(b)) if (!KNOWN.has(k)) extra[k] = v
	const vendorOnly: VendorOnly[] = []
	const tier = askedTier(b.service_tier)
	if (tier) req.googleTier = tier

	if (b.system_instruction !== undefined && b.system_instruction !== null) {
		if (typeof b.system_instruction !== 'string') throw badRequest('system_instruction must be a string', 'system_instruction')
		if (b.system_instruction) req.system = [{ type: 'text', text: b.system_instruction }]
	}

	const { tools, hosted } = decodeTools(b.tools)
	if (tools.length) req.tools = tools
	if (hosted.length) {
		// Gemini's own Interactions API gets them as they came (google_search with its settings).
		extra.tools = hosted.map((h) => h.tool)
		if (hosted.some((h) => h.tool.type === GOOGLE_SEARCH)) req.webSearch = {}
		vendorOnly.push(...hosted.flatMap((h) => (h.tool.type === GOOGLE_SEARCH ? [] : [h.only])))
	}

	if (b.generation_config !== undefined) {
		if (!isObj(b.generation_config)) throw badRequest('generation_config must be an object', 'generation_config')
		const { allowed, ...settings } = decodeConfig(b.generation_config)
		Object.assign(req, settings)
		// Another vendor is offered only the allowed tools (as for OpenAI's `allowed_tools`): it has no list of its own.
		if (allowed && req.tools) {
			const kept = req.tools.filter((t) => allowed.has(t.name))
			if (kept.length) req.tools = kept
			else delete req.tools
		}
		extra.generation_config = b.generation_config
		// Transcription, speech, image and video output are Gemini models' own: a chat answer of another vendor is no such thing.
		for (const k of GEMINI_ONLY_CONFIG)
			if (b.generation_config[k] !== undefined && b.generation_config[k] !== null) vendorOnly.push({ protocol: PROTOCOL, what: `generation_config.${k}`, path: `generation_config.${k}` })
	}
	const format = decodeResponseFormat(b.response_format, b.response_mime_type)
	if (format) req.responseFormat = format
	// Audio, image or video output is a Gemini model's own (as `response_modalities`): refused elsewhere, sent whole to Gemini's Interactions API.
	const media = mediaFormats(b.response_format)
	if (media.length) {
		extra.response_format = b.response_format
		vendorOnly.push(...media.map((m) => ({ protocol: PROTOCOL, what: `response_format of type ${m.type} (${m.type} output)`, path: m.path })))
	}
	if (Array.isArray(b.response_modalities) && b.response_modalities.some((x) => String(x).toLowerCase() !== 'text'))
		vendorOnly.push({ protocol: PROTOCOL, what: 'response_modalities other than text', path: 'response_modalities' })
	// The create route serves it from the gateway's own caches and drops it before decoding (modules/interactions/cache.ts).
	if (typeof b.cached_content === 'string' && b.cached_content) vendorOnly.push({ protocol: PROTOCOL, what: 'cached_content (a Gemini context cache)', path: 'cached_content' })
	if (vendorOnly.length) req.vendorOnly = vendorOnly
	req.extra = extra
	return req
}

function decodeTools(v: unknown): { tools: Tool[]; hosted: Array<{ tool: Obj; only: VendorOnly }> } {
	const tools: Tool[] = []
	const hosted: Array<{ tool: Obj; only: VendorOnly }> = []
	if (v === undefined || v === null) return { tools, hosted }
	if (!Array.isArray(v)) throw badRequest('tools must be an array', 'tools')
	v.forEach((t, i) => {
		const at = `tools[${i}]`
		if (!isObj(t) || typeof t.type !== 'string') throw badRequest(`${at} must be an object with a type`, at)
		if (t.type !== 'function') return void hosted.push({ tool: t, only: { protocol: PROTOCOL, what: `built-in tool ${t.type}`, path: `${at}.type` } })
		if (typeof t.name !== 'string' || !t.name) throw badRequest(`${at}.name is required`, `${at}.name`)
		const parameters = t.parameters === undefined || t.parameters === null ? { type: 'object', properties: {} } : t.parameters
		if (!isObj(parameters)) throw badRequest(`${at}.parameters must be a JSON schema object`, `${at}.parameters`)
		tools.push({ name: t.name, ...(typeof t.description === 'string' && { description: t.description }), parameters })
	})
	return { tools, hosted }
}

type Settings = Pick<ChatRequest, 'maxTokens' | 'temperature' | 'topP' | 'seed' | 'stop' | 'reasoning' | 'toolChoice'> & { allowed?: Set<string> }

function decodeConfig(c: Obj): Settings {
	const out: Settings = {}
	const n = (k: string) => {
		const v = c[k]
		if (v === undefined || v === null) return undefined
		if (typeof v !== 'number' || !Number.isFinite(v)) throw badRequest(`generation_config.${k} must be a number`, `generation_config.${k}`)
		return v
	}
	const max = n('max_output_tokens')
	if (max !== undefined) {
		if (!Number.isInteger(max) || max < 1) throw badRequest('generation_config.max_output_tokens must be a positive integer', 'generation_config.max_output_tokens')
		out.maxTokens = max
	}
	const temperature = n('temperature')
	if (temperature !== undefined) out.temperature = temperature
	const topP = n('top_p')
	if (topP !== undefined) out.topP = topP
	const seed = n('seed')
	if (seed !== undefined) out.seed = seed
	if (c.stop_sequences !== undefined) {
		if (!Array.isArray(c.stop_sequences) || !c.stop_sequences.every((s) => typeof s === 'string'))
			throw badRequest('generation_config.stop_sequences must be a list of strings', 'generation_config.stop_sequences')
		if (c.stop_sequences.length) out.stop = c.stop_sequences as string[]
	}
	const level = c.thinking_level
	const summaries = c.thinking_summaries
	if (level !== undefined || summaries !== undefined) {
		if (level !== undefined && (typeof level !== 'string' || !LEVELS[level]))
			throw badRequest('generation_config.thinking_level must be minimal, low, medium, high or xhigh', 'generation_config.thinking_level')
		const r: Reasoning = { enabled: true, ...(typeof level === 'string' && { effort: LEVELS[level] }) }
		if (summaries === 'auto') r.includeThoughts = true
		else if (summaries === 'none') r.includeThoughts = false
		out.reasoning = r
	}
	const choice = decodeToolChoice(c.tool_choice)
	if (choice?.choice) out.toolChoice = choice.choice
	if (choice?.allowed) out.allowed = choice.allowed
	return out
}

/**
 * `tool_choice` → canonical: auto (and `validated`: the model may answer in text, its calls checked against the
 * schema), none, any (required), or one named tool for `allowed_tools` naming one with mode any; `allowed` is the
 * list `allowed_tools` names, to which the canonical tools are narrowed.
 */
function decodeToolChoice(v: unknown): { choice?: ToolChoice; allowed?: Set<string> } | undefined {
	if (v === undefined || v === null) return undefined
	const at = 'generation_config.tool_choice.allowed_tools'
	const list = isObj(v) && isObj(v.allowed_tools) ? v.allowed_tools : undefined
	const mode = typeof v === 'string' ? v : list?.mode
	let allowed: Set<string> | undefined
	if (list?.tools !== undefined && list.tools !== null) {
		if (!Array.isArray(list.tools) || !list.tools.every((n) => typeof n === 'string')) throw badRequest(`${at}.tools must be a list of tool names`, `${at}.tools`)
		allowed = new Set(list.tools as string[])
	}
	if (mode === 'none') return { choice: { type: 'none' }, allowed }
	if (mode === 'any') return { choice: allowed?.size === 1 ? { type: 'tool', name: [...allowed][0]! } : { type: 'required' }, allowed }
	if (mode === 'auto' || mode === 'validated' || mode === undefined) return { choice: { type: 'auto' }, allowed }
	throw badRequest('generation_config.tool_choice must be auto, any, none or validated', 'generation_config.tool_choice')
}

/** The audio, image and video entries of `response_format` (one format or a list), with where each stands. */
function mediaFormats(v: unknown): Array<{ type: string; path: string }> {
	const list = Array.isArray(v) ? v.map((f, i) => ({ f, path: `response_format[${i}]` })) : [{ f: v, path: 'response_format' }]
	return list.flatMap(({ f, path }) => (isObj(f) && MEDIA_FORMATS.has(String(f.type)) ? [{ type: String(f.type), path: `${path}.type` }] : []))
}

const MEDIA_FORMATS = new Set(['audio', 'image', 'video'])

/** `response_format` (a text format, a list of formats, or a bare schema with `response_mime_type`) → canonical. */
function decodeResponseFormat(v: unknown, mime: unknown): ResponseFormat | undefined {
	const formats = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]
	const text = formats.find((f) => isObj(f) && f.type === 'text') as Obj | undefined
	const json = (schema: unknown): ResponseFormat =>
		isObj(schema) ? { type: 'json_schema', name: 'response', schema, enforced: true } : { type: 'json_object' }
	if (text) return text.mime_type === 'application/json' ? json(text.schema) : undefined
	// The earlier form: the schema itself in `response_format`, the type in `response_mime_type`.
	if (mime === 'application/json') return json(formats[0])
	if (formats.length && isObj(formats[0]) && formats[0].type !== 'text' && !MEDIA_FORMATS.has(String(formats[0].type))) return json(formats[0])
	return undefined
}

/** Canonical request → an Interactions body for an upstream of this protocol (`store: false`: the gateway keeps its own). */
export function encodeRequest(req: ChatRequest, model: string): Obj {
	refuseVendorOnly(req, PROTOCOL)
	const extra = req.extra?.__protocol === PROTOCOL ? req.extra : undefined
	const body: Obj = { model, input: encodeSteps(req.messages), store: false }
	if (req.system?.length) body.system_instruction = req.system.map((p) => p.text).join('\n\n')
	const tools: Obj[] = (req.tools ?? []).map((t) => ({ type: 'function', name: t.name, ...(t.description && { description: t.description }), parameters: t.parameters }))
	if (extra && Array.isArray(extra.tools)) tools.push(...(extra.tools as Obj[]))
	if (req.webSearch && !tools.some((t) => t.type === GOOGLE_SEARCH)) tools.push({ type: GOOGLE_SEARCH })
	if (tools.length) body.tools = tools
	const cfg: Obj = extra && isObj(extra.generation_config) ? { ...extra.generation_config } : {}
	if (req.maxTokens !== undefined) cfg.max_output_tokens = req.maxTokens
	if (req.temperature !== undefined) cfg.temperature = req.temperature
	if (req.topP !== undefined) cfg.top_p = req.topP
	if (req.seed !== undefined) cfg.seed = req.seed
	if (req.stop?.length) cfg.stop_sequences = req.stop
	if (req.reasoning?.enabled && !extra) {
		if (req.reasoning.effort) cfg.thinking_level = req.reasoning.effort === 'minimal' ? 'minimal' : req.reasoning.effort
		if (req.reasoning.includeThoughts !== undefined) cfg.thinking_summaries = req.reasoning.includeThoughts ? 'auto' : 'none'
	}
	// The client's own tool_choice came whole with its generation_config; one from elsewhere (a context cache's tool config) is written here.
	if (req.toolChoice && req.tools?.length && cfg.tool_choice === undefined) cfg.tool_choice = encodeToolChoice(req.toolChoice)
	if (Object.keys(cfg).length) body.generation_config = cfg
	const f = req.responseFormat
	if (f && f.type !== 'text') body.response_format = { type: 'text', mime_type: 'application/json', ...(f.type === 'json_schema' && { schema: f.schema }) }
	if (req.googleTier) body.service_tier = req.googleTier
	if (extra) for (const [k, v] of Object.entries(extra)) if (!RESERVED.has(k)) body[k] = v
	return body
}

const encodeToolChoice = (c: ToolChoice): unknown =>
	c.type === 'tool' ? { allowed_tools: { mode: 'any', tools: [c.name] } } : c.type === 'required' ? 'any' : c.type
