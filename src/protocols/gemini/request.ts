/**
 * Gemini generateContent request ⇄ canonical request.
 *
 * `extra` layout (re-emitted by `encodeRequest` only when `extra.__protocol === 'gemini'`, i.e. the request was
 * decoded from a Gemini client): unknown top-level fields verbatim (`safetySettings`, `cachedContent`, `labels`…);
 * `generationConfig`: its fields with no canonical slot; `thinkingConfig`: the original, re-sent verbatim (a
 * `thinkingLevel` must not turn into a budget, Gemini rejects both together) except a level for a model before Gemini 3,
 * sent as its budget (config.ts `thinkingConfigFor`); `toolConfig`: the original (VALIDATED
 * and multi-name ANY have no canonical form); `tools`: built-in tools (`googleSearch`, `codeExecution`…).
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ChatRequest, TextPart } from '../../core/ir'
import {
	decodeGenerationConfig,
	decodeToolChoice,
	decodeTools,
	encodeGenerationConfig,
	encodeToolChoice,
	encodeTools,
	jsonWithFunctions,
	offersGoogleSearch,
	thinkingConfigFor,
} from './config'
import type { GeminiGenerationConfig, GeminiRequest, GeminiTool, GeminiToolConfig } from './model'
import { jsonInstruction } from '../json-instruction'
import { refuseVendorOnly } from '../vendor-only'
import { get, isObj, type Obj, spellings } from './read'
import { decodeContents, encodeMessages } from './turns'
import { askedTier } from './usage'
import { conversationField, noConversation } from '../final-turn'

export const PROTOCOL = 'gemini'

const KNOWN = ['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'serviceTier'].flatMap(spellings)
const RESERVED = ['__protocol', 'generationConfig', 'thinkingConfig', 'toolConfig', 'tools']

/**
 * Client body → canonical request. The model is in the URL: `body.model` is read when present, else '' (the route
 * fills it in). Streaming is also in the URL (`:streamGenerateContent`), so it comes from `opts.stream`.
 */
/** @param opts.counting for `:countTokens`: a function response that answers no call is counted, not refused (turns.ts) */
export function decodeRequest(body: GeminiRequest, opts?: { stream?: boolean; counting?: boolean }): ChatRequest {
	const b: unknown = body
	if (!isObj(b)) throw badRequest('request body must be a JSON object')
	const contents = get(b, 'contents')
	if (!Array.isArray(contents) || contents.length === 0) throw badRequest('contents must be a non-empty array', 'contents')
	const req: ChatRequest = {
		model: typeof b.model === 'string' ? b.model.replace(/^models\//, '') : '',
		messages: decodeContents(contents, opts?.counting),
		stream: opts?.stream ?? false,
	}
	const extra: Obj = { __protocol: PROTOCOL }
	for (const [k, v] of Object.entries(b)) if (!KNOWN.includes(k)) extra[k] = v

	const system = decodeSystem(get(b, 'systemInstruction'))
	if (system.length) req.system = system
	const tier = askedTier(get(b, 'serviceTier'))
	if (tier) req.googleTier = tier

	const { tools, others, hosted } = decodeTools(get(b, 'tools'))
	if (tools) req.tools = tools
	if (others) extra.tools = others
	if (hosted) req.vendorOnly = hosted
	if (offersGoogleSearch(get(b, 'tools'))) req.webSearch = {}

	const toolConfig = get(b, 'toolConfig')
	const { choice, allowed } = decodeToolChoice(toolConfig)
	if (choice) req.toolChoice = choice
	if (toolConfig !== undefined) extra.toolConfig = toolConfig
	// Another vendor is offered only the allowed functions (as for OpenAI's allowed_tools): it has no list of its own.
	// The names "should match [FunctionDeclaration.name]": naming none of them leaves nothing the model could call.
	// A single name with ANY is also a forced tool, but only that function is declared: a vendor that cannot force a
	// tool under thinking (Claude) answers with the choice `auto`, and must not be able to call another function then.
	if (allowed && req.tools) {
		const kept = req.tools.filter((t) => allowed.has(t.name))
		const param = 'toolConfig.functionCallingConfig.allowedFunctionNames'
		if (!kept.length) throw badRequest(`${param} names none of the functionDeclarations (${[...allowed].join(', ')})`, param)
		req.tools = kept
	}

	const cfg = get(b, 'generationConfig')
	const { settings, rest, geminiOnly } = decodeGenerationConfig(cfg)
	Object.assign(req, settings)
	if (rest) extra.generationConfig = rest
	if (geminiOnly) req.vendorOnly = [...(req.vendorOnly ?? []), ...geminiOnly]
	// A context cache (https://ai.google.dev/api/caching) is content the model must read, held by Gemini: another
	// vendor's answer without it would silently ignore that content.
	const cached = spellings('cachedContent').find((k) => b[k] !== undefined && b[k] !== null)
	if (cached) req.vendorOnly = [...(req.vendorOnly ?? []), { protocol: PROTOCOL, what: 'cachedContent (a Gemini context cache)', path: cached }]
	if (isObj(cfg) && get(cfg, 'thinkingConfig') !== undefined) extra.thinkingConfig = get(cfg, 'thinkingConfig')

	req.extra = extra
	return req
}

function decodeSystem(si: unknown): TextPart[] {
	if (si === undefined || si === null) return []
	if (typeof si === 'string') return si ? [{ type: 'text', text: si }] : []
	if (!isObj(si) || !Array.isArray(si.parts))
		throw badRequest('systemInstruction.parts must be an array', 'systemInstruction.parts')
	return si.parts.flatMap((p, j): TextPart[] => {
		if (!isObj(p) || typeof p.text !== 'string')
			throw badRequest(`systemInstruction.parts[${j}] must be a text part`, `systemInstruction.parts[${j}]`)
		return p.text ? [{ type: 'text', text: p.text }] : []
	})
}

/**
 * Canonical request → upstream Gemini body, without `model` (it goes in the URL: see `geminiPath`).
 * Fields of `extra` are re-emitted only for a request that came from a Gemini client.
 */
export function encodeRequest(req: ChatRequest, model: string): GeminiRequest {
	refuseVendorOnly(req, PROTOCOL)
	const extra = req.extra?.__protocol === PROTOCOL ? req.extra : undefined
	const body: GeminiRequest = { contents: encodeMessages(req.messages, model, conversationField(req)) }
	if (!body.contents.length) throw noConversation('Gemini', req)
	// A JSON format the model cannot enforce alongside function tools goes as an instruction (config.ts).
	const prompted = req.tools?.length && req.responseFormat && !jsonWithFunctions(model) ? jsonInstruction(req.responseFormat) : undefined
	const system = [...(req.system ?? []).map((p) => ({ text: p.text })), ...(prompted ? [{ text: prompted }] : [])]
	if (system.length) body.systemInstruction = { parts: system }

	const tools: GeminiTool[] = req.tools?.length ? [encodeTools(req.tools)] : []
	if (extra && Array.isArray(extra.tools)) tools.push(...(extra.tools as GeminiTool[]))
	// Another protocol's search: Google Search grounding, which takes none of the limits or domains the others do.
	if (req.webSearch && !offersGoogleSearch(tools)) tools.push({ googleSearch: {} } as GeminiTool)
	if (tools.length) body.tools = tools

	if (extra && isObj(extra.toolConfig)) body.toolConfig = extra.toolConfig as GeminiToolConfig
	// Gemini refuses a calling config with no function declarations ("Function calling config is set without
	// function_declarations"), which an OpenAI client's `tool_choice: 'auto'` with no tools would become.
	else if (req.toolChoice && req.tools?.length) body.toolConfig = encodeToolChoice(req.toolChoice)

	let cfg = encodeGenerationConfig(prompted ? { ...req, responseFormat: undefined } : req, model)
	if (extra) {
		if (isObj(extra.generationConfig)) cfg = { ...(extra.generationConfig as GeminiGenerationConfig), ...cfg }
		if (isObj(extra.thinkingConfig)) cfg = { ...cfg, thinkingConfig: thinkingConfigFor(extra.thinkingConfig, model) ?? extra.thinkingConfig }
	}
	if (cfg && Object.keys(cfg).length) body.generationConfig = cfg
	if (req.googleTier) body.serviceTier = req.googleTier

	if (extra) for (const [k, v] of Object.entries(extra)) if (!RESERVED.includes(k)) (body as Obj)[k] = v
	return body
}

/**
 * The upstream path for a model; with `alt=sse` the stream is server-sent events (without it, a JSON array).
 * @example geminiPath('gemini-2.5-flash', true) === '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
 */
export const geminiPath = (model: string, stream: boolean): string =>
	`/v1beta/models/${encodeURIComponent(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`
