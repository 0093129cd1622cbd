/**
 * Reasoning effort ⇄ thinking budget, and how a thinking budget fits under an output cap.
 * OpenAI speaks in efforts, Anthropic and Gemini in token budgets.
 * The table follows the common convention (LiteLLM / OpenRouter): low 1024, medium 2048, high 4096 tokens;
 * Anthropic requires budget_tokens ≥ 1024 (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking).
 *
 * The cap/budget rule (every converted request; the relay reserves with the same numbers, src/relay/budget.ts):
 * 1. An output cap is a total. OpenAI's `max_completion_tokens` is "an upper bound for the number of tokens that can
 *    be generated for a completion, including visible output tokens and reasoning tokens"; Anthropic's `max_tokens`
 *    must exceed `budget_tokens` and bounds thinking plus answer; Gemini counts thought tokens against
 *    `maxOutputTokens` (a budget at or above it gives an empty answer with MAX_TOKENS, googleapis/python-genai#782).
 *    So the gateway never raises a caller's cap to make room for thinking: the caller is never billed for more
 *    output than it capped.
 * 2. Under a cap, the budget asked for (raised to the vendor's minimum) is kept when it leaves room for an answer:
 *    a budget the caller gave when it is below the cap (the caller chose that split, which Anthropic itself allows),
 *    one the gateway derived from an effort when it takes at most half of the cap.
 * 3. Otherwise thinking gets half of the cap, and the answer the other half. When half the cap is below the vendor's
 *    minimum budget, thinking is turned off rather than the cap raised.
 * 4. No cap from the caller: the cap assumed (and sent where the vendor requires one, Anthropic) is a default answer's
 *    room above the budget (`defaultOutputCap`), so thinking does not eat the answer's room.
 * @module
 */
import type { Reasoning, ReasoningEffort } from './ir'

const BUDGET: Record<ReasoningEffort, number> = { minimal: 1024, low: 1024, medium: 2048, high: 4096 }

/** The output room an answer gets when the caller set no cap (beyond the thinking budget, when thinking is on). */
export const DEFAULT_ANSWER_TOKENS = 4096

/**
 * An OpenAI effort name → the canonical effort: the four it has, and the nearest (`high`) for the names above it that
 * newer OpenAI models take (`xhigh`, `max`: the `openai` SDK's `ReasoningEffort`); undefined for any other name.
 * @example openaiEffort('max') === 'high'
 */
export const openaiEffort = (name: string): ReasoningEffort | undefined => OPENAI_EFFORT[name]

const OPENAI_EFFORT: Record<string, ReasoningEffort> = { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' }

/** @example effortToBudget('medium') === 2048 */
export const effortToBudget = (effort: ReasoningEffort): number => BUDGET[effort]

/** @example budgetToEffort(3000) === 'high' */
export function budgetToEffort(budget: number): ReasoningEffort {
	if (budget <= 1024) return 'low'
	if (budget <= 2048) return 'medium'
	return 'high'
}

/**
 * The thinking budget a request asks for: the caller's own, else its effort's, else `fallback` (a vendor that needs
 * a number when the caller only said "think"); undefined when thinking is off or no budget applies (dynamic).
 * @example thinkingBudget({ enabled: true, effort: 'high' }) === 4096
 */
export function thinkingBudget(r: Reasoning | undefined, fallback?: number): number | undefined {
	if (!r?.enabled) return undefined
	return r.budgetTokens ?? (r.effort ? effortToBudget(r.effort) : fallback)
}

/**
 * The output cap for a caller that set none (rule 4): room for a default answer above the thinking budget.
 * @example defaultOutputCap({ enabled: true, effort: 'high' }) === 8192
 */
export const defaultOutputCap = (r?: Reasoning): number => DEFAULT_ANSWER_TOKENS + (thinkingBudget(r) ?? 0)

/**
 * The budget to send under `cap` (rules 2 and 3), or undefined when thinking must be turned off because the vendor's
 * minimum does not fit. Without a cap the budget asked for is kept (raised to the minimum).
 * @param want the budget asked for
 * @param explicit the caller gave `want` itself (else the gateway derived it from an effort)
 * @param min the vendor's smallest budget
 * @example fitThinkingBudget(4096, false, 1000, 1024) === undefined // thinking off, the cap stays 1000
 * @example fitThinkingBudget(4096, false, 1000, 1) === 500
 * @example fitThinkingBudget(31999, true, 32000, 1024) === 31999
 */
export function fitThinkingBudget(want: number, explicit: boolean, cap: number | undefined, min: number): number | undefined {
	const budget = Math.max(min, Math.floor(want))
	if (cap === undefined) return budget
	const limit = explicit ? cap - 1 : Math.floor(cap / 2)
	if (budget <= limit) return budget
	const half = Math.floor(cap / 2)
	return half >= min ? half : undefined
}

/** Reasoning efforts by name (OpenAI's), least first. */
const EFFORT_ORDER = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']

/**
 * The effort to send a model that takes only `takes`: the one asked when it does, else the nearest above it (none and
 * minimal become its least), else its most.
 * @example nearestEffort('minimal', ['none', 'low', 'medium', 'high']) === 'low'
 * @example nearestEffort('high', ['medium']) === 'medium'
 * @example nearestEffort('max', ['low', 'medium', 'high']) === 'high'
 */
export function nearestEffort(asked: string, takes: readonly string[] | undefined): string {
	if (!takes?.length || takes.includes(asked)) return asked
	const at = EFFORT_ORDER.indexOf(asked)
	return takes.find((e) => EFFORT_ORDER.indexOf(e) > at) ?? takes[takes.length - 1]
}
