/**
 * Reasoning effort ⇄ thinking budget. OpenAI speaks in efforts, Anthropic and Gemini in token budgets.
 * The table follows the common convention (LiteLLM / OpenRouter): low 1024, medium 2048, high 4096 tokens;
 * Anthropic requires budget_tokens ≥ 1024 (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking).
 * @module
 */
import type { ReasoningEffort } from './ir'

const BUDGET: Record<ReasoningEffort, number> = { minimal: 1024, low: 1024, medium: 2048, high: 4096 }

/** @example effortToBudget('medium') === 2048 */
export const effortToBudget = (effort: ReasoningEffort): number => BUDGET[effort]

/** @example budgetToEffort(3000) === 'high' */
export function budgetToEffort(budget: number): ReasoningEffort {
	if (budget <= 1024) return 'low'
	if (budget <= 2048) return 'medium'
	return 'high'
}
