/**
 * Usage and stop-reason mapping between Anthropic's wire fields and the canonical model.
 * Anthropic's `input_tokens` already EXCLUDES cache reads and writes, exactly like `Usage.input`, so no arithmetic is
 * needed here (WIRE-NOTES wire §4); `output_tokens` includes thinking, whose share is `output_tokens_details.thinking_tokens`.
 * @module
 */
import type { StopReason, Usage } from '../../core/ir'
import { count, isObject } from './check'
import type { AnthropicStopDetails, AnthropicStopReason, AnthropicUsage } from './model'

/** Reads a wire usage object; absent or null counters are 0. */
export function decodeUsage(u: unknown): Usage {
	const o = isObject(u) ? u : {}
	const details = isObject(o.output_tokens_details) ? o.output_tokens_details : {}
	const out: Usage = {
		input: count(o.input_tokens),
		output: count(o.output_tokens),
		cacheRead: count(o.cache_read_input_tokens),
		cacheWrite: count(o.cache_creation_input_tokens),
		reasoning: count(details.thinking_tokens),
	}
	const hour = writes1h(o)
	if (hour > 0) out.cacheWriteLong = Math.min(hour, out.cacheWrite)
	const searches = webSearches(o)
	if (searches > 0) out.webSearches = searches
	if (o.speed === 'fast') out.tier = 'fast'
	if (o.inference_geo === 'us') out.inferenceGeo = 'us'
	return out
}

/**
 * Web searches the server tool ran (`server_tool_use.web_search_requests`, cumulative in `message_delta`), which
 * Anthropic bills per search on top of tokens (docs.claude.com/en/docs/agents-and-tools/tool-use/web-search-tool#usage-and-pricing).
 */
const webSearches = (o: Record<string, unknown>): number => (isObject(o.server_tool_use) ? count(o.server_tool_use.web_search_requests) : 0)

/**
 * The 1-hour share of the cache writes: `cache_creation.ephemeral_1h_input_tokens`, beside the 5-minute
 * `ephemeral_5m_input_tokens`; both are parts of `cache_creation_input_tokens` and priced differently (1h writes at
 * 2× base input, 5m at 1.25×: docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing).
 */
const writes1h = (o: Record<string, unknown>): number => (isObject(o.cache_creation) ? count(o.cache_creation.ephemeral_1h_input_tokens) : 0)

/**
 * Only the counters the event actually carries. `message_delta.usage` counters are cumulative and omitted when they
 * do not apply, so they replace earlier values field by field and never add (anthropic-sdk `MessageDeltaUsage`).
 * A zero input or cache counter is treated as absent: a cumulative count cannot fall back to 0, and relays put
 * `input_tokens: 0` placeholders in `message_delta` after the real count in `message_start` (envoyproxy/ai-gateway#1631),
 * or zeros in `message_start` before the real count in `message_delta` (zai-org/GLM-5#139). Absent counters are 0.
 * A zero `input_tokens` next to a positive cache counter is a real count (the whole prompt was read from or written
 * to the cache), and kept.
 * @example decodePartialUsage({ input_tokens: 0, output_tokens: 7 }) // { output: 7 }
 */
export function decodePartialUsage(u: unknown): Partial<Usage> {
	if (!isObject(u)) return {}
	const out: Partial<Usage> = {}
	const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v)
	const positive = (v: unknown) => num(v) && count(v) > 0
	const cached = positive(u.cache_read_input_tokens) || positive(u.cache_creation_input_tokens)
	if (positive(u.input_tokens) || (num(u.input_tokens) && cached)) out.input = count(u.input_tokens)
	if (num(u.output_tokens)) out.output = count(u.output_tokens)
	if (positive(u.cache_read_input_tokens)) out.cacheRead = count(u.cache_read_input_tokens)
	if (positive(u.cache_creation_input_tokens)) out.cacheWrite = count(u.cache_creation_input_tokens)
	if (writes1h(u) > 0) out.cacheWriteLong = writes1h(u)
	if (webSearches(u) > 0) out.webSearches = webSearches(u)
	// Fast mode, priced apart (`speed`: "fast" or "standard"); `message_start` reports it, `message_delta` has no such field.
	if (u.speed === 'fast') out.tier = 'fast'
	// Where inference ran, priced apart when in the US: `message_start` reports it, like `speed`.
	if (u.inference_geo === 'us') out.inferenceGeo = 'us'
	if (isObject(u.output_tokens_details) && num(u.output_tokens_details.thinking_tokens))
		out.reasoning = count(u.output_tokens_details.thinking_tokens)
	return out
}

/**
 * The wire usage of a `Message`, with every field Anthropic always sends (strict clients read them): the cache
 * counters, their `cache_creation` split by TTL, `output_tokens_details` (its `thinking_tokens` 0 without thinking, as
 * Anthropic's answers carry it; promptfoo reads it as the reasoning count), `service_tier` and `speed`; `inference_geo`
 * when the upstream reported a US-only run; `server_tool_use` when
 * searches ran (platform.claude.com/docs/en/api/messages: `Usage`).
 */
export function encodeUsage(u: Usage): AnthropicUsage {
	const out: AnthropicUsage = {
		input_tokens: u.input,
		cache_creation_input_tokens: u.cacheWrite,
		cache_read_input_tokens: u.cacheRead,
		cache_creation: cacheCreation(u),
		output_tokens: u.output,
	}
	out.output_tokens_details = { thinking_tokens: u.reasoning }
	if (u.webSearches) out.server_tool_use = serverToolUse(u.webSearches)
	out.service_tier = serviceTier(u.tier)
	out.speed = speed(u.tier)
	if (u.inferenceGeo) out.inference_geo = u.inferenceGeo
	return out
}

/**
 * The usage of a streamed `message_start`: the counts known so far, `input_tokens` counted by `countInput` only when
 * the upstream has not reported it yet (WIRE-NOTES #21), and the same always-sent fields as a whole `Message`.
 */
export function encodeStartUsage(u: Partial<Usage>, countInput: () => number): AnthropicUsage {
	const cacheWrite = u.cacheWrite ?? 0
	return {
		input_tokens: u.input ?? countInput(),
		cache_creation_input_tokens: cacheWrite,
		cache_read_input_tokens: u.cacheRead ?? 0,
		cache_creation: cacheCreation({ cacheWrite, cacheWriteLong: u.cacheWriteLong }),
		output_tokens: u.output ?? 0,
		output_tokens_details: { thinking_tokens: u.reasoning ?? 0 },
		service_tier: serviceTier(u.tier),
		speed: speed(u.tier),
		...(u.inferenceGeo && { inference_geo: u.inferenceGeo }),
	}
}

/**
 * The usage of `message_delta`: cumulative totals, each sent when known (the SDK overwrites its `message_start` values
 * with them: `MessageDeltaUsage`), the thinking count always (as Anthropic's carry it), `server_tool_use` when searches
 * ran. `cache_creation`, `service_tier` and `speed` are not `message_delta` fields; they are repeated only when they changed
 * since `start` (an OpenAI-shaped upstream reports its writes and tier only in its last chunk), so that a client
 * reading them there is not left with stale values.
 */
export function encodeDeltaUsage(u: Partial<Usage>, start: AnthropicUsage): Record<string, unknown> {
	const out: Record<string, unknown> = { output_tokens: u.output ?? 0 }
	if (u.input !== undefined) out.input_tokens = u.input
	if (u.cacheWrite !== undefined) out.cache_creation_input_tokens = u.cacheWrite
	if (u.cacheRead !== undefined) out.cache_read_input_tokens = u.cacheRead
	out.output_tokens_details = { thinking_tokens: u.reasoning ?? 0 }
	if (u.webSearches) out.server_tool_use = serverToolUse(u.webSearches)
	const creation = cacheCreation({ cacheWrite: u.cacheWrite ?? 0, cacheWriteLong: u.cacheWriteLong })
	if (JSON.stringify(creation) !== JSON.stringify(start.cache_creation)) out.cache_creation = creation
	if (serviceTier(u.tier) !== start.service_tier) out.service_tier = serviceTier(u.tier)
	if (speed(u.tier) !== start.speed) out.speed = speed(u.tier)
	return out
}

/** Anthropic's `cache_creation` split of the writes by duration; writes not reported as 1-hour ones are 5-minute ones (the default TTL). */
const cacheCreation = (u: Pick<Usage, 'cacheWrite' | 'cacheWriteLong'>) => {
	const hour = Math.min(u.cacheWriteLong ?? 0, u.cacheWrite)
	return { ephemeral_5m_input_tokens: u.cacheWrite - hour, ephemeral_1h_input_tokens: hour }
}

/** Web fetches have no canonical count (no other vendor reports them): 0. */
const serverToolUse = (searches: number) => ({ web_search_requests: searches, web_fetch_requests: 0 })

/**
 * The tier that served the request, in Anthropic's words: OpenAI's priority processing is Anthropic's `priority`, the
 * standard tier `standard`; OpenAI's flex processing has no Anthropic counterpart (null, as the type allows).
 */
const serviceTier = (tier: Usage['tier']): 'standard' | 'priority' | null => (tier === 'priority' ? 'priority' : tier === 'flex' ? null : 'standard')

/** The speed that served the request (`usage.speed`, always sent): fast mode, or OpenAI's Ultrafast as the nearest to it. */
const speed = (tier: Usage['tier']): 'standard' | 'fast' => (tier === 'fast' || tier === 'ultrafast' ? 'fast' : 'standard')

const STOP: Record<string, StopReason> = {
	end_turn: 'end_turn',
	max_tokens: 'max_tokens',
	stop_sequence: 'stop_sequence',
	tool_use: 'tool_use',
	pause_turn: 'pause_turn',
	refusal: 'refusal',
	// The canonical model has no slot for it; like max_tokens, the output was cut short by a length limit.
	model_context_window_exceeded: 'max_tokens',
}

/**
 * Wire stop_reason → canonical; `sawToolCall` forces `tool_use` over a natural stop (WIRE-NOTES #1).
 * @example decodeStopReason('end_turn', true) === 'tool_use'
 */
export function decodeStopReason(reason: unknown, sawToolCall = false): StopReason {
	const mapped = (typeof reason === 'string' && STOP[reason]) || 'end_turn'
	return sawToolCall ? withToolUse(mapped) : mapped
}

/** A turn that emitted tool calls ends in `tool_use` unless it was cut short or refused. */
export const withToolUse = (r: StopReason): StopReason => (r === 'end_turn' || r === 'stop_sequence' ? 'tool_use' : r)

/** Canonical → wire. `content_filter` (OpenAI/Gemini) is Anthropic's `refusal`. */
export const encodeStopReason = (r: StopReason): AnthropicStopReason => (r === 'content_filter' ? 'refusal' : r)

/**
 * Claude's `stop_details` (`RefusalStopDetails`) for a refusal: another vendor's names no policy category and gives no
 * explanation, which the API sends as null. Other stops have none. promptfoo flags a response as refused only with it.
 */
export const refusalDetails = (r: StopReason): AnthropicStopDetails | undefined =>
	encodeStopReason(r) === 'refusal' ? { type: 'refusal', category: null, explanation: null } : undefined

/** A refusal's explanation from Claude's `stop_details` (null or absent when it gave none). */
export const refusalExplanation = (details: unknown): string | undefined =>
	isObject(details) && typeof details.explanation === 'string' && details.explanation ? details.explanation : undefined
