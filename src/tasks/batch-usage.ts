/**
 * What a batch's output file says it used: each completed line's `response.body.usage` (platform.openai.com/docs/api-reference/batch/request-output),
 * read as the line's endpoint reports it, summed per model with its cost at the batch prices recorded at creation. The
 * settlement (batch.ts) charges the costs and records the tokens, so a batch's usage rows show what its lines used, as
 * any other request's rows do.
 * @module
 */
import type { Price } from '../billing/pricing'
import { tokenCost } from '../billing/pricing'
import { type Usage, emptyUsage } from '../core/ir'
import { decodeUsage as chatUsage } from '../protocols/openai-chat/usage'
import { decodeUsage as responsesUsage } from '../protocols/openai-responses/usage'
import { jsonLines } from '../lib/json-lines'

type Obj = Record<string, unknown>

/** One model's lines of a batch: their summed token counts and what they cost at batch prices, micro-USD. */
export type ModelUsage = { usage: Usage; cost: number }

/** The batch terms the reading needs (tasks/batch.ts `BatchRecord`). */
export type BatchTerms = { endpoint: string; prices: Record<string, Price>; models?: Record<string, string> }

/**
 * The completed lines of an output file, per model (a line's model: `terms.models[custom_id]`, else `defaultModel`).
 * A line that did not succeed (an error line, not billed by OpenAI) or reports no usage adds nothing.
 * @example outputUsage('{"custom_id":"a","response":{"status_code":200,"body":{"usage":{"prompt_tokens":9,"completion_tokens":3}}}}', terms, 'gpt-4o-mini').get('gpt-4o-mini')?.usage.input === 9
 */
export function outputUsage(text: string, terms: BatchTerms, defaultModel: string): Map<string, ModelUsage> {
	const out = new Map<string, ModelUsage>()
	for (const { value } of jsonLines(text)) {
		const line = (value ?? {}) as Obj
		const response = line.response as Obj | null | undefined
		const body = response?.body as Obj | undefined
		if (!body || response?.status_code !== 200) continue
		const model = (typeof line.custom_id === 'string' ? terms.models?.[line.custom_id] : undefined) ?? defaultModel
		const price = terms.prices[model]
		const usage = terms.endpoint === '/v1/responses' ? responsesUsage(body.usage) : chatUsage(body.usage)
		if (price && usage) addLine(out, model, usage, price)
	}
	return out
}

/** Adds one completed line's usage to its model's sum, priced at `price` (the batch price recorded at creation). */
export function addLine(out: Map<string, ModelUsage>, model: string, usage: Usage, price: Price) {
	let sum = out.get(model)
	if (!sum) out.set(model, (sum = { usage: emptyUsage(), cost: 0 }))
	sum.usage.input += usage.input
	sum.usage.output += usage.output
	sum.usage.cacheRead += usage.cacheRead
	sum.usage.cacheWrite += usage.cacheWrite
	sum.usage.reasoning += usage.reasoning
	// Priced line by line: a line's tier, audio or cache split is its own.
	sum.cost += tokenCost(usage, price)
}

/** What all the lines cost together, micro-USD. */
export const totalCost = (byModel: Map<string, ModelUsage>): number => [...byModel.values()].reduce((n, m) => n + m.cost, 0)
