/**
 * Which of OpenAI's models take a reasoning effort (Chat Completions `reasoning_effort`, Responses `reasoning.effort`).
 * Only reasoning models do (https://platform.openai.com/docs/guides/reasoning: the o-series, the gpt-5 family, codex
 * models; gpt-oss on OpenAI-compatible hosts); the others answer 400 "Unsupported parameter: 'reasoning_effort' is
 * not supported with this model." A name is looked up without a router's vendor prefix (`openai/gpt-4o`).
 * @module
 */

/** OpenAI's chat models that do not reason, dated snapshots and previews included. */
const NON_REASONING = /^(gpt-4o|gpt-4\.1|gpt-4-|gpt-4$|gpt-3\.5|chatgpt-4o|gpt-5-chat)/

/** OpenAI's reasoning models, and the open-weight gpt-oss. */
const REASONING = /^(o\d|gpt-5|codex-|gpt-oss-)/

/**
 * Whether the model takes a reasoning effort: false for an OpenAI model known not to reason, true for a known
 * reasoning one, undefined for a name this table does not know (another vendor's model on a compatible API).
 * @example takesReasoningEffort('gpt-4o-mini') === false
 * @example takesReasoningEffort('o4-mini') === true
 * @example takesReasoningEffort('deepseek-reasoner') === undefined
 */
export function takesReasoningEffort(model: string): boolean | undefined {
	const name = model.slice(model.lastIndexOf('/') + 1)
	if (NON_REASONING.test(name)) return false
	if (REASONING.test(name)) return true
	return undefined
}

/** OpenAI's own reasoning models, whose sampling is fixed (gpt-oss, served by others, takes sampling settings). */
const FIXED_SAMPLING = /^(o\d|gpt-5(?!-chat)|codex-)/

/**
 * Whether the model refuses sampling settings: OpenAI's reasoning models answer `temperature`, `top_p`, the penalties
 * and `logprobs` with 400 "Unsupported parameter: 'temperature' is not supported with this model." (o-series; gpt-5
 * takes only the default, 1) (https://platform.openai.com/docs/guides/reasoning#limitations).
 * @example fixedSampling('o4-mini') === true
 * @example fixedSampling('gpt-5-chat-latest') === false
 */
export const fixedSampling = (model: string): boolean => FIXED_SAMPLING.test(model.slice(model.lastIndexOf('/') + 1))
