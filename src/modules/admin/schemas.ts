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

/**
 * The name of a key, an account or a channel: 1–200 characters, not all of them spaces (such a name shows as nothing in
 * the console's lists and pickers, whose edit dialog then refuses to save the key unrenamed).
 */
export const Name = (o: { description?: string } = {}) =>
	t.String({ minLength: 1, maxLength: 200, pattern: '[^\\s\\u200b-\\u200d\\u2060\\ufeff]', description: o.description ? `${o.description}, with a character other than spaces` : 'a name with a character other than spaces' })

/** USD amount at the API; stored as integer micro-USD. */
export const Usd = (opts: { minimum?: number; description?: string } = {}) => t.Number({ minimum: opts.minimum ?? 0, description: opts.description ?? 'USD' })

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null)

/**
 * Whether the calendar day written at the start of an ISO-8601 value exists. Bun's Date rolls an impossible day over
 * (2027-02-30 parses as March 2nd), so a key would expire, or a usage range begin, on a day nobody asked for.
 * @example realDay('2027-02-28T12:00:00Z') === true; realDay('2027-02-30T00:00:00Z') === false
 */
export function realDay(iso: string): boolean {
	const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(iso)
	if (!m) return true
	const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
	const day = new Date(Date.UTC(y, mo - 1, d))
	return day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d
}
