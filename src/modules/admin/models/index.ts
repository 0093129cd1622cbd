/** Management API: the model price list. Prices are USD at the API and integer micro-USD inside. */
import { asc, eq } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { assertAdmin } from '../../../auth/principal'
import { microsToUsd } from '../../../billing/money'
import { NO_PRICE_MESSAGE, UNIT_PRICE_NAMES, namesPrice } from '../../../billing/unit-prices'
import { PriceError, priceColumns } from '../../../config/config-apply'
import { ModelEntry, ModelEntryUpdate } from '../../../config/gateway-file'
import { GatewayError, badRequest, notFound } from '../../../core/errors'
import { models } from '../../../db/schema'
import type { Services } from '../../../services'
import { adminAuth } from '../auth'
import { renaming } from '../name-taken'
import { ErrorBody, IdParams, Int, iso } from '../schemas'

const Nullable = t.Union([t.Number(), t.Null()])

export const ModelPrice = t.Object({
	id: Int(),
	name: t.String(),
	input_per_mtok: t.Number({ description: 'USD per million input tokens' }),
	output_per_mtok: t.Number({ description: 'USD per million output tokens (reasoning included)' }),
	cache_read_per_mtok: Nullable,
	cache_write_per_mtok: Nullable,
	per_request: Nullable,
	max_output_tokens: t.Union([Int(), t.Null()], { description: 'Largest output cap a request may name (more is refused with 400); null: the vendor-documented one of a well-known model, if any' }),
	context_window: t.Union([Int(), t.Null()], { description: 'Tokens of input the model reads, shown in model lists; null: the vendor-documented one of a well-known model, if any' }),
	prices: t.Record(t.String(), t.Number(), { description: `Unit prices in USD: ${UNIT_PRICE_NAMES}` }),
	status: t.String(),
	source: t.String(),
	updated_at: t.String({ format: 'date-time' }),
}, { additionalProperties: false })

type Row = typeof models.$inferSelect
const usd = (v: number | null) => (v === null ? null : microsToUsd(v))

export const modelView = (r: Row) => ({
	id: r.id,
	name: r.name,
	input_per_mtok: microsToUsd(r.inputPerMtok),
	output_per_mtok: microsToUsd(r.outputPerMtok),
	cache_read_per_mtok: usd(r.cacheReadPerMtok),
	cache_write_per_mtok: usd(r.cacheWritePerMtok),
	per_request: usd(r.perRequest),
	max_output_tokens: r.maxOutputTokens,
	context_window: r.contextWindow,
	prices: Object.fromEntries(Object.entries(r.prices ?? {}).map(([k, v]) => [k, microsToUsd(v)])),
	status: r.status,
	source: r.source,
	updated_at: iso(r.updatedAt)!,
})

const columns = (body: ModelEntry) => {
	try {
		return priceColumns(body)
	} catch (e) {
		if (e instanceof PriceError) throw badRequest(e.message, e.field)
		throw e
	}
}

export const modelsModule = (svc: Services) => {
	const find = async (id: number) => {
		const [row] = await svc.db.orm.select().from(models).where(eq(models.id, id)).limit(1)
		if (!row) throw notFound(`model ${id} not found`)
		return row
	}
	return new Elysia({ prefix: '/api/models', detail: { tags: ['Management'] } })
		.use(adminAuth(svc))
		.get('', async () => ({ data: (await svc.db.orm.select().from(models).orderBy(asc(models.name))).map(modelView) }), {
			response: { 200: t.Object({ data: t.Array(ModelPrice) }), 401: ErrorBody },
			detail: { summary: 'List model prices' },
		})
		.post('',
			async ({ body, principal, status }) => {
				assertAdmin(principal)
				if (!namesPrice(body)) throw badRequest(NO_PRICE_MESSAGE, 'input_per_mtok')
				const [row] = await svc.db.orm
					.insert(models)
					.values({ name: body.name, ...columns(body), source: 'api' })
					.onConflictDoNothing()
					.returning()
				if (!row) throw new GatewayError('invalid_request', `a model named "${body.name}" exists`, { param: 'name', status: 409 })
				await svc.catalog.changed()
				return status(201, modelView(row))
			},
			{ body: ModelEntry, response: { 201: ModelPrice, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 409: ErrorBody }, detail: { summary: 'Add a model price', description: 'At least one price is required (0 prices a model free): an entry with none is 400 naming input_per_mtok.' } },
		)
		.patch(
			'/:id',
			async ({ params, body, principal }) => {
				assertAdmin(principal)
				const cur = await find(params.id)
				const name = body.name ?? cur.name
				const set = { ...columns({ ...merged(pricesOf(cur), body), name } as ModelEntry), name, updatedAt: new Date() } as Partial<typeof models.$inferInsert>
				if (body.enabled !== undefined) set.status = body.enabled ? 'enabled' : 'disabled'
				const [row] = await renaming('model', body.name, () => svc.db.orm.update(models).set(set).where(eq(models.id, params.id)).returning())
				await svc.catalog.changed()
				return modelView(row!)
			},
			{ params: IdParams, body: ModelEntryUpdate, response: { 200: ModelPrice, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody }, detail: { summary: 'Update a model price', description: 'Fields left out keep their stored value. null removes a price (input and output then cost 0), max_output_tokens or context_window.' } },
		)
		.delete(
			'/:id',
			async ({ params, principal }) => {
				assertAdmin(principal)
				await find(params.id)
				const [row] = await svc.db.orm.update(models).set({ status: 'disabled', updatedAt: new Date() }).where(eq(models.id, params.id)).returning()
				await svc.catalog.changed()
				return modelView(row!)
			},
			{ params: IdParams, response: { 200: ModelPrice, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }, detail: { summary: 'Disable a model (kept for old usage rows)' } },
		)
}

/** A PATCH body over the stored prices: a field left out is kept, one set to null is removed. */
function merged(stored: Record<string, number | undefined>, body: ModelEntryUpdate): Record<string, unknown> {
	const out: Record<string, unknown> = { ...stored }
	for (const [k, v] of Object.entries(body)) {
		if (v === null) delete out[k]
		else if (v !== undefined) out[k] = v
	}
	return out
}

/** The stored prices of a row as a config entry in USD, so PATCH can merge a partial body over them. */
function pricesOf(r: Row): Record<string, number | undefined> {
	const v = modelView(r)
	return {
		input_per_mtok: v.input_per_mtok,
		output_per_mtok: v.output_per_mtok,
		cache_read_per_mtok: v.cache_read_per_mtok ?? undefined,
		cache_write_per_mtok: v.cache_write_per_mtok ?? undefined,
		per_request: v.per_request ?? undefined,
		max_output_tokens: v.max_output_tokens ?? undefined,
		context_window: v.context_window ?? undefined,
		...v.prices,
	}
}
