/**
 * Usage and finish reasons between OpenAI's wire and the canonical model.
 * @module
 */
import type { ServiceTier, StopReason, Usage } from '../../core/ir'
import { promptTokens } from '../../core/ir'
import { count, isObject } from './guards'
import type { OpenAIUsage } from './model'

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter'

/**
 * Canonical usage from an OpenAI `usage` object, or undefined when there is none.
 * `prompt_tokens` INCLUDES cached tokens (WIRE-NOTES wire §4), so cache reads and writes are subtracted to get
 * the canonical `input`. Cache reads come from `prompt_tokens_details.cached_tokens` (OpenAI) or
 * `prompt_cache_hit_tokens` (DeepSeek); writes from `prompt_tokens_details.cache_write_tokens` (OpenRouter).
 * `completion_tokens` already includes reasoning tokens (except on xAI, below): canonical `output` always does.
 */
export function decodeUsage(u: unknown, serviceTier?: unknown): Usage | undefined {
	if (!isObject(u)) return undefined
	const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {}
	const completion = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {}
	const cacheRead = count(prompt.cached_tokens) || count(u.prompt_cache_hit_tokens)
	const cacheWrite = count(prompt.cache_write_tokens)
	const promptTokens = count(u.prompt_tokens)
	const completionTokens = count(u.completion_tokens)
	const reasoning = count(completion.reasoning_tokens)
	// xAI counts reasoning outside `completion_tokens` but inside `total_tokens` ("counted separately from
	// completion_tokens, but … in the total_tokens": docs.x.ai consumption-and-rate-limits; vercel/ai PR #12425). The
	// total tells the two conventions apart: OpenAI's is prompt + completion, so the sum below matches only xAI's.
	const separate = reasoning > 0 && count(u.total_tokens) === promptTokens + completionTokens + reasoning
	const out: Usage = {
		input: Math.max(0, promptTokens - cacheRead - cacheWrite),
		output: separate ? completionTokens + reasoning : completionTokens,
		cacheRead,
		cacheWrite,
		reasoning,
	}
	// Audio models report their audio tokens, priced far above text, inside the totals (`audio_tokens` of each details
	// object: platform.openai.com/docs/api-reference/chat/object#chat/object-usage).
	const audioIn = count(prompt.audio_tokens)
	const audioOut = count(completion.audio_tokens)
	if (audioIn > 0) out.audioInput = Math.min(audioIn, out.input)
	if (audioOut > 0) out.audioOutput = Math.min(audioOut, out.output)
	const tier = servedTier(serviceTier)
	if (tier) out.tier = tier
	return out
}

/**
 * The tier priced apart that served a request, from the `service_tier` of the answer (the chat completion object, its
 * chunks, the Response object): "the processing mode actually used to serve the request", which may differ from the
 * one asked (platform.openai.com/docs/api-reference/chat/object). Fast mode shows as `priority` whether it was asked
 * as `fast` or `priority`, Ultrafast as `ultrafast` (openai-node 7.59 `ServiceTier`). `default`, `auto` and `scale`
 * bill at the standard prices.
 * @example servedTier('priority') === 'priority'; servedTier('default') === undefined
 */
export const servedTier = (v: unknown): ServiceTier | undefined => (v === 'priority' || v === 'flex' || v === 'ultrafast' ? v : undefined)

/**
 * The answer's `service_tier` when a tier OpenAI names served it (another vendor's Priority or Flex, as Gemini and
 * Vertex report them, included); none for the standard tier or Anthropic's fast mode, which OpenAI has no name for.
 * @example tierField({ tier: 'flex' }) // { service_tier: 'flex' }
 */
export function tierField(u: Partial<Usage>): { service_tier?: ServiceTier } {
	const tier = servedTier(u.tier)
	return tier ? { service_tier: tier } : {}
}

/**
 * OpenAI `usage` from canonical usage, with every count OpenAI always sends in its details objects
 * (platform.openai.com/docs/api-reference/chat/object#chat/object-usage): audio tokens are 0 unless the upstream
 * reported audio, and predicted-output tokens always 0 (Predicted Outputs are OpenAI's alone, and an OpenAI upstream
 * answering an OpenAI client is relayed as is). `cache_write_tokens` only when there were writes (OpenAI has no such
 * field; OpenRouter's name for them).
 */
export function encodeUsage(u: Usage): OpenAIUsage {
	const prompt = promptTokens(u)
	// `audio_tokens` are the audio "present in the prompt", cached or not (the canonical counts split them).
	const promptDetails: { cached_tokens: number; audio_tokens: number; cache_write_tokens?: number } = { cached_tokens: u.cacheRead, audio_tokens: (u.audioInput ?? 0) + (u.audioCacheRead ?? 0) }
	if (u.cacheWrite) promptDetails.cache_write_tokens = u.cacheWrite
	return {
		prompt_tokens: prompt,
		completion_tokens: u.output,
		total_tokens: prompt + u.output,
		prompt_tokens_details: promptDetails,
		completion_tokens_details: { reasoning_tokens: u.reasoning, audio_tokens: u.audioOutput ?? 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
	}
}

/**
 * OpenAI finish_reason → canonical stop reason (WIRE-NOTES wire §5). `function_call` is the legacy name of
 * `tool_calls`; Mistral's `model_length` is a truncation; unknown values (compatibles invent some, e.g. `eos`) end the
 * turn normally. Mistral's `error` is a failure, handled by the decoders before this.
 */
export function decodeFinishReason(reason: unknown): StopReason {
	switch (reason) {
		case 'length':
		// Mistral: the model's context window, not max_tokens, cut the answer; still a truncation to the client.
		case 'model_length':
			return 'max_tokens'
		case 'tool_calls':
		case 'function_call':
			return 'tool_use'
		case 'content_filter':
			return 'content_filter'
		default:
			return 'end_turn'
	}
}

/**
 * Canonical stop reason → OpenAI finish_reason. A turn that produced any tool call ends in `tool_calls` even when
 * the vendor said stop (WIRE-NOTES #1, wire §6); truncation and filtering still win, because the client must
 * learn that the call's arguments may be cut short.
 */
export function encodeFinishReason(reason: StopReason, sawToolCall: boolean): FinishReason {
	if (reason === 'max_tokens') return 'length'
	if (reason === 'refusal' || reason === 'content_filter') return 'content_filter'
	if (sawToolCall || reason === 'tool_use') return 'tool_calls'
	return 'stop'
}

/** The canonical stop reason once tool calls are known: a natural stop after a tool call is `tool_use`. */
export const withToolUse = (reason: StopReason, sawToolCall: boolean): StopReason =>
	sawToolCall && (reason === 'end_turn' || reason === 'stop_sequence' || reason === 'pause_turn') ? 'tool_use' : reason
