/**
 * Which model family a Converse model id is, for what Converse has no field of its own and each family takes apart in
 * `additionalModelRequestFields` (reasoning, top-k, seed, penalties) or only some families take (prompt-caching
 * `cachePoint` blocks). The id is the model's own (`amazon.nova-pro-v1:0`), a cross-region inference profile naming it
 * (`us.amazon.nova-pro-v1:0`), an ARN ending in either, or, for an application inference profile's ARN, which names no
 * model, the foundation model the channel says it serves (`settings.base_models`, UpstreamOptions.foundationModel).
 * An id of no family here gets none of these fields: Bedrock refuses a field a model does not take with a 400.
 * Claude is none of them: its ids, and profiles mapped to it, go over InvokeModel (providers/bedrock.ts `forModel`).
 * @module
 */

export type ConverseFamily = 'nova' | 'nova2' | 'gpt-oss' | 'deepseek-r1' | 'cohere-command-r' | 'mistral-text' | 'other'

/** `anthropic.claude-…`, `us.amazon.nova-…`, `arn:…:foundation-model/meta.llama…`: the model part, geography prefix kept. */
const modelPart = (id: string) => id.replace(/^.*\//, '')

/**
 * The family of a Converse model id.
 * @example converseFamily('us.amazon.nova-pro-v1:0') === 'nova'
 * @example converseFamily('arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2', 'amazon.nova-lite-v1:0') === 'nova'
 */
export function converseFamily(model: string, foundation?: string): ConverseFamily {
	const id = modelPart(foundation ?? model)
	if (/(?:^|\.)amazon\.nova-2-/.test(id)) return 'nova2'
	if (/(?:^|\.)amazon\.nova-(?:micro|lite|pro|premier)-/.test(id)) return 'nova'
	if (/(?:^|\.)openai\.gpt-oss/.test(id)) return 'gpt-oss'
	if (/(?:^|\.)deepseek\.r1/.test(id)) return 'deepseek-r1'
	if (/(?:^|\.)cohere\.command-r/.test(id)) return 'cohere-command-r'
	// The text-completion models whose request takes `top_k` (model-parameters-mistral-text-completion.html); Mistral
	// Large 2 (2407) and later take a chat body without it.
	if (/(?:^|\.)mistral\.(?:mistral-7b-instruct|mixtral-8x7b-instruct|mistral-large-2402|mistral-small-2402)/.test(id)) return 'mistral-text'
	return 'other'
}

/**
 * Whether the family takes `cachePoint` blocks (in the system prompt and messages): Amazon Nova (Micro, Lite, Pro,
 * Premier), without tools or a TTL (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html,
 * "Supported models, Regions, and limits"). Any other model answers a cache point with a 400 ("You invoked an
 * unsupported model or your request did not allow prompt caching"), so it gets none.
 */
export const takesCachePoints = (family: ConverseFamily): boolean => family === 'nova'
