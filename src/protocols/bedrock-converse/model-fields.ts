/**
 * `additionalModelRequestFields` by model family (family.ts): what Converse has no field of its own for, each family
 * in its native request's words, only where AWS documents that family taking it; anything else a client set is left
 * out, as Converse would refuse it.
 * - Reasoning: Amazon Nova 2 `reasoningConfig: {type: "enabled", maxReasoningEffort}`
 *   (https://docs.aws.amazon.com/nova/latest/nova2-userguide/extended-thinking.html); OpenAI gpt-oss
 *   `reasoning_effort`; Claude `thinking` (https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html):
 *   `{type: "enabled", budget_tokens}` with a budget of at least 1024 below the output cap, or, for Claude Opus 4.7
 *   and later (routing/claude-models.ts), `{type: "adaptive"}` with `output_config.effort`. DeepSeek-R1 always
 *   reasons and takes no setting. Qwen3 and Mistral models have no documented reasoning setting on Bedrock: none.
 * - Sampling: top-k as Nova's `inferenceConfig.topK` (https://docs.aws.amazon.com/nova/latest/nova2-userguide/core-inference.html),
 *   Claude's and the Mistral text models' `top_k` (model-parameters-anthropic-claude-messages-request-response.html,
 *   model-parameters-mistral-text-completion.html); Cohere Command R's `k`, `seed`, `frequency_penalty` and
 *   `presence_penalty` (model-parameters-cohere-command-r-plus.html; the penalties from 0 to 1 there). Llama, DeepSeek,
 *   gpt-oss, Qwen and the others document none of them.
 * @module
 */
import type { ChatRequest, Reasoning, ReasoningEffort } from '../../core/ir'
import { budgetToEffort, defaultOutputCap, fitThinkingBudget, thinkingBudget } from '../../core/reasoning'
import { claudeThinking } from '../../routing/claude-models'
import type { ConverseFamily } from './family'

/** Claude's smallest thinking budget ("budget_tokens must be ≥ 1024"). */
const MIN_THINKING_BUDGET = 1024

/** Converse's three effort levels; the canonical `minimal` is its lowest. */
function effortOf(r: Reasoning): Exclude<ReasoningEffort, 'minimal'> {
	const e = r.effort ?? (r.budgetTokens !== undefined ? budgetToEffort(r.budgetTokens) : 'medium')
	return e === 'minimal' ? 'low' : e
}

/** Claude's thinking as asked, with the output cap it needs; undefined when off or when the cap leaves no room. */
export type ClaudeThinkingFields = { thinking: Record<string, unknown>; outputConfig?: { effort: string }; maxTokens: number }

/**
 * Claude's thinking for `req` under its cap (a default cap above the budget when the caller gave none), or undefined
 * when thinking is off, does not fit, or cannot be asked for this turn.
 */
export function claudeThinkingFields(req: ChatRequest, foundation: string, canThink: boolean): ClaudeThinkingFields | undefined {
	const r = req.reasoning
	if (!r?.enabled || !canThink) return undefined
	const maxTokens = req.maxTokens ?? defaultOutputCap(r)
	if (claudeThinking(foundation) !== 'budget') return { thinking: { type: 'adaptive' }, outputConfig: { effort: effortOf(r) }, maxTokens }
	const budget = fitThinkingBudget(thinkingBudget(r, 2048)!, r.budgetTokens !== undefined, maxTokens, MIN_THINKING_BUDGET)
	return budget === undefined ? undefined : { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens }
}

/**
 * Reasoning fields of the families that take one in `additionalModelRequestFields`, Claude's apart (claudeThinkingFields).
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
 * The sampling settings Converse has no field for, as the family takes them; `thinking`: Claude is thinking, which
 * refuses top-k (extended-thinking docs).
 * @example samplingFields('cohere-command-r', { topK: 40, seed: 7 }, false) // { k: 40, seed: 7 }
 */
export function samplingFields(family: ConverseFamily, req: Pick<ChatRequest, 'topK' | 'seed' | 'presencePenalty' | 'frequencyPenalty'>, thinking: boolean): Record<string, unknown> | undefined {
	const out: Record<string, unknown> = {}
	if (family === 'nova' || family === 'nova2') {
		if (req.topK !== undefined) out.inferenceConfig = { topK: req.topK }
	} else if (family === 'claude' || family === 'mistral-text') {
		if (req.topK !== undefined && !thinking) out.top_k = req.topK
	} else if (family === 'cohere-command-r') {
		// "k … Minimum 0, maximum 500"; the penalties "Minimum 0, maximum 1" (OpenAI's run from -2 to 2).
		if (req.topK !== undefined) out.k = clamp(req.topK, 0, 500)
		if (req.seed !== undefined) out.seed = req.seed
		if (req.frequencyPenalty !== undefined) out.frequency_penalty = clamp(req.frequencyPenalty, 0, 1)
		if (req.presencePenalty !== undefined) out.presence_penalty = clamp(req.presencePenalty, 0, 1)
	}
	return Object.keys(out).length ? out : undefined
}
