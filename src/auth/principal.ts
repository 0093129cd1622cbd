/**
 * Who is calling the management API: the ADMIN_KEY bearer (full access) or a console user scoped to one account.
 * @module
 */
import { GatewayError } from '../core/errors'

export type Principal = { kind: 'admin' } | { kind: 'user'; userId: number; accountId: number; admin: boolean }

/** A way to authenticate a management call besides ADMIN_KEY (the console's session cookie). */
export type PrincipalResolver = (request: Request) => Promise<Principal | undefined>

export const isAdmin = (p: Principal) => p.kind === 'admin' || p.admin

/** Throws 404 (not 403: do not reveal other accounts' ids) when a user reaches outside its account. */
export function assertAccount(p: Principal, accountId: number) {
	if (!isAdmin(p) && p.kind === 'user' && p.accountId !== accountId) throw new GatewayError('not_found', 'not found', { code: 'not_found' })
}

export function assertAdmin(p: Principal) {
	if (!isAdmin(p)) throw new GatewayError('permission', 'administrator only', { code: 'forbidden' })
}
