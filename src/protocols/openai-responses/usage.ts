/**
 * Responses usage and status ⇄ canonical usage and stop reasons.
 * Usage (https://platform.openai.com/docs/api-reference/responses/object#responses/object-usage): `input_tokens`
 * INCLUDES `input_tokens_details.cached_tokens` (WIRE-NOTES wire §4), so canonical input = input − cached − written;
 * `output_tokens` includes `output_tokens_details.reasoning_tokens`, as canonical `output` does.
 * @module
 */
import { promptTokens, type StopReason, type Usage } from '../../core/ir'
import { count, isObject, str } from '../openai-chat/guards'
import { servedTier } from '../openai-chat/usage'
import type { ResponsesUsage } from './model'

/**
 * Canonical usage from a Responses `usage` object, and the tier the Response's `service_tier` says served it;
 * undefined when there is no usage.
 */
export function decodeUsage(u: unknown, serviceTier?: unknown): Usage | undefined {
	if (!isObject(u)) return undefined
	const inDetails = isObject(u.input_tokens_details) ? u.input_tokens_details : {}
	const outDetails = isObject(u.output_tokens_details) ? u.output_tokens_details : {}
	const cacheRead = count(inDetails.cached_tokens)
	const cacheWrite = count(inDetails.cache_write_tokens)
	const out: Usage = {
		input: Math.max(0, count(u.input_tokens) - cacheRead - cacheWrite),
		output: count(u.output_tokens),
		cacheRead,
		cacheWrite,
		reasoning: count(outDetails.reasoning_tokens),
	}
	// GPT-5.6 and later bill writes by TTL: the 12-hour share of `cache_write_tokens` costs more than the 30-minute one.
	const ttl = isObject(inDetails.cache_write_tokens_details) ? count(inDetails.cache_write_tokens_details.ttl_12h_tokens) : 0
	if (ttl > 0) out.cacheWriteLong = Math.min(ttl, cacheWrite)
	const tier = servedTier(serviceTier)
	if (tier) out.tier = tier
	return out
}

/** Canonical usage → Responses `usage`; `cache_write_tokens` only when there were writes (OpenAI itself has none). */
export function encodeUsage(u: Usage): ResponsesUsage {
	const input = promptTokens(u)
	return {
		input_tokens: input,
		input_tokens_details: u.cacheWrite ? { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite } : { cached_tokens: u.cacheRead },
		output_tokens: u.output,
		output_tokens_details: { reasoning_tokens: u.reasoning },
		total_tokens: input + u.output,
	}
}

/** How a response ended, in the Responses vocabulary: `status` plus `incomplete_details.reason`. */
export type ResponseEnd = { status: 'completed' | 'incomplete'; reason?: 'max_output_tokens' | 'content_filter' }

/**
 * Canonical stop reason → Responses status. Truncation and filtering are `incomplete` with a reason (the client must
 * learn the answer is cut); everything else is `completed`: tool calls are told by the function_call items.
 */
export function encodeEnd(reason: StopReason): ResponseEnd {
	if (reason === 'max_tokens') return { status: 'incomplete', reason: 'max_output_tokens' }
	if (reason === 'content_filter') return { status: 'incomplete', reason: 'content_filter' }
	return { status: 'completed' }
}

/**
 * Responses status → canonical stop reason. A completed response that called functions ended for `tool_use`
 * (WIRE-NOTES #1: derive it from the items actually produced); a refusal part makes it `refusal`.
 * @example decodeEnd('incomplete', { reason: 'max_output_tokens' }, false, false) === 'max_tokens'
 */
export function decodeEnd(status: unknown, incomplete: unknown, sawTool: boolean, sawRefusal: boolean): StopReason {
	if (status === 'incomplete') {
		const reason = isObject(incomplete) ? str(incomplete.reason) : undefined
		return reason === 'content_filter' ? 'content_filter' : 'max_tokens'
	}
	if (sawTool) return 'tool_use'
	return sawRefusal ? 'refusal' : 'end_turn'
}
