/**
 * The public model list: every model an enabled channel serves that can be called, its prices in USD, and where to
 * call it. As in GET /v1/models, a model without an enabled price is left out unless ALLOW_UNPRICED_MODELS serves it
 * free: listed with no prices it read as free, and calls got 403 model_not_priced.
 */
import { microsToUsd } from '../../billing/money'
import type { Catalog } from '../../routing/catalog'
import type { PricedModel } from './schemas'
import { servedThrough } from './endpoints'

const usd = (v: number | null | undefined) => (v === null || v === undefined ? null : microsToUsd(v))

/** Reads only the in-memory catalog, so the public page costs no database query. */
export function pricedModels(catalog: Catalog, allowUnpriced: boolean): PricedModel[] {
	const names = catalog.modelNames().filter((name) => allowUnpriced || catalog.price(name) !== undefined)
	return names.map((name) => {
		const p = catalog.price(name)
		return {
			name,
			input_per_mtok: p ? microsToUsd(p.inputPerMtok) : null,
			output_per_mtok: p ? microsToUsd(p.outputPerMtok) : null,
			cache_read_per_mtok: usd(p?.cacheReadPerMtok),
			cache_write_per_mtok: usd(p?.cacheWritePerMtok),
			per_request: usd(p?.perRequest),
			prices: Object.fromEntries(Object.entries(p?.prices ?? {}).map(([k, v]) => [k, microsToUsd(v)])),
			...servedThrough(name, catalog.channelsFor(name)),
		}
	})
}
