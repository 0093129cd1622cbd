/**
 * Sign-in, sign-out, "who am I" and self sign-up. Sign-in is JSON-only and same-origin only (login CSRF: a
 * foreign page must not sign a victim into the attacker's account), and rate-limited per username and address, and per
 * username across addresses with a bounded back-off (limits/login-backoff.ts).
 * @module
 */
import { Elysia, t } from 'elysia'
import { microsToUsd } from '../../billing/money'
import { GatewayError } from '../../core/errors'
import { type LoginBackoff, sharedLoginBackoff } from '../../limits/login-backoff'
import type { Services } from '../../services'
import { ErrorBody } from '../admin/schemas'
import { getAccount } from '../admin/accounts/service'
import { isHttps, sessionCookie } from './cookies'
import { type LoginLimiter, limiterKey } from './login-limiter'
import { Credentials, Password, SessionInfo, Username, assertPassword } from './schemas'
import { type ActiveSession, SESSION_TTL_SECONDS, checkCsrf, createSession, deleteSession, findSession, sessionFromRequest } from './sessions'
import { readSettings } from './settings-store'
import { createUser, getUser, verifyLogin } from './users-service'
import { callerOf } from '../../http/client-address'

/** Rejects bodies that a plain HTML form could send, and requests another origin's page started. */
export function assertSameOriginJson(request: Request) {
	if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/json'))
		throw new GatewayError('invalid_request', 'Send the credentials as JSON (content-type: application/json)', { code: 'unsupported_media_type', status: 415 })
	const origin = request.headers.get('origin')
	if (origin && origin !== 'null') {
		const host = request.headers.get('x-forwarded-host') ?? request.headers.get('host') ?? new URL(request.url).host
		let originHost = ''
		try {
			originHost = new URL(origin).host
		} catch {}
		if (originHost !== host) throw new GatewayError('permission', 'Cross-origin sign-in refused', { code: 'cross_origin' })
	}
}

export async function sessionInfo(svc: Services, s: ActiveSession | undefined, csrfToken?: string): Promise<SessionInfo> {
	const { signupEnabled } = await readSettings(svc.db)
	if (!s) return { user: null, account: null, csrf_token: null, signup_enabled: signupEnabled }
	await svc.ledger.flush()
	const [{ view }, acc] = await Promise.all([getUser(svc.db, s.userId), getAccount(svc.db, s.accountId)])
	return {
		user: view,
		account: { id: acc.id, name: acc.name, balance: microsToUsd(acc.balance), status: acc.status },
		csrf_token: csrfToken ?? s.csrfToken,
		signup_enabled: signupEnabled,
	}
}

/** @param backoff the per-username limit across addresses (one per app, as `limiter`) */
export function sessionRoutes(svc: Services, limiter: LoginLimiter, backoff: LoginBackoff = sharedLoginBackoff(svc.strikes, 'login-user')) {
	const startSession = async (request: Request, userId: number, set: { headers: Record<string, unknown> }) => {
		const { id, csrfToken } = await createSession(svc.db, userId)
		set.headers['set-cookie'] = sessionCookie(id, SESSION_TTL_SECONDS, isHttps(request))
		set.headers['cache-control'] = 'no-store'
		return sessionInfo(svc, await findSession(svc.db, id), csrfToken)
	}
	const ipOf = (server: unknown, request: Request) => callerOf(server, request, svc.env.trustedProxies)

	return new Elysia({ prefix: '/api', detail: { tags: ['Console'] } })
		.get(
			'/session',
			async ({ request, set }) => {
				set.headers['cache-control'] = 'no-store'
				return sessionInfo(svc, await sessionFromRequest(svc.db, request))
			},
			{ response: { 200: SessionInfo }, detail: { summary: 'The signed-in user, account and CSRF token (user null when signed out)', security: [] } },
		)
		.post(
			'/session',
			async ({ body, request, server, set }) => {
				assertSameOriginJson(request)
				const ip = ipOf(server, request)
				const key = limiterKey(body.username, ip)
				const wait = await limiter.retryAfter(key)
				if (wait > 0) throw new GatewayError('rate_limit', `Too many failed sign-ins; try again in ${Math.ceil(wait / 60)} minute(s)`, { code: 'too_many_attempts', retryAfter: wait })
				const held = await backoff.retryAfter(body.username, ip)
				if (held > 0)
					throw new GatewayError('rate_limit', `Too many failed sign-ins for this user; try again in ${held} second(s)`, { code: 'too_many_attempts', retryAfter: held })
				const user = await verifyLogin(svc.db, body.username, body.password)
				if (!user) {
					await Promise.all([limiter.fail(key), backoff.fail(body.username, ip)])
					throw new GatewayError('authentication', 'Wrong username or password', { code: 'invalid_credentials' })
				}
				await Promise.all([limiter.succeed(key), backoff.succeed(body.username, ip)])
				// The right password, for an account an administrator disabled: said as such (not a failed attempt).
				if (user.accountStatus !== 'active') throw new GatewayError('permission', 'Your account is disabled: ask an administrator', { code: 'account_disabled' })
				return startSession(request, user.id, set)
			},
			{
				body: Credentials,
				response: { 200: SessionInfo, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 415: ErrorBody, 429: ErrorBody },
				detail: { summary: 'Sign in: sets the HttpOnly session cookie', security: [] },
			},
		)
		.delete(
			'/session',
			async ({ request, set }) => {
				const s = await sessionFromRequest(svc.db, request)
				if (s) {
					checkCsrf(request, s)
					await deleteSession(svc.db, s.idHash)
				}
				set.headers['set-cookie'] = sessionCookie('', 0, isHttps(request))
				return { signed_out: true }
			},
			{ response: { 200: t.Object({ signed_out: t.Boolean() }), 403: ErrorBody }, detail: { summary: 'Sign out (needs x-csrf-token)', security: [] } },
		)
		.post(
			'/signup',
			async ({ body, request, server, set, status }) => {
				assertSameOriginJson(request)
				const settings = await readSettings(svc.db)
				if (!settings.signupEnabled) throw new GatewayError('permission', 'Sign-up is closed: ask an administrator for an account', { code: 'signup_disabled' })
				assertPassword(body.password)
				// Sign-up attempts share the sign-in budget per address, so it cannot be used to mass-create accounts fast.
				const key = limiterKey('#signup', ipOf(server, request))
				const wait = await limiter.retryAfter(key)
				if (wait > 0) throw new GatewayError('rate_limit', 'Too many sign-ups from this address; try again later', { code: 'too_many_attempts', retryAfter: wait })
				await limiter.fail(key)
				const user = await createUser(svc.db, { username: body.username, password: body.password, balanceMicros: settings.signupBalance })
				return status(201, await startSession(request, user.id, set))
			},
			{
				body: t.Object({ username: Username, password: Password }),
				response: { 201: SessionInfo, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody, 415: ErrorBody, 429: ErrorBody },
				detail: { summary: 'Create an account and its user (when self sign-up is enabled) and sign in', security: [] },
			},
		)
}
