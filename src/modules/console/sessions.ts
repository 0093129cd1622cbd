/**
 * Console sessions. The cookie carries a random id; the database keeps only its sha256 (a leaked table does not
 * let anyone sign in), the user, a CSRF token and an absolute expiry. Cookie-authenticated state changes must echo
 * the CSRF token in `x-csrf-token` (synchronizer-token pattern, OWASP CSRF cheat sheet); the ADMIN_KEY bearer path
 * never reaches this code.
 * @module
 */
import { and, eq, gt, lt, ne } from 'drizzle-orm'
import type { Principal, PrincipalResolver } from '../../auth/principal'
import { GatewayError } from '../../core/errors'
import type { Db } from '../../db/client'
import { accounts, sessions, users } from '../../db/schema'
import { randomString } from '../../lib/ids'
import { safeEqual, sha256Hex } from '../../lib/secrets'
import { SESSION_COOKIE, readCookie } from './cookies'

export const SESSION_TTL_SECONDS = 7 * 24 * 3600

/** Methods that must not change state, so they need no CSRF token (RFC 9110 §9.2.1). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export type ActiveSession = { idHash: string; userId: number; accountId: number; admin: boolean; csrfToken: string }

/** Starts a session; returns the cookie value (shown to nobody else) and the CSRF token for the page. */
export async function createSession(db: Db, userId: number, now = new Date()) {
	const id = randomString(43) // ≈256 bits
	const csrfToken = randomString(32)
	await db.orm.delete(sessions).where(lt(sessions.expiresAt, now))
	await db.orm.insert(sessions).values({ idHash: sha256Hex(id), userId, csrfToken, expiresAt: new Date(now.getTime() + SESSION_TTL_SECONDS * 1000) })
	return { id, csrfToken }
}

/** The live session behind a cookie value, or undefined when unknown, expired, or its user or the user's account is disabled. */
export async function findSession(db: Db, id: string | undefined): Promise<ActiveSession | undefined> {
	if (!id || id.length > 128) return undefined
	const [row] = await db.orm
		.select({ idHash: sessions.idHash, userId: users.id, accountId: users.accountId, admin: users.isAdmin, csrfToken: sessions.csrfToken })
		.from(sessions)
		.innerJoin(users, eq(users.id, sessions.userId))
		.innerJoin(accounts, eq(accounts.id, users.accountId))
		.where(and(eq(sessions.idHash, sha256Hex(id)), gt(sessions.expiresAt, new Date()), eq(users.status, 'active'), eq(accounts.status, 'active')))
		.limit(1)
	return row
}

export const sessionFromRequest = (db: Db, request: Request) => findSession(db, readCookie(request.headers.get('cookie'), SESSION_COOKIE))

export async function deleteSession(db: Db, idHash: string) {
	await db.orm.delete(sessions).where(eq(sessions.idHash, idHash))
}

/** Signs a user out everywhere (password change, disable, delete), optionally keeping the current session. */
export async function deleteUserSessions(db: Db, userId: number, keepIdHash?: string) {
	await db.orm.delete(sessions).where(keepIdHash ? and(eq(sessions.userId, userId), ne(sessions.idHash, keepIdHash)) : eq(sessions.userId, userId))
}

/** Throws 403 unless a state-changing request carries the session's CSRF token. */
export function checkCsrf(request: Request, session: ActiveSession) {
	if (SAFE_METHODS.has(request.method)) return
	const sent = request.headers.get('x-csrf-token') ?? ''
	if (!sent || !safeEqual(sent, session.csrfToken))
		throw new GatewayError('permission', 'Missing or invalid CSRF token: send the x-csrf-token header returned by GET /api/session', { code: 'csrf_failed' })
}

export const principalOf = (s: ActiveSession): Principal => ({ kind: 'user', userId: s.userId, accountId: s.accountId, admin: s.admin })

/** Lets the management API accept the session cookie (registered in `svc.principals`). */
export function sessionResolver(db: Db): PrincipalResolver {
	return async (request) => {
		const s = await sessionFromRequest(db, request)
		if (!s) return undefined
		checkCsrf(request, s)
		return principalOf(s)
	}
}
