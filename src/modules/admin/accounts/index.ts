/** Management API: accounts. */
import { Elysia, t } from 'elysia'
import { assertAccount, assertAdmin } from '../../../auth/principal'
import { microsToUsd, usdToMicros } from '../../../billing/money'
import { badRequest } from '../../../core/errors'
import type { Services } from '../../../services'
import { adminAuth } from '../auth'
import { ErrorBody, IdParams, Int, iso, Name } from '../schemas'
import { type AccountRow, createAccount, creditAccount, DEBIT_WAIT_MS, debitAccount, getAccount, listAccounts, MAX_ACCOUNT_PAGE, setAccountStatus } from './service'

const Account = t.Object({
	id: Int(),
	name: t.String(),
	balance: t.Number({ description: 'Available balance in USD (open reservations excluded)' }),
	status: t.Union([t.Literal('active'), t.Literal('disabled')], { description: "`disabled`: the account's keys are refused (401 `account_disabled`) and its users cannot sign in to the console" }),
	created_at: t.String({ format: 'date-time' }),
}, { additionalProperties: false })

const view = (a: AccountRow) => ({ id: a.id, name: a.name, balance: microsToUsd(a.balance), status: a.status as 'active' | 'disabled', created_at: iso(a.createdAt)! })

const toMicros = (v: number, field: string) => {
	try {
		return usdToMicros(v)
	} catch (e) {
		throw badRequest(`${field}: ${(e as Error).message}`, field)
	}
}

/** `next_cursor` as the id the next page starts below. */
function cursorId(cursor: string | undefined): number | undefined {
	if (cursor === undefined || cursor === '') return undefined
	const c = Number(cursor)
	if (!/^\d+$/.test(cursor) || !Number.isSafeInteger(c) || c < 1) throw badRequest('cursor: not a cursor from next_cursor', 'cursor')
	return c
}

export const accountsModule = (svc: Services) =>
	new Elysia({ prefix: '/api/accounts', detail: { tags: ['Management'] } })
		.use(adminAuth(svc))
		.post('',
			async ({ body, principal, status }) => {
				assertAdmin(principal)
				return status(201, view(await createAccount(svc.db, body.name, toMicros(body.balance ?? 0, 'balance'))))
			},
			{
				body: t.Object({ name: Name(), balance: t.Optional(t.Number({ minimum: 0 })) }),
				response: { 201: Account, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody },
				detail: { summary: 'Create an account' },
			},
		)
		.get('',
			async ({ query, principal }) => {
				// A user sees only their own account.
				const id = principal.kind === 'user' && !principal.admin ? principal.accountId : undefined
				await svc.ledger.flush()
				const { rows, more, total } = await listAccounts(svc.db, { id, search: query.search, before: cursorId(query.cursor), limit: query.limit })
				return { data: rows.map(view), next_cursor: more ? String(rows[rows.length - 1]!.id) : null, total }
			},
			{
				query: t.Object({
					search: t.Optional(t.String({ maxLength: 200, description: 'Part of the name (any case), or the id (`12` or `#12`)' })),
					limit: t.Optional(t.Numeric({ minimum: 1, maximum: MAX_ACCOUNT_PAGE, multipleOf: 1, description: `Accounts per page, newest first; default ${MAX_ACCOUNT_PAGE}` })),
					cursor: t.Optional(t.String({ description: 'The previous page\'s `next_cursor`' })),
				}),
				response: {
					200: t.Object({
						data: t.Array(Account),
						next_cursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last' }),
						total: Int({ description: 'Accounts matching the filter, on every page' }),
					}),
					400: ErrorBody,
					401: ErrorBody,
				},
				detail: { summary: 'List accounts, newest first, a page at a time (a user: their own)' },
			},
		)
		.get(
			'/:id',
			async ({ params, principal }) => {
				assertAccount(principal, params.id)
				await svc.ledger.flush()
				return view(await getAccount(svc.db, params.id))
			},
			{ params: IdParams, response: { 200: Account, 401: ErrorBody, 404: ErrorBody }, detail: { summary: 'Get an account' } },
		)
		.post(
			'/:id/credit',
			async ({ params, body, principal }) => {
				assertAdmin(principal)
				if (body.amount === 0) throw badRequest('amount must not be zero', 'amount')
				const micros = toMicros(body.amount, 'amount')
				// A debit may need the money instances have leased (the balance shown counts it): it waits for it to come back.
				if (micros < 0) return { balance: microsToUsd(await debitAccount(svc.db, svc.ledger, params.id, micros, body.note)) }
				// A credit is seen at once either way.
				await svc.ledger.flush()
				return { balance: microsToUsd(await creditAccount(svc.db, params.id, micros, body.note)) }
			},
			{
				params: IdParams,
				body: t.Object({
					amount: t.Number({
						description: `USD to add (negative to remove). A removal may take up to the balance shown: unused money other instances have leased is asked back first (409 \`balance_leased\` when it has not come back within ${DEBIT_WAIT_MS} ms); money held by requests in flight is never taken (400 beyond what is free)`,
					}),
					note: t.Optional(t.String({ maxLength: 500 })),
				}),
				response: { 200: t.Object({ balance: t.Number() }), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
				detail: { summary: 'Credit an account' },
			},
		)
		.post(
			'/:id/disable',
			async ({ params, principal }) => {
				assertAdmin(principal)
				return view(await setAccountStatus(svc, params.id, 'disabled', principal))
			},
			{
				params: IdParams,
				response: { 200: Account, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
				detail: {
					summary: 'Disable an account',
					description:
						"Its keys are refused at once on every instance (401 `account_disabled` in each protocol's error shape; 403 PERMISSION_DENIED, reason CONSUMER_SUSPENDED, in Gemini's) and its console users are signed out and cannot sign in; requests already running finish and are billed. Not the account you are signed in with, nor the last one holding an active administrator (400).",
				},
			},
		)
		.post(
			'/:id/enable',
			async ({ params, principal }) => {
				assertAdmin(principal)
				return view(await setAccountStatus(svc, params.id, 'active', principal))
			},
			{ params: IdParams, response: { 200: Account, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }, detail: { summary: 'Enable an account', description: 'Its keys and console users work again.' } },
		)
