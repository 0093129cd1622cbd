/** Management API: console users (administrators only), and a user's own password change. */
import { Elysia, t } from 'elysia'
import { assertAdmin } from '../../auth/principal'
import { usdToMicros } from '../../billing/money'
import { GatewayError, badRequest } from '../../core/errors'
import type { Services } from '../../services'
import { adminAuth } from '../admin/auth'
import { ErrorBody, IdParams, Name } from '../admin/schemas'
import { Password, User, Username, assertPassword } from './schemas'
import type { LoginLimiter } from './login-limiter'
import { sessionFromRequest } from './sessions'
import { changeOwnPassword, checkPassword, createUser, deleteUser, getUser, listUsers, updateUser } from './users-service'

const Status = t.Union([t.Literal('active'), t.Literal('disabled')])

/**
 * @param limiter counts wrong current passwords per user: a stolen session (cookie and CSRF token) must not become an
 * unlimited oracle for the password, which would outlive the session.
 */
export function usersRoutes(svc: Services, limiter: LoginLimiter) {
	return new Elysia({ prefix: '/api/users', detail: { tags: ['Console'] } })
		.use(adminAuth(svc))
		.post(
			'/me/password',
			async ({ body, principal, request }) => {
				const s = principal.kind === 'user' ? await sessionFromRequest(svc.db, request) : undefined
				if (!s) throw badRequest('Only a signed-in console user has a password to change (ADMIN_KEY has none)')
				assertPassword(body.new_password, 'new_password')
				const key = `#password|${s.userId}`
				const wait = await limiter.retryAfter(key)
				if (wait > 0) throw new GatewayError('rate_limit', `Too many wrong passwords; try again in ${Math.ceil(wait / 60)} minute(s)`, { code: 'too_many_attempts', retryAfter: wait })
				if (!(await checkPassword(svc.db, s.userId, body.current_password))) {
					await limiter.fail(key)
					throw new GatewayError('invalid_request', 'The current password is wrong', { param: 'current_password', code: 'wrong_password' })
				}
				await limiter.succeed(key)
				await changeOwnPassword(svc.db, s.userId, body.new_password, s.idHash)
				return { changed: true }
			},
			{
				body: t.Object({ current_password: t.String({ minLength: 1, maxLength: 200 }), new_password: Password }),
				response: { 200: t.Object({ changed: t.Boolean() }), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody },
				detail: { summary: 'Change your own password (other sessions are signed out; five wrong current passwords lock it for 15 minutes)' },
			},
		)
		.get(
			'',
			async ({ principal }) => {
				assertAdmin(principal)
				return { data: await listUsers(svc.db) }
			},
			{ response: { 200: t.Object({ data: t.Array(User) }), 401: ErrorBody, 403: ErrorBody }, detail: { summary: 'List console users' } },
		)
		.get(
			'/:id',
			async ({ params, principal }) => {
				assertAdmin(principal)
				return (await getUser(svc.db, params.id)).view
			},
			{ params: IdParams, response: { 200: User, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }, detail: { summary: 'Get a console user' } },
		)
		.post(
			'',
			async ({ body, principal, status }) => {
				assertAdmin(principal)
				assertPassword(body.password)
				if (body.account_id !== undefined && (body.account_name !== undefined || body.balance !== undefined))
					throw badRequest('give either account_id (an existing account) or account_name/balance (a new account), not both', 'account_id')
				let balanceMicros = 0
				try {
					balanceMicros = usdToMicros(body.balance ?? 0)
				} catch (e) {
					throw badRequest(`balance: ${(e as Error).message}`, 'balance')
				}
				const user = await createUser(svc.db, {
					username: body.username,
					password: body.password,
					accountId: body.account_id,
					accountName: body.account_name,
					isAdmin: body.is_admin,
					balanceMicros,
				})
				return status(201, user)
			},
			{
				body: t.Object({
					username: Username,
					password: Password,
					account_id: t.Optional(t.Integer({ minimum: 1, description: 'Join this existing account' })),
					account_name: t.Optional(Name({ description: 'Name of the new account (default: the username)' })),
					balance: t.Optional(t.Number({ minimum: 0, description: 'USD credited to the new account' })),
					is_admin: t.Optional(t.Boolean()),
				}),
				response: { 201: User, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
				detail: { summary: 'Create a console user (in a new account unless account_id is given)' },
			},
		)
		.patch(
			'/:id',
			async ({ params, body, principal }) => {
				assertAdmin(principal)
				assertPassword(body.password)
				const actor = principal.kind === 'user' ? principal.userId : undefined
				return updateUser(svc.db, params.id, { password: body.password, isAdmin: body.is_admin, status: body.status }, actor)
			},
			{
				params: IdParams,
				body: t.Object({ password: t.Optional(Password), is_admin: t.Optional(t.Boolean()), status: t.Optional(Status) }),
				response: { 200: User, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
				detail: { summary: 'Update a console user (a new password or disabling signs them out)' },
			},
		)
		.delete(
			'/:id',
			async ({ params, principal }) => {
				assertAdmin(principal)
				await deleteUser(svc.db, params.id, principal.kind === 'user' ? principal.userId : undefined)
				return { id: params.id, deleted: true }
			},
			{
				params: IdParams,
				response: { 200: t.Object({ id: t.Integer(), deleted: t.Boolean() }), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
				detail: { summary: 'Delete a console user (the account and its keys stay)' },
			},
		)
}
