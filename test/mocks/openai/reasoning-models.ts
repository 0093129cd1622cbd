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

/**
 * The efforts OpenAI's reasoning models take (each model's page, developers.openai.com/api/docs/models): gpt-5, -mini,
 * -nano minimal to high; gpt-5.1 none to high; gpt-5.2 none to xhigh; the o-series low to high; gpt-5.x-chat-latest
 * medium only. Other names take any.
 */
const EFFORTS: Array<[RegExp, string[]]> = [
	[/^gpt-5\.\d+-chat/, ['medium']],
	[/^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$/, ['minimal', 'low', 'medium', 'high']],
	[/^gpt-5\.1(-\d{4}-\d{2}-\d{2})?$/, ['none', 'low', 'medium', 'high']],
	[/^gpt-5\.2(-\d{4}-\d{2}-\d{2})?$/, ['none', 'low', 'medium', 'high', 'xhigh']],
	[/^o\d/, ['low', 'medium', 'high']],
]

/** 'a', 'b', and 'c': OpenAI's list of supported values. */
const listed = (values: string[]) => (values.length === 1 ? `'${values[0]}'` : `${values.slice(0, -1).map((v) => `'${v}'`).join(', ')}, and '${values.at(-1)}'`)

/**
 * OpenAI's 400 for an effort sent to a model that does not reason, or one the model does not take ("Unsupported value:
 * 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'.", as
 * reported in openai/openai-agents-python#2089), or undefined when the model takes it or none is sent.
 */
export function checkReasoningEffort(model: unknown, effort: unknown, param: 'reasoning_effort' | 'reasoning.effort'): JsonReply | undefined {
	if (effort === undefined || effort === null || typeof model !== 'string') return undefined
	if (NON_REASONING.test(model)) return openaiError(400, `Unsupported parameter: '${param}' is not supported with this model.`, param, 'unsupported_parameter')
	const takes = EFFORTS.find(([re]) => re.test(model))?.[1]
	if (takes && !takes.includes(String(effort)))
		return openaiError(400, `Unsupported value: '${String(effort)}' is not supported with the '${model}' model. Supported values are: ${listed(takes)}.`, param, 'unsupported_value')
}

/**
 * OpenAI's 400 for `max_tokens` sent to a reasoning model, which takes only `max_completion_tokens` ("This value is
 * now deprecated in favor of max_completion_tokens, and is not compatible with o-series models":
 * https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_tokens; gpt-5 answers the same), or
 * undefined.
 */
export function checkMaxTokens(b: Record<string, unknown>): JsonReply | undefined {
	if (b.max_tokens === undefined || b.max_tokens === null || typeof b.model !== 'string' || !FIXED_SAMPLING.test(b.model)) return undefined
	return openaiError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter')
}

/** OpenAI's reasoning models, whose sampling is fixed. */
const FIXED_SAMPLING = /^(o\d|gpt-5(?!-chat)|codex-)/
const SAMPLING = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs'] as const

/** What GPT-5.1 and later take at effort none, their default (https://platform.openai.com/docs/guides/latest-model). */
const AT_EFFORT_NONE = new Set(['temperature', 'top_p', 'logprobs', 'top_logprobs'])

/**
 * OpenAI's 400 for a sampling setting sent to a reasoning model ("Unsupported parameter: 'temperature' is not
 * supported with this model.", https://platform.openai.com/docs/guides/reasoning#limitations), or undefined. The
 * default temperature and top_p (1) pass, as gpt-5 takes them; a model with effort none (GPT-5.1 and later) takes
 * temperature, top_p and logprobs at that effort, its default, and refuses them at any other.
 */
export function checkSampling(b: Record<string, unknown>, effort: unknown): JsonReply | undefined {
	if (typeof b.model !== 'string' || !FIXED_SAMPLING.test(b.model)) return undefined
	const model = b.model
	const atNone = (effort ?? 'none') === 'none' && !!EFFORTS.find(([re]) => re.test(model))?.[1].includes('none')
	const param = SAMPLING.find(
		(k) => b[k] !== undefined && b[k] !== null && !((k === 'temperature' || k === 'top_p') && b[k] === 1) && b[k] !== false && !(atNone && AT_EFFORT_NONE.has(k)),
	)
	return param && openaiError(400, `Unsupported parameter: '${param}' is not supported with this model.`, param, 'unsupported_parameter')
}

/** OpenAI's own chat models (gpt-oss is served by others, whose APIs take OpenRouter's fields). */
const OPENAI_OWN = /^(gpt-(?!oss)|chatgpt-|o\d|codex-)/

/**
 * OpenAI's 400 for OpenRouter's `reasoning` object in a Chat Completions body (Chat Completions takes `reasoning_effort`;
 * an argument it does not know is "Unrecognized request argument supplied: reasoning", no param or code), or undefined.
 * Only OpenAI's own model names: the mock also stands for OpenAI-compatible vendors, some of which take the object.
 */
export function checkReasoningObject(b: Record<string, unknown>): JsonReply | undefined {
	if (b.reasoning === undefined || typeof b.model !== 'string' || !OPENAI_OWN.test(b.model)) return undefined
	return openaiError(400, 'Unrecognized request argument supplied: reasoning')
}
