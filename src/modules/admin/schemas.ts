/** Shared schema pieces of the management API. */
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'

/** A plain JSON-Schema integer for responses (Elysia's `t.Integer` also accepts numeric strings, which is right for
 * params but makes generated clients type ids as `string | number`). */
export const Int = (o?: Parameters<typeof Type.Integer>[0]) => Type.Integer(o)

export const ErrorBody = t.Object({
	error: t.Object({ message: t.String(), type: t.String(), param: t.Optional(t.Union([t.String(), t.Null()])), code: t.Union([t.String(), t.Null()]) }),
})

/**
 * A row id in a path or query: a whole number within PostgreSQL's `integer`, since anything else fails the query
 * itself (`1.5`: "invalid input syntax for type integer", a 400 that named no field).
 */
export const IdNumber = () => t.Numeric({ minimum: 1, maximum: 2_147_483_647, multipleOf: 1 })

export const IdParams = t.Object({ id: IdNumber() })

/** USD amount at the API; stored as integer micro-USD. */
export const Usd = (opts: { minimum?: number; description?: string } = {}) => t.Number({ minimum: opts.minimum ?? 0, description: opts.description ?? 'USD' })

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null)
