/** Management API: usage rows, newest first, cursor-paged by id. */
import { and, desc, eq, gte, lt, lte, type SQL } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import { assertAccount, isAdmin } from '../../../auth/principal'
import { microsToUsd } from '../../../billing/money'
import { badRequest } from '../../../core/errors'
import { usageLogs } from '../../../db/schema'
import type { Services } from '../../../services'
import { adminAuth } from '../auth'
import { assertRange, queryDate } from '../date-range'
import { ErrorBody, IdNumber, Int, iso } from '../schemas'

export const UsageRow = t.Object({
	id: Int(),
	created_at: t.String({ format: 'date-time' }),
	request_id: t.String(),
	account_id: Int(),
	token_id: t.Union([Int(), t.Null()]),
	model: t.String({ description: 'The model as the client named it' }),
	upstream_model: t.Union([t.String(), t.Null()]),
	endpoint: t.String(),
	channel: t.Union([t.String(), t.Null()]),
	channel_id: t.Union([Int(), t.Null()]),
	input_tokens: Int({ description: 'Prompt tokens, cached ones included' }),
	output_tokens: Int({ description: 'Completion tokens, reasoning included' }),
	cached_tokens: Int(),
	cache_write_tokens: Int(),
	reasoning_tokens: Int(),
	cost: t.Number({ description: 'USD charged' }),
	status: Int(),
	latency_ms: Int(),
	estimated: t.Boolean({ description: 'Token counts estimated locally (upstream gave none)' }),
	end_reason: t.String(),
	stream: t.Boolean(),
})

type Row = typeof usageLogs.$inferSelect

export const usageView = (r: Row) => ({
	id: r.id,
	created_at: iso(r.createdAt)!,
	request_id: r.requestId,
	account_id: r.accountId,
	token_id: r.tokenId,
	model: r.model,
	upstream_model: r.upstreamModel,
	endpoint: r.endpoint,
	channel: r.channel,
	channel_id: r.channelId,
	// Stored input excludes cache (canonical usage); the API reports the total prompt as vendors do.
	input_tokens: r.inputTokens + r.cachedTokens + r.cacheWriteTokens,
	output_tokens: r.outputTokens,
	cached_tokens: r.cachedTokens,
	cache_write_tokens: r.cacheWriteTokens,
	reasoning_tokens: r.reasoningTokens,
	cost: microsToUsd(r.cost),
	status: r.status,
	latency_ms: r.latencyMs,
	estimated: r.estimated,
	end_reason: r.endReason,
	stream: r.stream,
})

export const usageModule = (svc: Services) =>
	new Elysia({ prefix: '/api/usage', detail: { tags: ['Management'] } }).use(adminAuth(svc)).get('',
		async ({ query, principal }) => {
			const where: SQL[] = []
			let accountId = query.account_id
			if (!isAdmin(principal) && principal.kind === 'user') accountId = principal.accountId
			if (accountId !== undefined) {
				assertAccount(principal, accountId)
				where.push(eq(usageLogs.accountId, accountId))
			}
			if (query.token_id !== undefined) where.push(eq(usageLogs.tokenId, query.token_id))
			if (query.model) where.push(eq(usageLogs.model, query.model))
			const from = query.from ? queryDate(query.from, 'from') : undefined
			const to = query.to ? queryDate(query.to, 'to') : undefined
			if (from && to) assertRange(from, to)
			if (from) where.push(gte(usageLogs.createdAt, from))
			if (to) where.push(lte(usageLogs.createdAt, to))
			if (query.cursor) {
				const c = Number(query.cursor)
				if (!Number.isSafeInteger(c) || c < 1) throw badRequest('cursor: not a cursor from next_cursor', 'cursor')
				where.push(lt(usageLogs.id, c))
			}
			const limit = query.limit ?? 100
			await svc.ledger.flush()
			const rows = await svc.db.orm
				.select()
				.from(usageLogs)
				.where(where.length ? and(...where) : undefined)
				.orderBy(desc(usageLogs.id))
				.limit(limit + 1)
			const page = rows.slice(0, limit)
			return { data: page.map(usageView), next_cursor: rows.length > limit ? String(page[page.length - 1]!.id) : null }
		},
		{
			query: t.Object({
				account_id: t.Optional(IdNumber()),
				token_id: t.Optional(IdNumber()),
				model: t.Optional(t.String()),
				from: t.Optional(t.String({ description: 'ISO-8601, inclusive; not after `to` (400)' })),
				to: t.Optional(t.String({ description: 'ISO-8601, inclusive' })),
				limit: t.Optional(t.Numeric({ minimum: 1, maximum: 1000, multipleOf: 1 })),
				cursor: t.Optional(t.String()),
			}),
			response: { 200: t.Object({ data: t.Array(UsageRow), next_cursor: t.Union([t.String(), t.Null()]) }), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
			detail: { summary: 'List usage rows, newest first' },
		},
	)
