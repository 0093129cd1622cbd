/** Management API: API keys (`sk-…`). */
import { Elysia, t } from 'elysia'
import { assertAccount } from '../../../auth/principal'
import { microsToUsd, usdToMicros } from '../../../billing/money'
import { badRequest } from '../../../core/errors'
import type { Services } from '../../../services'
import { adminAuth } from '../auth'
import { ErrorBody, IdNumber, IdParams, Int, iso, Name, realDay } from '../schemas'
import { MAX_TOKEN_PAGE, type TokenInput, type TokenRow, createToken, deleteToken, getToken, listTokens, revealToken, updateToken } from './service'

const Token = t.Object({
	id: Int(),
	account_id: Int(),
	name: t.String(),
	key_hint: t.String({ description: 'Masked key, e.g. sk-AbCd…wxyz' }),
	expires_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
	spend_limit: t.Union([t.Number(), t.Null()], { description: 'USD; null = no limit' }),
	spent: t.Number({ description: 'USD settled so far' }),
	reserved: t.Number({ description: 'USD held by requests in flight' }),
	status: t.String({ description: 'active | disabled | expired, or deleted (listed only with include_deleted)' }),
	rpm_limit: t.Union([Int(), t.Null()]),
	tpm_limit: t.Union([Int(), t.Null()]),
	allowed_models: t.Union([t.Array(t.String()), t.Null()]),
	created_at: t.String({ format: 'date-time' }),
	last_used_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
}, { additionalProperties: false })

const view = (r: TokenRow) => ({
	id: r.id,
	account_id: r.accountId,
	name: r.name,
	key_hint: r.keyHint,
	expires_at: iso(r.expiresAt),
	spend_limit: r.spendLimit === null ? null : microsToUsd(r.spendLimit),
	spent: microsToUsd(r.spent),
	reserved: microsToUsd(r.reserved),
	status: r.status === 'active' && r.expiresAt && r.expiresAt.getTime() <= Date.now() ? 'expired' : r.status,
	rpm_limit: r.rpmLimit,
	tpm_limit: r.tpmLimit,
	allowed_models: r.allowedModels ?? null,
	created_at: iso(r.createdAt)!,
	last_used_at: iso(r.lastUsedAt),
})

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

const Editable = {
	expires_at: t.Optional(Nullable(t.String({ format: 'date-time', description: 'ISO-8601; null = never' }))),
	spend_limit: t.Optional(Nullable(t.Number({ minimum: 0, description: 'USD; null = no limit' }))),
	// Stored as PostgreSQL `integer`: a larger value would fail the write itself.
	rpm_limit: t.Optional(Nullable(Int({ minimum: 1, maximum: 2_147_483_647 }))),
	tpm_limit: t.Optional(Nullable(Int({ minimum: 1, maximum: 2_147_483_647 }))),
	allowed_models: t.Optional(Nullable(t.Array(t.String({ minLength: 1 })))),
}

type EditableBody = { expires_at?: string | null; spend_limit?: number | null; rpm_limit?: number | null; tpm_limit?: number | null; allowed_models?: string[] | null }

function toInput(b: EditableBody & { name?: string; status?: 'active' | 'disabled' }): TokenInput {
	const input: TokenInput = { name: b.name, status: b.status, rpmLimit: b.rpm_limit, tpmLimit: b.tpm_limit, allowedModels: b.allowed_models }
	if (b.expires_at !== undefined) {
		const d = b.expires_at === null ? null : new Date(b.expires_at)
		if (d && (Number.isNaN(d.getTime()) || !realDay(b.expires_at!))) throw badRequest(`expires_at: not an ISO-8601 date-time on a real day: ${b.expires_at}`, 'expires_at')
		// JavaScript's dates reach the year 275760, PostgreSQL's timestamps stop before (its refusal named no field).
		if (d && d.getUTCFullYear() > 9999) throw badRequest(`expires_at: after the year 9999 (use null for a key that never expires): ${b.expires_at}`, 'expires_at')
		input.expiresAt = d
	}
	if (b.spend_limit !== undefined) {
		try {
			input.spendLimit = b.spend_limit === null ? null : usdToMicros(b.spend_limit)
		} catch (e) {
			throw badRequest(`spend_limit: ${(e as Error).message}`, 'spend_limit')
		}
	}
	return input
}

/** `next_cursor` as the id the next page starts below. */
function cursorId(cursor: string | undefined): number | undefined {
	if (cursor === undefined || cursor === '') return undefined
	const c = Number(cursor)
	if (!/^\d+$/.test(cursor) || !Number.isSafeInteger(c) || c < 1) throw badRequest('cursor: not a cursor from next_cursor', 'cursor')
	return c
}

/** `ids=3,5,8` as numbers. */
function idList(text: string): number[] {
	const ids = text.split(',').map((s) => s.trim())
	if (ids.length > 1000 || ids.some((s) => !/^\d{1,10}$/.test(s) || Number(s) < 1 || Number(s) > 2_147_483_647)) throw badRequest('ids: at most 1000 key ids separated by commas', 'ids')
	return ids.map(Number)
}

export const tokensModule = (svc: Services) =>
	new Elysia({ prefix: '/api/tokens', detail: { tags: ['Management'] } })
		.use(adminAuth(svc))
		.post('',
			async ({ body, principal, status }) => {
				assertAccount(principal, body.account_id)
				const { row, key } = await createToken(svc, body.account_id, { ...toInput(body), name: body.name })
				return status(201, { ...view(row), key })
			},
			{
				body: t.Object({ account_id: Int({ minimum: 1, maximum: 2_147_483_647 }), name: Name(), ...Editable }),
				response: { 201: t.Composite([Token, t.Object({ key: t.String() })]), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
				detail: { summary: 'Create an API key; the response carries the full key' },
			},
		)
		.get('',
			async ({ query, principal }) => {
				let accountId = query.account_id
				if (principal.kind === 'user' && !principal.admin) accountId = principal.accountId
				if (accountId !== undefined) assertAccount(principal, accountId)
				const { rows, more, total } = await listTokens(svc, { accountId, search: query.search, ids: query.ids === undefined ? undefined : idList(query.ids), includeDeleted: query.include_deleted, before: cursorId(query.cursor), limit: query.limit })
				return { data: rows.map(view), next_cursor: more ? String(rows[rows.length - 1]!.id) : null, total }
			},
			{
				query: t.Object({
					account_id: t.Optional(IdNumber()),
					search: t.Optional(t.String({ maxLength: 200, description: 'Part of the name or of the masked key (any case), or a whole key' })),
					ids: t.Optional(t.String({ description: 'Only these keys: ids separated by commas (at most 1000)' })),
					include_deleted: t.Optional(t.BooleanString({ description: 'Deleted keys too (status `deleted`), e.g. to name the keys of old usage rows' })),
					limit: t.Optional(t.Numeric({ minimum: 1, maximum: MAX_TOKEN_PAGE, multipleOf: 1, description: `Keys per page, newest first; default ${MAX_TOKEN_PAGE}` })),
					cursor: t.Optional(t.String({ description: 'The previous page\'s `next_cursor`' })),
				}),
				response: {
					200: t.Object({
						data: t.Array(Token),
						next_cursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last' }),
						total: Int({ description: 'Keys matching the filter, on every page' }),
					}),
					400: ErrorBody,
					401: ErrorBody,
				},
				detail: { summary: 'List API keys (without the keys), newest first, a page at a time' },
			},
		)
		.get(
			'/:id',
			async ({ params, principal }) => {
				const row = await getToken(svc, params.id)
				assertAccount(principal, row.accountId)
				return view(row)
			},
			{ params: IdParams, response: { 200: Token, 401: ErrorBody, 404: ErrorBody }, detail: { summary: 'Get an API key (without the key)' } },
		)
		.get(
			'/:id/key',
			async ({ params, principal }) => {
				const row = await getToken(svc, params.id)
				assertAccount(principal, row.accountId)
				return { key: await revealToken(svc, row) }
			},
			{ params: IdParams, response: { 200: t.Object({ key: t.String() }), 401: ErrorBody, 404: ErrorBody }, detail: { summary: 'Reveal the full key' } },
		)
		.patch(
			'/:id',
			async ({ params, body, principal }) => {
				const row = await getToken(svc, params.id)
				assertAccount(principal, row.accountId)
				return view(await updateToken(svc, row, toInput(body)))
			},
			{
				params: IdParams,
				body: t.Object({
					name: t.Optional(Name()),
					status: t.Optional(t.Union([t.Literal('active'), t.Literal('disabled')])),
					...Editable,
				}),
				response: { 200: Token, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
				detail: { summary: 'Update an API key' },
			},
		)
		.delete(
			'/:id',
			async ({ params, principal }) => {
				const row = await getToken(svc, params.id)
				assertAccount(principal, row.accountId)
				await deleteToken(svc, row)
				return { id: row.id, deleted: true }
			},
			{ params: IdParams, response: { 200: t.Object({ id: Int(), deleted: t.Boolean() }), 401: ErrorBody, 404: ErrorBody }, detail: { summary: 'Delete an API key' } },
		)
