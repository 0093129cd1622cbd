/** Spend per day for the console's chart: one grouped query instead of shipping every usage row to the browser. */
import { and, eq, gte, lte, type SQL, sql } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { assertAccount, isAdmin } from '../../auth/principal'
import { microsToUsd } from '../../billing/money'
import { badRequest } from '../../core/errors'
import { usageLogs } from '../../db/schema'
import type { Services } from '../../services'
import { adminAuth } from '../admin/auth'
import { assertRange, queryDate } from '../admin/date-range'
import { ErrorBody, IdNumber } from '../admin/schemas'
import { SpendDay } from './schemas'

const DAY_MS = 86_400_000
const MAX_DAYS = 400

/** The time zone names the database can convert to (IANA, `pg_timezone_names`), read once per database. */
const zoneNames = new WeakMap<Services['db'], Promise<Set<string>>>()

function knownZones(db: Services['db']): Promise<Set<string>> {
	let names = zoneNames.get(db)
	if (!names) {
		names = db.sql.query<{ name: string }>('SELECT name FROM pg_timezone_names').then((rows) => new Set(rows.map((r) => r.name)))
		names.catch(() => zoneNames.delete(db))
		zoneNames.set(db, names)
	}
	return names
}

/**
 * The expression that turns a row's time into its calendar day. A time zone counts each day at its own offset, so a
 * range across a change of daylight saving time puts every request on the day the viewer's clock showed (the
 * console's table shows its time so); a fixed offset shifts the days on the other side of the change by an hour.
 * A zone the database does not know falls back to the offset sent with it (browsers may report `Etc/Unknown`).
 */
async function dayOf(db: Services['db'], zone: string | undefined, offsetMinutes: number | undefined): Promise<SQL<string>> {
	if (zone !== undefined && (await knownZones(db)).has(zone))
		return sql<string>`to_char(${usageLogs.createdAt} AT TIME ZONE ${zone}, 'YYYY-MM-DD')`
	if (zone !== undefined && offsetMinutes === undefined) throw badRequest(`time_zone: not a time zone the database knows: ${zone}`, 'time_zone')
	// The offset is a validated integer.
	const offset = sql.raw(String(Math.trunc(offsetMinutes ?? 0)))
	return sql<string>`to_char(date_trunc('day', (${usageLogs.createdAt} AT TIME ZONE 'UTC') + make_interval(mins => ${offset})), 'YYYY-MM-DD')`
}

export function spendRoutes(svc: Services) {
	return new Elysia({ prefix: '/api/console', detail: { tags: ['Console'] } }).use(adminAuth(svc)).get(
		'/spend',
		async ({ query, principal }) => {
			const where: SQL[] = []
			let accountId = query.account_id
			// A user is pinned to their own account whatever they ask for, as in GET /api/usage.
			if (!isAdmin(principal) && principal.kind === 'user') accountId = principal.accountId
			if (accountId !== undefined) {
				assertAccount(principal, accountId)
				where.push(eq(usageLogs.accountId, accountId))
			}
			const to = query.to ? queryDate(query.to, 'to') : new Date()
			const from = query.from ? queryDate(query.from, 'from') : new Date(to.getTime() - 30 * DAY_MS)
			assertRange(from, to, query.to ? '' : ', its default: now')
			if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) throw badRequest(`the range may span at most ${MAX_DAYS} days`, 'from')
			where.push(gte(usageLogs.createdAt, from), lte(usageLogs.createdAt, to))
			if (query.token_id !== undefined) where.push(eq(usageLogs.tokenId, query.token_id))
			if (query.model) where.push(eq(usageLogs.model, query.model))
			const day = await dayOf(svc.db, query.time_zone, query.offset_minutes)
			await svc.ledger.flush()
			const rows = await svc.db.orm
				.select({
					day,
					cost: sql<number>`coalesce(sum(${usageLogs.cost}), 0)::bigint`.mapWith(Number),
					// A refund (tasks/refund.ts) or a background settlement (responses/background.ts) is a second row of
					// its request, under the request's id with a suffix: money moved, not another request.
					requests: sql<number>`(count(*) filter (where ${usageLogs.requestId} not like '%:refund' and ${usageLogs.requestId} not like '%:settle'))::int`.mapWith(Number),
					input: sql<number>`coalesce(sum(${usageLogs.inputTokens} + ${usageLogs.cachedTokens} + ${usageLogs.cacheWriteTokens}), 0)::bigint`.mapWith(Number),
					output: sql<number>`coalesce(sum(${usageLogs.outputTokens}), 0)::bigint`.mapWith(Number),
				})
				.from(usageLogs)
				.where(and(...where))
				// By position: the zone is a bound parameter, so the day's expression would not match a second copy of it.
				.groupBy(sql`1`)
				.orderBy(sql`1`)
			return {
				from: from.toISOString(),
				to: to.toISOString(),
				data: rows.map((r) => ({ day: r.day, cost: microsToUsd(r.cost), requests: r.requests, input_tokens: r.input, output_tokens: r.output })),
			}
		},
		{
			query: t.Object({
				account_id: t.Optional(IdNumber()),
				token_id: t.Optional(IdNumber()),
				model: t.Optional(t.String()),
				from: t.Optional(t.String({ description: 'ISO-8601, inclusive; default 30 days before `to`; not after `to` (400)' })),
				to: t.Optional(t.String({ description: 'ISO-8601, inclusive; default now' })),
				offset_minutes: t.Optional(t.Numeric({ minimum: -840, maximum: 840, description: 'Minutes east of UTC that days are counted in' })),
				time_zone: t.Optional(
					t.String({
						minLength: 1,
						maxLength: 64,
						description: 'IANA time zone that days are counted in (each day at its own offset, across daylight saving time); wins over `offset_minutes`, which is used instead when the database does not know the zone',
					}),
				),
			}),
			response: {
				200: t.Object({ from: t.String({ format: 'date-time' }), to: t.String({ format: 'date-time' }), data: t.Array(SpendDay) }),
				400: ErrorBody,
				401: ErrorBody,
				404: ErrorBody,
			},
			detail: { summary: 'Spend per day (days without requests are omitted)' },
		},
	)
}
