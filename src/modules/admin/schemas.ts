/** Shared schema pieces of the management API. */
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'

/** A plain JSON-Schema integer for responses (Elysia's `t.Integer` also accepts numeric strings, which is right for
 * params but makes generated clients type ids as `string | number`). */
export const Int = (o?: Parameters<typeof Type.Integer>[0]) => Type.Integer(o)

export const ErrorBody = t.Object({
	error: t.Object({ message: t.String(), type: t.String(), param: t.Optional(t.Union([t.String(), t.Null()])), code: t.Union([t.String(), t.Null()]) }),
})

/** A row id in a path or query: bounded to PostgreSQL's `integer`, since a larger one fails the query itself (a 500). */
export const IdNumber = () => t.Numeric({ minimum: 1, maximum: 2_147_483_647 })

export const IdParams = t.Object({ id: IdNumber() })

/** USD amount at the API; stored as integer micro-USD. */
export const Usd = (opts: { minimum?: number; description?: string } = {}) => t.Number({ minimum: opts.minimum ?? 0, description: opts.description ?? 'USD' })

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null)
