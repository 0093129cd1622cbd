/** The public model list: every model an enabled channel serves, its prices in USD, and where to call it. */
import { microsToUsd } from '../../billing/money'
import type { Catalog } from '../../routing/catalog'
import type { PricedModel } from './schemas'
import { servedBy } from './endpoints'

const usd = (v: number | null | undefined) => (v === null || v === undefined ? null : microsToUsd(v))

/** Reads only the in-memory catalog, so the public page costs no database query. */
export function pricedModels(catalog: Catalog): PricedModel[] {
	return catalog.modelNames().map((name) => {
		const p = catalog.price(name)
		const types = [...new Set(catalog.channelsFor(name).map((c) => c.type))]
		return {
			name,
			input_per_mtok: p ? microsToUsd(p.inputPerMtok) : null,
			output_per_mtok: p ? microsToUsd(p.outputPerMtok) : null,
			cache_read_per_mtok: usd(p?.cacheReadPerMtok),
			cache_write_per_mtok: usd(p?.cacheWritePerMtok),
			per_request: usd(p?.perRequest),
			prices: Object.fromEntries(Object.entries(p?.prices ?? {}).map(([k, v]) => [k, microsToUsd(v)])),
			...servedBy(name, types),
		}
	})
}
