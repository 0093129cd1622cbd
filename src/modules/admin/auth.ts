/**
 * Resolves the caller of a management route into a `principal` (see auth/principal.ts); handlers check scope with
 * assertAccount / assertAdmin instead of reading headers themselves.
 * @module
 */
import { Elysia } from 'elysia'
import type { Principal } from '../../auth/principal'
import { GatewayError } from '../../core/errors'
import { safeEqual } from '../../lib/secrets'
import type { Services } from '../../services'

export function adminAuth(svc: Services) {
	return new Elysia({ name: 'admin-auth' }).derive({ as: 'scoped' }, async ({ request }) => {
		const auth = request.headers.get('authorization') ?? ''
		const bearer = auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : ''
		if (bearer && svc.env.adminKey && safeEqual(bearer, svc.env.adminKey)) return { principal: { kind: 'admin' } as Principal }
		for (const r of svc.principals) {
			const p = await r(request)
			if (p) return { principal: p }
		}
		throw new GatewayError('authentication', svc.env.adminKey ? 'Missing or invalid admin credentials' : 'Management API disabled: set ADMIN_KEY', {
			code: 'invalid_admin_key',
		})
	})
}
