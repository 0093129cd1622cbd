/**
 * `additionalModelRequestFields` by model family (family.ts): what Converse has no field of its own for, each family
 * in its native request's words, only where AWS documents that family taking it; anything else a client set is left
 * out, as Converse would refuse it.
 * - Reasoning: Amazon Nova 2 `reasoningConfig: {type: "enabled", maxReasoningEffort}`
 *   (https://docs.aws.amazon.com/nova/latest/nova2-userguide/extended-thinking.html); OpenAI gpt-oss
 *   `reasoning_effort`. DeepSeek-R1 always reasons and takes no setting. Qwen3 and Mistral models have no documented
 *   reasoning setting on Bedrock: none. (Claude's thinking goes in Anthropic's own body, over InvokeModel.)
 * - Sampling: top-k as Nova's `inferenceConfig.topK` (https://docs.aws.amazon.com/nova/latest/nova2-userguide/core-inference.html),
 *   the Mistral text models' `top_k` (model-parameters-mistral-text-completion.html); Cohere Command R's `k`, `seed`, `frequency_penalty` and
 *   `presence_penalty` (model-parameters-cohere-command-r-plus.html; the penalties from 0 to 1 there). Llama, DeepSeek,
 *   gpt-oss, Qwen and the others document none of them.
 * @module
 */
import type { ChatRequest, Reasoning, ReasoningEffort } from '../../core/ir'
import { budgetToEffort } from '../../core/reasoning'
import type { ConverseFamily } from './family'

/** Converse's three effort levels; the canonical `minimal` is its lowest. */
function effortOf(r: Reasoning): Exclude<ReasoningEffort, 'minimal'> {
	const e = r.effort ?? (r.budgetTokens !== undefined ? budgetToEffort(r.budgetTokens) : 'medium')
	return e === 'minimal' ? 'low' : e
}

/**
 * Reasoning fields of the families that take one in `additionalModelRequestFields`.
 * @example reasoningFields('nova2', { enabled: true, effort: 'high' }) // { reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' } }
 */
export function reasoningFields(family: ConverseFamily, r: Reasoning | undefined): Record<string, unknown> | undefined {
	if (!r?.enabled) return undefined
	if (family === 'nova2') return { reasoningConfig: { type: 'enabled', maxReasoningEffort: effortOf(r) } }
	if (family === 'gpt-oss') return { reasoning_effort: effortOf(r) }
	return undefined
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

/**
 * The sampling settings Converse has no field for, as the family takes them.
 * @example samplingFields('cohere-command-r', { topK: 40, seed: 7 }) // { k: 40, seed: 7 }
 */
export function samplingFields(family: ConverseFamily, req: Pick<ChatRequest, 'topK' | 'seed' | 'presencePenalty' | 'frequencyPenalty'>): Record<string, unknown> | undefined {
	const out: Record<string, unknown> = {}
	if (family === 'nova' || family === 'nova2') {
		if (req.topK !== undefined) out.inferenceConfig = { topK: req.topK }
	} else if (family === 'mistral-text') {
		if (req.topK !== undefined) out.top_k = req.topK
	} else if (family === 'cohere-command-r') {
		// "k … Minimum 0, maximum 500"; the penalties "Minimum 0, maximum 1" (OpenAI's run from -2 to 2).
		if (req.topK !== undefined) out.k = clamp(req.topK, 0, 500)
		if (req.seed !== undefined) out.seed = req.seed
		if (req.frequencyPenalty !== undefined) out.frequency_penalty = clamp(req.frequencyPenalty, 0, 1)
		if (req.presencePenalty !== undefined) out.presence_penalty = clamp(req.presencePenalty, 0, 1)
	}
	return Object.keys(out).length ? out : undefined
}
