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

/**
 * The reasoning efforts each of OpenAI's reasoning models takes (its model page, developers.openai.com/api/docs/models;
 * another is a 400 "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are:
 * 'none', 'low', 'medium', and 'high'."): gpt-5, -mini and -nano minimal to high; gpt-5.1 none to high; gpt-5.2 and
 * gpt-5.4 none to xhigh; the o-series and codex models low to high (xhigh from gpt-5.1-codex-max on); gpt-5-pro high
 * only; gpt-5.1/5.2-chat-latest medium only.
 */
const EFFORTS: Array<[RegExp, readonly string[]]> = [
	[/^gpt-5\.\d+-chat/, ['medium']],
	[/^gpt-5-pro/, ['high']],
	[/^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$/, ['minimal', 'low', 'medium', 'high']],
	[/^gpt-5\.1(-\d{4}-\d{2}-\d{2})?$/, ['none', 'low', 'medium', 'high']],
	[/^gpt-5\.[24](-\d{4}-\d{2}-\d{2})?$/, ['none', 'low', 'medium', 'high', 'xhigh']],
	[/^(gpt-5\.1-codex-max|gpt-5\.2-codex)/, ['low', 'medium', 'high', 'xhigh']],
	[/^(o\d|gpt-5(\.1)?-codex|codex-mini)/, ['low', 'medium', 'high']],
]

/**
 * Whether OpenAI's model `model` takes sampling settings at reasoning effort `effort` (undefined: the model's default):
 * GPT-5.1 and later take `temperature`, `top_p` and `logprobs` at effort `none`, their default, and refuse them at any
 * other; earlier reasoning models at none (https://platform.openai.com/docs/guides/latest-model, "GPT-5.2 parameter
 * compatibility"). A model whose efforts include none is taken to default to it, as 5.1 and 5.2 do.
 * @example samplesAtEffort('gpt-5.2', undefined) === true
 * @example samplesAtEffort('gpt-5.2', 'low') === false
 * @example samplesAtEffort('gpt-5', 'minimal') === false
 */
export const samplesAtEffort = (model: string, effort: unknown): boolean => (effort ?? 'none') === 'none' && !!openaiEfforts(model)?.includes('none')

/**
 * The reasoning efforts an OpenAI model takes, undefined for a name this table does not know.
 * @example openaiEfforts('gpt-5.1') // ['none', 'low', 'medium', 'high']
 */
export const openaiEfforts = (model: string): readonly string[] | undefined => {
	const name = model.slice(model.lastIndexOf('/') + 1)
	return EFFORTS.find(([re]) => re.test(name))?.[1]
}
