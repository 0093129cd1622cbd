/** Management API: accounts. */
import { Elysia, t } from 'elysia'
import { assertAccount, assertAdmin } from '../../../auth/principal'
import { microsToUsd, usdToMicros } from '../../../billing/money'
import { badRequest } from '../../../core/errors'
import type { Services } from '../../../services'
import { adminAuth } from '../auth'
import { ErrorBody, IdParams, Int, iso, Name } from '../schemas'
import { type AccountRow, createAccount, creditAccount, DEBIT_WAIT_MS, debitAccount, getAccount, listAccounts, setAccountStatus } from './service'

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
			async ({ principal }) => {
				await svc.ledger.flush()
				if (principal.kind === 'user' && !principal.admin) return { data: [view(await getAccount(svc.db, principal.accountId))] }
				return { data: (await listAccounts(svc.db)).map(view) }
			},
			{ response: { 200: t.Object({ data: t.Array(Account) }), 401: ErrorBody }, detail: { summary: 'List accounts' } },
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
