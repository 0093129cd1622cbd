/**
 * Gemini request settings ⇄ canonical ones: `generationConfig`, `tools` and `toolConfig`.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ChatRequest, Reasoning, ReasoningEffort, ResponseFormat, Tool, ToolChoice } from '../../core/ir'
import { effortToBudget } from '../../core/reasoning'
import type {
	GeminiFunctionDeclaration,
	GeminiGenerationConfig,
	GeminiThinkingConfig,
	GeminiTool,
	GeminiToolConfig,
} from './model'
import { get, isObj, num, type Obj, spellings, str } from './read'
import { geminiSchemaToJsonSchema, sanitiseSchema } from './schema-sanitise'

// ── Decode ─────────────────────────────────────────────────────────────────────────────────────────────

type Settings = Pick<ChatRequest, 'maxTokens' | 'temperature' | 'topP' | 'topK' | 'stop' | 'responseFormat' | 'reasoning'>

const number = (cfg: Obj, key: string): number | undefined => {
	const v = get(cfg, key)
	if (v === undefined || v === null) return undefined
	if (num(v) === undefined) throw badRequest(`generationConfig.${key} must be a number`, `generationConfig.${key}`)
	return v as number
}

const MAPPED = ['maxOutputTokens', 'temperature', 'topP', 'topK', 'stopSequences', 'thinkingConfig'].flatMap(spellings)

/**
 * `generationConfig` → canonical settings, plus the fields with no canonical slot (candidateCount, seed,
 * responseModalities…, or a non-JSON `responseMimeType`) to keep in `extra.generationConfig`.
 */
export function decodeGenerationConfig(cfg: unknown): { settings: Settings; rest: Obj | undefined } {
	if (cfg === undefined || cfg === null) return { settings: {}, rest: undefined }
	if (!isObj(cfg)) throw badRequest('generationConfig must be an object', 'generationConfig')
	const settings: Settings = {
		maxTokens: number(cfg, 'maxOutputTokens'),
		temperature: number(cfg, 'temperature'),
		topP: number(cfg, 'topP'),
		topK: number(cfg, 'topK'),
	}
	const stop = get(cfg, 'stopSequences')
	if (stop !== undefined) {
		if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string'))
			throw badRequest('generationConfig.stopSequences must be an array of strings', 'generationConfig.stopSequences')
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
	return { settings, rest: Object.keys(rest).length ? rest : undefined }
}

function decodeResponseFormat(cfg: Obj): ResponseFormat | undefined {
	const mime = str(get(cfg, 'responseMimeType'))
	if (mime === 'text/plain') return { type: 'text' }
	if (mime !== 'application/json') return undefined
	const jsonSchema = get(cfg, 'responseJsonSchema')
	if (isObj(jsonSchema)) return { type: 'json_schema', name: 'response', schema: jsonSchema }
	const schema = get(cfg, 'responseSchema')
	if (isObj(schema)) return { type: 'json_schema', name: 'response', schema: geminiSchemaToJsonSchema(schema) }
	return { type: 'json_object' }
}

const LEVELS: Record<string, ReasoningEffort> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' }

/** `thinkingConfig` → canonical reasoning. A budget of 0 turns thinking off; -1 means "dynamic" (no fixed budget). */
function decodeThinking(v: unknown): Reasoning {
	if (!isObj(v)) throw badRequest('generationConfig.thinkingConfig must be an object', 'generationConfig.thinkingConfig')
	const budget = num(get(v, 'thinkingBudget'))
	const include = get(v, 'includeThoughts')
	const level = str(get(v, 'thinkingLevel'))
	const r: Reasoning = { enabled: budget !== 0 }
	if (budget !== undefined && budget >= 0) r.budgetTokens = budget
	if (level && LEVELS[level.toUpperCase()]) r.effort = LEVELS[level.toUpperCase()]
	if (typeof include === 'boolean') r.includeThoughts = include
	return r
}

/** `tools` → canonical function tools, plus built-in tools (googleSearch, codeExecution…) kept for `extra.tools`. */
export function decodeTools(tools: unknown): { tools?: Tool[]; others?: Obj[] } {
	if (tools === undefined || tools === null) return {}
	if (!Array.isArray(tools)) throw badRequest('tools must be an array', 'tools')
	const out: Tool[] = []
	const others: Obj[] = []
	tools.forEach((tool, i) => {
		if (!isObj(tool)) throw badRequest(`tools[${i}] must be an object`, `tools[${i}]`)
		const decls = get(tool, 'functionDeclarations')
		const { functionDeclarations: _, function_declarations: __, ...rest } = tool
		if (Object.keys(rest).length) others.push(rest)
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
					? jsonSchema
					: isObj(params)
						? geminiSchemaToJsonSchema(params)
						: { type: 'object', properties: {} },
			}
			if (typeof d.description === 'string') t.description = d.description
			out.push(t)
		})
	})
	return { tools: out.length ? out : undefined, others: others.length ? others : undefined }
}

/**
 * `toolConfig.functionCallingConfig` → canonical tool choice: AUTO → auto, NONE → none, ANY → required, or a
 * named tool when exactly one name is allowed. VALIDATED and multi-name ANY have no canonical form: the caller keeps
 * the original in `extra.toolConfig`.
 */
export function decodeToolChoice(cfg: unknown): ToolChoice | undefined {
	if (cfg === undefined || cfg === null) return undefined
	if (!isObj(cfg)) throw badRequest('toolConfig must be an object', 'toolConfig')
	const fcc = get(cfg, 'functionCallingConfig')
	if (!isObj(fcc)) return undefined
	const mode = str(fcc.mode)
	const names = get(fcc, 'allowedFunctionNames')
	if (mode === 'NONE') return { type: 'none' }
	if (mode === 'ANY') {
		if (Array.isArray(names) && names.length === 1 && typeof names[0] === 'string') return { type: 'tool', name: names[0] }
		return { type: 'required' }
	}
	if (mode === 'AUTO' || mode === 'VALIDATED') return { type: 'auto' }
	return undefined
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
	return { functionCallingConfig: { mode: 'AUTO' } }
}

/**
 * Canonical reasoning → `thinkingConfig`: a token budget (derived from the effort when only that is known), and
 * `includeThoughts` so thought summaries stream back. Disabled reasoning sends budget 0 only when the client said 0
 * explicitly: some models (2.5 Pro) reject 0, so otherwise the model default applies.
 */
export function encodeThinking(r: Reasoning): GeminiThinkingConfig | undefined {
	if (!r.enabled) return r.budgetTokens === 0 ? { thinkingBudget: 0 } : undefined
	const cfg: GeminiThinkingConfig = { includeThoughts: r.includeThoughts ?? true }
	const budget = r.budgetTokens ?? (r.effort ? effortToBudget(r.effort) : undefined)
	if (budget !== undefined) cfg.thinkingBudget = budget
	return cfg
}

/** Canonical settings → `generationConfig`; `undefined` when nothing is set. */
export function encodeGenerationConfig(req: ChatRequest): GeminiGenerationConfig | undefined {
	const cfg: GeminiGenerationConfig = {}
	if (req.maxTokens !== undefined) cfg.maxOutputTokens = req.maxTokens
	if (req.temperature !== undefined) cfg.temperature = req.temperature
	if (req.topP !== undefined) cfg.topP = req.topP
	if (req.topK !== undefined) cfg.topK = req.topK
	if (req.stop?.length) cfg.stopSequences = req.stop
	const format = req.responseFormat
	if (format?.type === 'json_object') cfg.responseMimeType = 'application/json'
	else if (format?.type === 'json_schema') {
		// responseJsonSchema takes plain JSON Schema, so no sanitising is needed (unlike responseSchema).
		cfg.responseMimeType = 'application/json'
		cfg.responseJsonSchema = format.schema
	}
	const thinking = req.reasoning && encodeThinking(req.reasoning)
	if (thinking) cfg.thinkingConfig = thinking
	return Object.keys(cfg).length ? cfg : undefined
}
