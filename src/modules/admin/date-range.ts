/** The `from`/`to` query range of the management and console APIs: both inclusive ISO-8601 instants. */
import { badRequest } from '../../core/errors'
import { realDay } from './schemas'

/**
 * A day, or an instant to the minute, second or a fraction of one, in UTC (`Z`) or with an offset (none: the server's
 * zone, as `Date` reads it). `Date` alone also takes `12/01/2026` (read as 1 December) and other forms, silently.
 */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

/** An ISO-8601 query value as a Date; 400 naming `field` when it is not one, or names a day that does not exist. */
export function queryDate(s: string, field: string): Date {
	const d = ISO_8601.test(s) ? new Date(s) : undefined
	if (!d || Number.isNaN(d.getTime()) || !realDay(s)) throw badRequest(`${field}: not an ISO-8601 date`, field)
	return d
}

/**
 * Refuses a range whose start is after its end. It matches nothing, and an empty list would read as "no usage" to an
 * API caller (the console says so itself and never sends one), so it is a 400 that names both parameters.
 * @example assertRange(new Date('2026-03-02'), new Date('2026-03-01')) // throws "from (2026-03-02T…) is after to (2026-03-01T…)…"
 */
export function assertRange(from: Date, to: Date, toNote = ''): void {
	if (from.getTime() > to.getTime())
		throw badRequest(`from (${from.toISOString()}) is after to (${to.toISOString()}${toNote}): the range is empty; give a from on or before the to`, 'from')
}
