/**
 * The `model` label of the gateway's metrics: a name the operator listed (a price, or a channel's exact name or
 * `model_map` name), or one of the first UNLISTED_LABELS other names seen (the quick start's `gpt-*` channel with
 * ALLOW_UNPRICED_MODELS lists none), else one shared value. A glob serves any name that matches, and a label per name
 * a caller made up would grow /metrics and the process's memory without bound (each name ~35 series).
 * @module
 */
import type { Catalog } from '../routing/catalog'

/** The label of every model the operator did not list, once UNLISTED_LABELS such names have labels of their own. */
export const UNLISTED_MODEL = '(unlisted)'

export const UNLISTED_LABELS = 100

/**
 * @example metricModel({ catalog, metrics }, 'gpt-4o') === 'gpt-4o' // priced, or named by a channel
 * @example metricModel({ catalog, metrics }, 'gpt-made-up-101st') === '(unlisted)'
 */
export function metricModel(svc: { catalog: Catalog; metrics: { unlistedModels: Set<string> } }, model: string): string {
	if (svc.catalog.price(model)) return model
	const seen = svc.metrics.unlistedModels
	if (seen.has(model)) return model
	for (const c of svc.catalog.channels()) if (Object.hasOwn(c.modelMap, model) || c.models.includes(model)) return model
	if (seen.size >= UNLISTED_LABELS) return UNLISTED_MODEL
	seen.add(model)
	return model
}
