/**
 * OpenAI's models that do not reason refuse a reasoning effort, in Chat Completions (`reasoning_effort`) and in the
 * Responses API (`reasoning.effort`), as the real API words it: "Unsupported parameter: 'reasoning_effort' is not
 * supported with this model." (https://platform.openai.com/docs/guides/reasoning: only reasoning models take it).
 * Other names (reasoning models, other vendors' models on this mock) take it.
 * @module
 */

import type { JsonReply } from '../shared/reply'
import { openaiError } from './errors'

const NON_REASONING = /^(gpt-4o|gpt-4\.1|gpt-4-|gpt-4$|gpt-3\.5|chatgpt-4o|gpt-5-chat)/

/** OpenAI's 400 for an effort sent to a model that does not reason, or undefined when the model takes it or none is sent. */
export function checkReasoningEffort(model: unknown, effort: unknown, param: 'reasoning_effort' | 'reasoning.effort'): JsonReply | undefined {
	if (effort === undefined || effort === null || typeof model !== 'string' || !NON_REASONING.test(model)) return undefined
	return openaiError(400, `Unsupported parameter: '${param}' is not supported with this model.`, param, 'unsupported_parameter')
}

/** OpenAI's reasoning models, whose sampling is fixed. */
const FIXED_SAMPLING = /^(o\d|gpt-5(?!-chat)|codex-)/
const SAMPLING = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs'] as const

/**
 * OpenAI's 400 for a sampling setting sent to a reasoning model ("Unsupported parameter: 'temperature' is not
 * supported with this model.", https://platform.openai.com/docs/guides/reasoning#limitations), or undefined. The
 * default temperature and top_p (1) pass, as gpt-5 takes them.
 */
export function checkSampling(b: Record<string, unknown>): JsonReply | undefined {
	if (typeof b.model !== 'string' || !FIXED_SAMPLING.test(b.model)) return undefined
	const param = SAMPLING.find((k) => b[k] !== undefined && b[k] !== null && !((k === 'temperature' || k === 'top_p') && b[k] === 1) && b[k] !== false)
	return param && openaiError(400, `Unsupported parameter: '${param}' is not supported with this model.`, param, 'unsupported_parameter')
}

/**
 * OpenAI's 400 for `max_tokens` sent to a reasoning model in Chat Completions, which takes only
 * `max_completion_tokens` ("max_tokens … is not compatible with o-series models",
 * https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_tokens; gpt-5 answers the same), or undefined.
 */
export function checkMaxTokens(b: Record<string, unknown>): JsonReply | undefined {
	if (b.max_tokens === undefined || b.max_tokens === null || typeof b.model !== 'string' || !FIXED_SAMPLING.test(b.model)) return undefined
	return openaiError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter')
}
