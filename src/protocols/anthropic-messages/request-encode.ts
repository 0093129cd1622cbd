/**
 * Canonical request → Anthropic upstream body, applying the constraints other vendors' clients do not know about
 * (WIRE-NOTES wire §20): `max_tokens` is required, `system` is top level, roles alternate, tool results lead their
 * user turn, `temperature` ≤ 1, thinking budgets are ≥ 1024 and < `max_tokens`, no forced tool choice with thinking.
 * @module
 */
import { unsupportedForModel } from '../../core/errors'
import type { CacheControl, ChatRequest, Reasoning } from '../../core/ir'
import type { UpstreamOptions } from '../codec'
import { budgetToEffort, DEFAULT_ANSWER_TOKENS, defaultOutputCap, effortToBudget, fitThinkingBudget, thinkingBudget } from '../../core/reasoning'
import { conversationField, emptyFinalUserMessage, noConversation } from '../final-turn'
import { jsonInstruction } from '../json-instruction'
import { refuseVendorOnly } from '../vendor-only'
import { isObject, type Json } from './check'
import { isClientTool } from './client-tools'
import { encodePart, toolIdMap } from './content-encode'
import { type AnthropicExtra, notNull, ownExtra, PROTOCOL, passthroughFields, reinsert, storedAt } from './extra'
import type { AnthropicRequest } from './model'
import { claudeOutputSchema } from './output-schema'
import { encodeWebSearchTool, isWebSearchTool, WEB_SEARCH_NAME } from './web-search'

/** Used when the caller gave no limit (plus the thinking budget); Anthropic has no default (`max_tokens: Field required`). */
export const DEFAULT_MAX_TOKENS = DEFAULT_ANSWER_TOKENS
/** https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking: budget_tokens must be ≥ 1024. */
export const MIN_THINKING_BUDGET = 1024

type Turn = { role: 'user' | 'assistant'; content: Json[] }

const isThinking = (b: Json) => b.type === 'thinking' || b.type === 'redacted_thinking'

function encodeMessages(req: ChatRequest, extra: AnthropicExtra | undefined): Turn[] {
	const toolId = toolIdMap(req.messages)
	const turns: Turn[] = []
	req.messages.forEach((m, mi) => {
		// One slot per part, then the stored unknown blocks spliced back, so a slot's index is its original position.
		const slots = reinsert<{ part?: (typeof m.content)[number]; block?: Json }>(
			m.content.map((part) => ({ part })),
			storedAt(extra, [mi]).map((s) => ({ at: s.at, block: { block: s.block } })),
		)
		const content = slots
			.map((s, bi) => s.block ?? (s.part ? encodePart(s.part, toolId, storedAt(extra, [mi, bi]), `messages[${mi}].content[${bi}]`) : null))
			.filter(notNull)
		const last = turns[turns.length - 1]
		if (!content.length) {
			// Anthropic refuses it: "messages: all messages must have non-empty content except for the optional final
			// assistant message". Left out between two turns it changes nothing the model reads (the turns around it merge);
			// left out at the end, the assistant turn before it would become a prefill.
			if (m.role === 'user' && mi === req.messages.length - 1 && last?.role === 'assistant')
				throw emptyFinalUserMessage('Claude', 'Anthropic refuses empty and whitespace-only text', conversationField(req))
			return
		}
		// Anthropic combines consecutive same-role turns anyway; merging here keeps tool results next to their calls.
		if (last?.role === m.role) last.content.push(...content)
		else turns.push({ role: m.role, content })
	})
	for (const t of turns) {
		if (t.role === 'user') {
			// "tool_result blocks must come first in the user message that follows the tool_use" (WIRE-NOTES wire §9).
			t.content = [...t.content.filter((b) => b.type === 'tool_result'), ...t.content.filter((b) => b.type !== 'tool_result')]
		} else if (t.content.some((b) => b.type === 'tool_use') && t.content.some(isThinking) && !isThinking(t.content[0])) {
			// With thinking on, an assistant tool-use turn must start with its thinking block (WIRE-NOTES wire §13).
			t.content = [...t.content.filter(isThinking), ...t.content.filter((b) => !isThinking(b))]
		}
	}
	return trimPrefill(turns)
}

/**
 * A conversation ending with an assistant turn asks Claude to continue it (a prefill), and Anthropic refuses one
 * ending in whitespace ("final assistant content cannot end with trailing whitespace"), which OpenAI and Gemini take:
 * its last text is sent without it (whitespace-only texts are already gone, encodePart).
 */
function trimPrefill(turns: Turn[]): Turn[] {
	const last = turns[turns.length - 1]
	const end = last?.role === 'assistant' ? last.content[last.content.length - 1] : undefined
	if (end?.type === 'text' && typeof end.text === 'string' && end.text !== end.text.trimEnd()) last!.content[last!.content.length - 1] = { ...end, text: end.text.trimEnd() }
	return turns
}

/**
 * Anthropic refuses thinking when the assistant turn being continued used tools without a leading thinking block
 * ("a final assistant message must start with a thinking block"); history produced by another vendor has none,
 * so thinking is left off for that request rather than failing it.
 */
function canThink(turns: Turn[]): boolean {
	const last = [...turns].reverse().find((t) => t.role === 'assistant')
	return !last || !last.content.some((b) => b.type === 'tool_use') || isThinking(last.content[0])
}

/**
 * The thinking config under `maxTokens` (budget ≥ 1024 and < max_tokens). The caller's cap is a total and is never
 * raised: a budget that does not fit is lowered, and a cap too small for the 1024 minimum turns thinking off
 * (the rule: core/reasoning.ts).
 */
function encodeThinking(r: Reasoning, extra: AnthropicExtra | undefined, maxTokens: number, adaptive: UpstreamOptions['adaptiveThinking']): Json | undefined {
	// A model that always thinks refuses to have it turned off: left to its default.
	if (!r.enabled) return adaptive === 'always' ? undefined : { type: 'disabled' }
	const raw = extra?.__thinking
	if (raw && raw.type !== 'enabled') return raw // adaptive / between_tools: no budget
	// Claude Opus 4.7 and later take no budget: adaptive, the depth said by `output_config.effort` (see encodeRequest).
	if (adaptive) return { type: 'adaptive' }
	const budget = fitThinkingBudget(thinkingBudget(r, effortToBudget('medium'))!, r.budgetTokens !== undefined, maxTokens, MIN_THINKING_BUDGET)
	return budget === undefined ? { type: 'disabled' } : { ...raw, type: 'enabled', budget_tokens: budget }
}

/**
 * The effort of adaptive thinking (`output_config.effort`: low, medium, high, …): the caller's, else the one its budget
 * stands for; none leaves the model's default.
 */
function claudeEffort(r: Reasoning | undefined): string | undefined {
	const effort = r?.effort ?? (r?.budgetTokens ? budgetToEffort(r.budgetTokens) : undefined)
	return effort === 'minimal' ? 'low' : effort
}

/**
 * Claude's own structured outputs (`output_config.format`), when the upstream has them, the format is a schema they
 * can express, and the conversation does not end with an assistant turn (a prefill, which they refuse).
 */
function nativeFormat(req: ChatRequest, messages: Turn[], upstream: UpstreamOptions | undefined): Json | undefined {
	const f = req.responseFormat
	if (f?.type !== 'json_schema' || !upstream?.nativeStructuredOutputs || messages[messages.length - 1]?.role === 'assistant') return undefined
	const schema = claudeOutputSchema(f.schema)
	return schema && { type: 'json_schema', schema }
}

function encodeSystem(req: ChatRequest, extra: AnthropicExtra | undefined, prompted: boolean): string | Json[] | undefined {
	const blocks: Json[] = (req.system ?? [])
		.filter((p) => p.text !== '')
		.map((p) => (p.cacheControl ? { type: 'text', text: p.text, cache_control: p.cacheControl } : { type: 'text', text: p.text }))
	const instruction = prompted && req.responseFormat && !isObject(extra?.output_config) ? jsonInstruction(req.responseFormat) : undefined
	if (instruction) blocks.push({ type: 'text', text: instruction })
	if (!blocks.length) return undefined
	return blocks.length === 1 && !blocks[0].cache_control ? (blocks[0].text as string) : blocks
}

function encodeTools(req: ChatRequest, extra: AnthropicExtra | undefined, upstream: UpstreamOptions | undefined): Json[] {
	// A client-run Anthropic tool is among `__tools` as written; its function (client-tools.ts) is for other vendors.
	const clientRun = extra?.__tools?.filter((s) => isClientTool(s.tool.type))
	const own = clientRun?.length ? (req.tools ?? []).filter((t) => !clientRun.some((s) => s.tool.name === t.name)) : (req.tools ?? [])
	const custom: Json[] = own.map((t) => {
		const tool: Json = { name: t.name }
		if (t.description) tool.description = t.description
		tool.input_schema = { type: 'object', ...t.parameters }
		if (t.cacheControl) tool.cache_control = t.cacheControl
		// `strict` is re-emitted verbatim to the client that sent it. Another client's strict tool becomes Claude's
		// strict tool use where the model has it, its schema cut to the subset Claude accepts (else a 400).
		if (extra && t.strict !== undefined) tool.strict = t.strict
		else if (t.strict && upstream?.nativeStructuredOutputs) {
			const schema = claudeOutputSchema(tool.input_schema as Record<string, unknown>)
			if (schema) Object.assign(tool, { input_schema: schema, strict: true })
		}
		return { ...tool, ...extra?.__toolFields?.[t.name] }
	})
	const tools = reinsert(
		custom,
		(extra?.__tools ?? []).map((s) => ({ at: s.index, block: s.tool })),
	)
	// Another protocol's search becomes the server tool (the client's own is among `__tools` as written).
	if (req.webSearch && !tools.some((t) => isWebSearchTool(t.type))) tools.push(encodeWebSearchTool(req.webSearch))
	return tools
}

function encodeToolChoice(req: ChatRequest, thinking: boolean): Json | undefined {
	let tc = req.webSearch?.forced ? { type: 'tool' as const, name: WEB_SEARCH_NAME } : req.toolChoice
	// "Thinking may not be enabled when tool_choice forces tool use" (extended-thinking docs).
	if (thinking && (tc?.type === 'required' || tc?.type === 'tool')) tc = { type: 'auto' }
	const noParallel = req.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {}
	switch (tc?.type) {
		case undefined:
			return req.parallelToolCalls === false ? { type: 'auto', ...noParallel } : undefined
		case 'auto':
			return { type: 'auto', ...noParallel }
		case 'required':
			return { type: 'any', ...noParallel }
		case 'tool':
			return { type: 'tool', name: tc.name, ...noParallel }
		case 'none':
			return { type: 'none' }
	}
}

/** Whether a block of the body is marked for caching (a tool result's blocks included). */
const marked = (blocks: unknown): boolean =>
	Array.isArray(blocks) && blocks.some((b) => isObject(b) && (b.cache_control !== undefined || marked(b.content)))

/**
 * The whole prompt cached (ChatRequest.cacheAll), unless the body marks a block already: Anthropic's automatic caching
 * (a top-level `cache_control`, the breakpoint at the last cacheable block, moving forward as the conversation grows),
 * or, where the vendor has none, the same breakpoint on the last message's last block that can carry one (thinking
 * blocks cannot). https://platform.claude.com/docs/en/build-with-claude/prompt-caching
 */
function cacheAll(body: Json, messages: Turn[], cache: CacheControl, upstream: UpstreamOptions | undefined): void {
	if (body.cache_control !== undefined || marked(body.tools) || marked(body.system) || messages.some((t) => marked(t.content))) return
	if (upstream?.requestCacheControl !== false) {
		body.cache_control = cache
		return
	}
	const content = messages[messages.length - 1]?.content ?? []
	const at = content.findLastIndex((b) => !isThinking(b))
	if (at >= 0) content[at] = { ...content[at], cache_control: cache }
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

/** Canonical request → Anthropic body with `model` set to the upstream model name. */
export function encodeRequest(req: ChatRequest, model: string, upstream?: UpstreamOptions): AnthropicRequest {
	refuseVendorOnly(req, PROTOCOL)
	// Claude returns no log probabilities: an answer without the ones asked for would be a silent loss. Retryable, so a
	// channel of the model that has them (OpenAI, Gemini) is tried next.
	if (req.logprobs) throw unsupportedForModel(`logprobs: model "${req.model}" is served by Claude here, which returns no log probabilities: remove logprobs, or use a model served by OpenAI or Gemini`, true, 'logprobs')
	const extra = ownExtra(req)
	const messages = encodeMessages(req, extra)
	if (!messages.length) throw noConversation('Anthropic', req)
	// No cap from the caller: room for a default answer above the thinking budget (the relay passes the cap it
	// reserved for, the model's maximum when configured, so this default is for other callers).
	const maxTokens = req.maxTokens ?? defaultOutputCap(req.reasoning)
	let thinking: Json | undefined
	const adaptive = upstream?.adaptiveThinking
	if (req.reasoning && (!req.reasoning.enabled || canThink(messages))) thinking = encodeThinking(req.reasoning, extra, maxTokens, adaptive)
	// A tool turn continued with its thinking left out (unsigned or another vendor's, which is not sent back): said off
	// outright. Claude has it off by default anyway; vendors that think by default (DeepSeek's Anthropic API) refuse
	// such a turn otherwise ("the reasoning_content in the thinking mode must be passed back").
	else if (adaptive !== 'always' && !canThink(messages) && req.messages.some((m) => m.role === 'assistant' && m.content.some((p) => p.type === 'thinking'))) thinking = { type: 'disabled' }
	const thinkingOn = thinking !== undefined && thinking.type !== 'disabled'

	const body: Json = { model, max_tokens: maxTokens, messages }
	const format = isObject(extra?.output_config) ? undefined : nativeFormat(req, messages, upstream)
	const system = encodeSystem(req, extra, !format)
	if (system !== undefined) body.system = system
	const effort = thinkingOn && adaptive && !isObject(extra?.output_config) ? claudeEffort(req.reasoning) : undefined
	if (format || effort) body.output_config = { ...(format && { format }), ...(effort && { effort }) }
	const tools = encodeTools(req, extra, upstream)
	if (tools.length) {
		body.tools = tools
		const tc = encodeToolChoice(req, thinkingOn)
		if (tc) body.tool_choice = tc
	}
	if (thinking) body.thinking = thinking
	// Claude Opus 4.7 and later refuse sampling settings ("`temperature` is deprecated for this model."): another
	// protocol's client, which could not know, gets the model's own sampling.
	if (!upstream?.fixedSampling) {
		// Thinking is incompatible with temperature and top_k, and allows top_p only in [0.95, 1] (extended-thinking docs).
		if (req.temperature !== undefined && !thinkingOn) body.temperature = clamp(req.temperature, 0, 1)
		// Current models refuse "`temperature` and `top_p` cannot both be specified"; temperature is the common knob.
		if (req.topP !== undefined && body.temperature === undefined) body.top_p = thinkingOn ? clamp(req.topP, 0.95, 1) : clamp(req.topP, 0, 1)
		if (req.topK !== undefined && !thinkingOn) body.top_k = req.topK
	}
	// Anthropic rejects stop sequences that are empty or only whitespace.
	const stop = (req.stop ?? []).filter((s) => s.trim() !== '')
	if (stop.length) body.stop_sequences = stop
	const metadata: Json = { ...(isObject(extra?.metadata) ? extra.metadata : {}) }
	if (req.user) metadata.user_id = req.user
	if (Object.keys(metadata).length) body.metadata = metadata
	if (req.stream) body.stream = true
	if (extra) for (const [k, v] of Object.entries(passthroughFields(extra))) if (!(k in body)) body[k] = v
	if (req.cacheAll) cacheAll(body, messages, req.cacheAll, upstream)
	// Built field by field from the canonical request above; the schema type documents the shape.
	return body as AnthropicRequest
}
