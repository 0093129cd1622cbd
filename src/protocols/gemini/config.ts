/**
 * Gemini request settings ⇄ canonical ones: `generationConfig`, `tools` and `toolConfig`.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ChatRequest, Reasoning, ReasoningEffort, ResponseFormat, Tool, ToolChoice, VendorOnly } from '../../core/ir'
import { effortToBudget, fitThinkingBudget, thinkingBudget } from '../../core/reasoning'
import type {
	GeminiFunctionDeclaration,
	GeminiGenerationConfig,
	GeminiThinkingConfig,
	GeminiTool,
	GeminiToolConfig,
} from './model'
import { get, isObj, num, type Obj, spellings, str } from './read'
import { geminiSchemaToJsonSchema, lowerTypeNames, sanitiseSchema } from './schema-sanitise'

// ── Decode ─────────────────────────────────────────────────────────────────────────────────────────────

type Settings = Pick<
	ChatRequest,
	'maxTokens' | 'temperature' | 'topP' | 'topK' | 'stop' | 'responseFormat' | 'reasoning' | 'seed' | 'presencePenalty' | 'frequencyPenalty' | 'logprobs' | 'topLogprobs' | 'choices'
>

/**
 * A number of `generationConfig`, within `range` when given: the ranges Gemini documents (temperature "[0.0, 2.0]",
 * logprobs "in the range of [0, 20]"; https://ai.google.dev/api/generate-content), a probability (topP) and counts
 * (maxOutputTokens ≥ 1, candidateCount 1 to 8, Gemini's most). Outside them the request is refused with a 400 naming
 * the field, as Gemini would, rather than clamped or forwarded to another vendor.
 */
const number = (cfg: Obj, key: string, range?: { min?: number; max?: number; integer?: boolean }): number | undefined => {
	const v = get(cfg, key)
	if (v === undefined || v === null) return undefined
	const param = `generationConfig.${key}`
	if (num(v) === undefined) throw badRequest(`${param} must be a number`, param)
	const n = v as number
	if (range?.integer && !Number.isInteger(n)) throw badRequest(`${param} must be an integer`, param)
	if (range?.min !== undefined && n < range.min) throw badRequest(`${param} must be at least ${range.min} (got ${n})`, param)
	if (range?.max !== undefined && n > range.max) throw badRequest(`${param} must be at most ${range.max} (got ${n})`, param)
	return n
}

/** Gemini's most candidates per request, and stop sequences ("up to 5"; https://ai.google.dev/api/generate-content). */
export const MAX_CANDIDATES = 8
const MAX_STOPS = 5

const MAPPED = [
	'maxOutputTokens',
	'temperature',
	'topP',
	'topK',
	'stopSequences',
	'thinkingConfig',
	'seed',
	'presencePenalty',
	'frequencyPenalty',
	'responseLogprobs',
	'logprobs',
].flatMap(spellings)

/**
 * `generationConfig` → canonical settings, plus the fields with no canonical slot (candidateCount, responseModalities…,
 * or a non-JSON `responseMimeType`) to keep in `extra.generationConfig`.
 */
export function decodeGenerationConfig(cfg: unknown): { settings: Settings; rest: Obj | undefined; geminiOnly?: VendorOnly[] } {
	if (cfg === undefined || cfg === null) return { settings: {}, rest: undefined }
	if (!isObj(cfg)) throw badRequest('generationConfig must be an object', 'generationConfig')
	const settings: Settings = {
		maxTokens: number(cfg, 'maxOutputTokens', { min: 1, integer: true }),
		temperature: number(cfg, 'temperature', { min: 0, max: 2 }),
		topP: number(cfg, 'topP', { min: 0, max: 1 }),
		topK: number(cfg, 'topK'),
		seed: number(cfg, 'seed', { integer: true }),
		presencePenalty: number(cfg, 'presencePenalty'),
		frequencyPenalty: number(cfg, 'frequencyPenalty'),
		topLogprobs: number(cfg, 'logprobs', { min: 0, max: 20, integer: true }),
	}
	const responseLogprobs = get(cfg, 'responseLogprobs')
	if (responseLogprobs !== undefined && responseLogprobs !== null) {
		if (typeof responseLogprobs !== 'boolean') throw badRequest('generationConfig.responseLogprobs must be a boolean', 'generationConfig.responseLogprobs')
		settings.logprobs = responseLogprobs
	}
	// Several candidates stay in `rest` too (the fast path forwards the body as written); `choices` tells the relay,
	// which asks another vendor for them as it can (src/relay/choices.ts), as for OpenAI `n`.
	// Bounded here too: another vendor's model is asked once per answer when its API takes one (src/relay/choices.ts).
	const candidates = number(cfg, 'candidateCount', { min: 1, max: MAX_CANDIDATES, integer: true })
	if (candidates !== undefined && candidates > 1) settings.choices = candidates
	const stop = get(cfg, 'stopSequences')
	if (stop !== undefined) {
		if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string'))
			throw badRequest('generationConfig.stopSequences must be an array of strings', 'generationConfig.stopSequences')
		if (stop.length > MAX_STOPS)
			throw badRequest(`generationConfig.stopSequences takes at most ${MAX_STOPS} sequences (got ${stop.length})`, 'generationConfig.stopSequences')
		settings.stop = stop
	}
	const rest: Obj = {}
	for (const [k, v] of Object.entries(cfg)) if (!MAPPED.includes(k)) rest[k] = v
	const format = decodeResponseFormat(cfg)
	if (format) {
		settings.responseFormat = format
		for (const k of ['responseMimeType', 'responseSchema', 'responseJsonSchema'].flatMap(spellings)) delete rest[k]
	}
	const thinking = get(cfg, 'thinkingConfig')
	if (thinking !== undefined) settings.reasoning = decodeThinking(thinking)
	for (const k of Object.keys(settings) as Array<keyof Settings>) if (settings[k] === undefined) delete settings[k]
	const geminiOnly = geminiOnlyOutputs(cfg)
	return { settings, rest: Object.keys(rest).length ? rest : undefined, ...(geminiOnly.length && { geminiOnly }) }
}

/** The `responseMimeType`s other vendors' answers can be given in (JSON through their structured outputs). */
const PORTABLE_MIME = new Set(['text/plain', 'application/json'])

/**
 * Answers only Gemini gives: spoken audio (`responseModalities` AUDIO, `speechConfig`), generated images
 * (`responseModalities` IMAGE) and other `responseMimeType`s such as `text/x.enum` (a bare enum value;
 * https://ai.google.dev/gemini-api/docs/structured-output). Another vendor's chat API would answer plain text in
 * their place, so they are refused for its models rather than dropped (protocols/vendor-only.ts).
 */
function geminiOnlyOutputs(cfg: Obj): VendorOnly[] {
	const out: VendorOnly[] = []
	const named = (camel: string) => (cfg[camel] !== undefined ? camel : spellings(camel)[1]!)
	const modalities = get(cfg, 'responseModalities')
	const other = Array.isArray(modalities) ? modalities.filter((x) => typeof x !== 'string' || x.toUpperCase() !== 'TEXT') : []
	if (other.length) out.push({ protocol: 'gemini', what: `responseModalities ${other.map(String).join(', ')}`, path: `generationConfig.${named('responseModalities')}` })
	const speech = get(cfg, 'speechConfig')
	if (speech !== undefined && speech !== null) out.push({ protocol: 'gemini', what: 'speechConfig (spoken answers)', path: `generationConfig.${named('speechConfig')}` })
	const mime = str(get(cfg, 'responseMimeType'))
	if (mime && !PORTABLE_MIME.has(mime)) out.push({ protocol: 'gemini', what: `responseMimeType ${mime}`, path: `generationConfig.${named('responseMimeType')}` })
	return out
}

function decodeResponseFormat(cfg: Obj): ResponseFormat | undefined {
	const mime = str(get(cfg, 'responseMimeType'))
	if (mime === 'text/plain') return { type: 'text' }
	if (mime !== 'application/json') return undefined
	const jsonSchema = get(cfg, 'responseJsonSchema')
	// Gemini enforces a response schema (constrained decoding): other vendors are asked to where they can.
	if (isObj(jsonSchema)) return { type: 'json_schema', name: 'response', schema: lowerTypeNames(jsonSchema), enforced: true }
	const schema = get(cfg, 'responseSchema')
	if (isObj(schema)) return { type: 'json_schema', name: 'response', schema: geminiSchemaToJsonSchema(schema), enforced: true }
	return { type: 'json_object' }
}

const LEVELS: Record<string, ReasoningEffort> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' }

/** @example effortOfLevel('HIGH') === 'high' */
export const effortOfLevel = (level: string): ReasoningEffort | undefined => LEVELS[level.toUpperCase()]

/**
 * A client's `thinkingConfig` for the model it goes to: a `thinkingLevel` (Gemini 3's) becomes its effort's budget for a
 * model before Gemini 3, or undefined when it stays as asked. Gemini 2.5 refuses levels ("Gemini 2.5 series models
 * don't support thinkingLevel", ai.google.dev/gemini-api/docs/thinking#thinking-levels) and Gemini 3 takes budgets, so
 * a client that sends a level to a Gemini 3 name (Gemini CLI does to every one it knows) keeps working when
 * `model_map` serves that name with an earlier model. A budget sent beside the level (a 400 from Gemini) is kept instead
 * of it; a model whose name tells no Gemini version is left as asked.
 * @example thinkingConfigFor({ includeThoughts: true, thinkingLevel: 'HIGH' }, 'gemini-2.5-flash') // { includeThoughts: true, thinkingBudget: 4096 }
 */
export function thinkingConfigFor(thinking: unknown, model: string): Obj | undefined {
	const version = /(?:^|\/)gemini-(\d+)/.exec(model)
	if (!version || Number(version[1]) >= 3 || !isObj(thinking)) return undefined
	const [camel, snake] = spellings('thinkingLevel') as [string, string]
	const level = get(thinking, 'thinkingLevel')
	if (level === undefined) return undefined
	const { [camel]: _, [snake]: __, ...rest } = thinking
	const effort = typeof level === 'string' ? effortOfLevel(level) : undefined
	if (effort && get(rest, 'thinkingBudget') === undefined) rest[thinking[snake] !== undefined ? 'thinking_budget' : 'thinkingBudget'] = effortToBudget(effort)
	return rest
}

/** `thinkingConfig` → canonical reasoning. A budget of 0 turns thinking off; -1 means "dynamic" (no fixed budget). */
function decodeThinking(v: unknown): Reasoning {
	if (!isObj(v)) throw badRequest('generationConfig.thinkingConfig must be an object', 'generationConfig.thinkingConfig')
	const budget = num(get(v, 'thinkingBudget'))
	const include = get(v, 'includeThoughts')
	const level = str(get(v, 'thinkingLevel'))
	const r: Reasoning = { enabled: budget !== 0 }
	if (budget !== undefined && budget >= 0) r.budgetTokens = budget
	const effort = level && effortOfLevel(level)
	if (effort) r.effort = effort
	if (typeof include === 'boolean') r.includeThoughts = include
	return r
}

/** Gemini's Google Search tool, in both spellings (https://ai.google.dev/gemini-api/docs/google-search). */
export const GOOGLE_SEARCH = ['googleSearch', 'google_search']

/** Whether a Gemini `tools` list offers Google Search. */
export const offersGoogleSearch = (tools: unknown): boolean => Array.isArray(tools) && tools.some((t) => isObj(t) && GOOGLE_SEARCH.some((k) => isObj(t[k])))

/**
 * `tools` → canonical function tools, plus built-in tools (googleSearch, codeExecution…) kept for `extra.tools` and
 * listed as `hosted` (Gemini runs them: another vendor cannot, protocols/vendor-only.ts).
 */
export function decodeTools(tools: unknown): { tools?: Tool[]; others?: Obj[]; hosted?: VendorOnly[] } {
	if (tools === undefined || tools === null) return {}
	if (!Array.isArray(tools)) throw badRequest('tools must be an array', 'tools')
	const out: Tool[] = []
	const others: Obj[] = []
	const hosted: VendorOnly[] = []
	tools.forEach((tool, i) => {
		if (!isObj(tool)) throw badRequest(`tools[${i}] must be an object`, `tools[${i}]`)
		const decls = get(tool, 'functionDeclarations')
		const { functionDeclarations: _, function_declarations: __, ...rest } = tool
		if (Object.keys(rest).length) others.push(rest)
		// Google Search is the canonical web search (core/ir.ts `WebSearch`): another vendor runs its own.
		for (const k in rest) if (!GOOGLE_SEARCH.includes(k)) hosted.push({ protocol: 'gemini', what: `built-in tool ${k}`, path: `tools[${i}].${k}` })
		if (decls === undefined) return
		if (!Array.isArray(decls))
			throw badRequest(`tools[${i}].functionDeclarations must be an array`, `tools[${i}].functionDeclarations`)
		decls.forEach((d, j) => {
			const at = `tools[${i}].functionDeclarations[${j}]`
			if (!isObj(d) || typeof d.name !== 'string' || !d.name) throw badRequest(`${at}.name is required`, `${at}.name`)
			const jsonSchema = get(d, 'parametersJsonSchema')
			const params = get(d, 'parameters')
			const t: Tool = {
				name: d.name,
				parameters: isObj(jsonSchema)
					? lowerTypeNames(jsonSchema)
					: isObj(params)
						? geminiSchemaToJsonSchema(params)
						: { type: 'object', properties: {} },
			}
			if (typeof d.description === 'string') t.description = d.description
			out.push(t)
		})
	})
	return { tools: out.length ? out : undefined, others: others.length ? others : undefined, hosted: hosted.length ? hosted : undefined }
}

/**
 * `toolConfig.functionCallingConfig` → canonical tool choice: AUTO and VALIDATED → auto, NONE → none, ANY → required,
 * or a named tool when exactly one name is allowed; `allowed` is `allowedFunctionNames`, which "limits the functions
 * the model will call" (with ANY or VALIDATED; https://ai.google.dev/api/caching#FunctionCallingConfig), for the caller
 * to narrow the tools another vendor is offered. The original stays in `extra.toolConfig` for Gemini.
 */
export function decodeToolChoice(cfg: unknown): { choice?: ToolChoice; allowed?: Set<string> } {
	if (cfg === undefined || cfg === null) return {}
	if (!isObj(cfg)) throw badRequest('toolConfig must be an object', 'toolConfig')
	const fcc = get(cfg, 'functionCallingConfig')
	if (!isObj(fcc)) return {}
	const mode = str(fcc.mode)
	const names = get(fcc, 'allowedFunctionNames')
	let allowed: Set<string> | undefined
	if (names !== undefined && names !== null) {
		const param = `toolConfig.functionCallingConfig.${fcc.allowedFunctionNames !== undefined ? 'allowedFunctionNames' : 'allowed_function_names'}`
		if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) throw badRequest(`${param} must be an array of function names`, param)
		if (names.length) allowed = new Set(names as string[])
	}
	if (mode === 'NONE') return { choice: { type: 'none' } }
	if (mode === 'ANY') return { choice: allowed?.size === 1 ? { type: 'tool', name: [...allowed][0]! } : { type: 'required' }, allowed }
	if (mode === 'AUTO' || mode === 'VALIDATED') return { choice: { type: 'auto' }, allowed }
	return { allowed }
}

// ── Encode ─────────────────────────────────────────────────────────────────────────────────────────────

/** Canonical tools → one Gemini tool holding all function declarations, parameters sanitised (WIRE-NOTES §11). */
export function encodeTools(tools: Tool[]): GeminiTool {
	const functionDeclarations = tools.map((t): GeminiFunctionDeclaration => {
		const decl: GeminiFunctionDeclaration = { name: t.name }
		if (t.description) decl.description = t.description
		const parameters = sanitiseSchema(t.parameters)
		if (parameters) decl.parameters = parameters
		return decl
	})
	return { functionDeclarations }
}

/** Canonical tool choice → `toolConfig` (WIRE-NOTES §10). */
export function encodeToolChoice(choice: ToolChoice): GeminiToolConfig {
	if (choice.type === 'none') return { functionCallingConfig: { mode: 'NONE' } }
	if (choice.type === 'required') return { functionCallingConfig: { mode: 'ANY' } }
	if (choice.type === 'tool') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } }
	return { functionCallingConfig: { mode: choice.validated ? 'VALIDATED' : 'AUTO' } }
}

/**
 * The smallest thinking budget a Gemini 2.5 model takes (2.5 Pro: 128 to 32768; Flash 0 to 24576; Flash-Lite 512 to
 * 24576; https://ai.google.dev/gemini-api/docs/thinking).
 */
export const MIN_GEMINI_THINKING_BUDGET = 128

/**
 * The budgets a Gemini 2.5 model takes (its documented range above; Google answers 400 "The thinking budget … is
 * invalid" outside it), undefined for other models. An agent's budget (Claude Code asks 31999) is held to the maximum.
 * @example thinkingBudgetRange('gemini-2.5-flash') // { min: 1, max: 24576 }
 */
export function thinkingBudgetRange(model: string): { min: number; max: number } | undefined {
	if (/(?:^|\/)gemini-2\.5-flash-lite/.test(model)) return { min: 512, max: 24_576 }
	if (/(?:^|\/)gemini-2\.5-flash/.test(model)) return { min: 1, max: 24_576 }
	if (/(?:^|\/)gemini-2\.5-pro/.test(model)) return { min: MIN_GEMINI_THINKING_BUDGET, max: 32_768 }
	return undefined
}

/**
 * Thinking turned off with no budget named (Anthropic `disabled`, Responses effort `none`) for the models that think by
 * default (https://ai.google.dev/gemini-api/docs/thinking): the least each takes, Gemini 3 its lowest level, 2.5 Pro its
 * minimum budget (0 is a 400: "This model only works in thinking mode"), the other 2.5 models 0. Left at their default,
 * they would think, and bill it. Another model gets nothing, its default.
 */
function leastThinking(model: string, off: GeminiThinkingConfig, levels: string[] | undefined): GeminiThinkingConfig | undefined {
	if (levels) return off
	if (/(?:^|\/)gemini-2\.5-pro/.test(model)) return { thinkingBudget: MIN_GEMINI_THINKING_BUDGET }
	if (/(?:^|\/)gemini-2\.5-flash/.test(model)) return off
	return undefined
}

/**
 * Canonical reasoning → `thinkingConfig`: a token budget (derived from the effort when only that is known), and
 * `includeThoughts` so thought summaries stream back. Disabled reasoning sends budget 0 when the client said 0
 * explicitly, else the least the model takes (`leastThinking`): 2.5 Pro rejects 0.
 * Gemini counts thoughts against `maxOutputTokens`: under a cap the budget is fitted by the gateway's rule
 * (core/reasoning.ts), and a cap too small for any budget turns thinking off (budget 0) rather than let the model's
 * default thinking take the whole cap.
 */
export function encodeThinking(r: Reasoning, cap?: number, model = ''): GeminiThinkingConfig | undefined {
	const levels = thinkingLevels(model)
	// Gemini 3 cannot have thinking turned off (Pro) or not by a budget of 0: its lowest level instead.
	const off: GeminiThinkingConfig = levels ? { thinkingLevel: 'LOW' } : { thinkingBudget: 0 }
	if (!r.enabled) return r.budgetTokens === 0 ? off : leastThinking(model, off, levels)
	const cfg: GeminiThinkingConfig = { includeThoughts: r.includeThoughts ?? true }
	// Gemini 3 takes an effort as its thinking level (a budget it takes only for backwards compatibility).
	if (levels && r.budgetTokens === undefined) return r.effort ? { ...cfg, thinkingLevel: levelFor(r.effort, levels) } : cfg
	const asked = thinkingBudget(r)
	if (asked === undefined) return cfg
	const range = thinkingBudgetRange(model)
	const want = range ? Math.min(asked, range.max) : asked
	const min = Math.max(range?.min ?? 0, Math.min(want, MIN_GEMINI_THINKING_BUDGET))
	const budget = fitThinkingBudget(want, r.budgetTokens !== undefined, cap, min)
	return budget === undefined ? off : { ...cfg, thinkingBudget: budget }
}

/**
 * The thinking levels a Gemini 3 or later model takes, undefined for earlier ones, which take a budget
 * (https://ai.google.dev/gemini-api/docs/thinking#thinking-levels: "Gemini 2.5 series models don't support
 * thinkingLevel"; thinkingBudget "is accepted for backwards compatibility" on Gemini 3, and the two together are a 400).
 * Gemini 3 Pro takes low and high; Gemini 3.1 Pro low, medium and high; Flash models also minimal, which some refuse
 * (gemini-3.8-flash), so it is never sent.
 * @example thinkingLevels('gemini-3-pro-preview') // ['low', 'high']
 */
export function thinkingLevels(model: string): string[] | undefined {
	const m = /(?:^|\/)gemini-(\d+)(?:\.(\d+))?-(\w+)/.exec(model)
	if (!m || Number(m[1]) < 3) return undefined
	return m[3] === 'pro' && Number(m[1]) === 3 && m[2] === undefined ? ['low', 'high'] : ['low', 'medium', 'high']
}

/** An effort as the nearest level the model takes, rounding up (minimal → LOW; medium → HIGH on Gemini 3 Pro). */
function levelFor(effort: ReasoningEffort, levels: string[]): string {
	const order = ['low', 'medium', 'high']
	const want = effort === 'minimal' ? 'low' : effort
	return (order.slice(order.indexOf(want)).find((l) => levels.includes(l)) ?? 'high').toUpperCase()
}

/**
 * Whether the model takes a JSON answer format together with function declarations. Models before Gemini 3 refuse
 * the two together: 400 INVALID_ARGUMENT "Function calling with a response mime type: 'application/json' is
 * unsupported" (symfony/ai#1777, gemini-2.5-flash); Gemini 3 models combine structured outputs with tools
 * (https://ai.google.dev/gemini-api/docs/structured-output). A name that tells no version is taken as an older model,
 * whose prompted JSON every model follows.
 * @example jsonWithFunctions('gemini-2.5-flash') === false
 */
export function jsonWithFunctions(model: string): boolean {
	const m = /(?:^|\/)gemini-(\d+)/.exec(model)
	return !!m && Number(m[1]) >= 3
}

/** Canonical settings → `generationConfig`; `undefined` when nothing is set. */
export function encodeGenerationConfig(req: ChatRequest, model = ''): GeminiGenerationConfig | undefined {
	const cfg: GeminiGenerationConfig = {}
	if (req.maxTokens !== undefined) cfg.maxOutputTokens = req.maxTokens
	if (req.temperature !== undefined) cfg.temperature = req.temperature
	if (req.topP !== undefined) cfg.topP = req.topP
	if (req.topK !== undefined) cfg.topK = req.topK
	if (req.seed !== undefined) cfg.seed = req.seed
	if (req.presencePenalty !== undefined) cfg.presencePenalty = req.presencePenalty
	if (req.frequencyPenalty !== undefined) cfg.frequencyPenalty = req.frequencyPenalty
	if (req.logprobs !== undefined) cfg.responseLogprobs = req.logprobs
	// "Only valid if responseLogprobs=True".
	if (req.topLogprobs !== undefined && req.logprobs) cfg.logprobs = req.topLogprobs
	if (req.stop?.length) cfg.stopSequences = req.stop
	// Several answers (OpenAI `n`): Gemini's candidates (https://ai.google.dev/api/generate-content#generationconfig).
	if (req.choices !== undefined) cfg.candidateCount = req.choices
	const format = req.responseFormat
	if (format?.type === 'json_object') cfg.responseMimeType = 'application/json'
	else if (format?.type === 'json_schema') {
		// responseJsonSchema takes plain JSON Schema, so no sanitising is needed (unlike responseSchema).
		cfg.responseMimeType = 'application/json'
		cfg.responseJsonSchema = format.schema
	}
	const thinking = req.reasoning && encodeThinking(req.reasoning, req.maxTokens, model)
	if (thinking) cfg.thinkingConfig = thinking
	return Object.keys(cfg).length ? cfg : undefined
}
