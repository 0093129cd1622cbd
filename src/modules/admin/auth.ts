/**
 * Resolves the caller of a management route into a `principal` (see auth/principal.ts); handlers check scope with
 * assertAccount / assertAdmin instead of reading headers themselves.
 * @module
 */
import { Elysia } from 'elysia'
import type { Principal } from '../../auth/principal'
import { GatewayError } from '../../core/errors'
import { type SecretGuessGuard, sharedSecretGuessGuard } from '../../limits/secret-guess'
import { safeEqual } from '../../lib/secrets'
import { callerOf } from '../../http/client-address'
import type { Services } from '../../services'

/** One guard per gateway, whichever module's routes the guesses go to (limits/secret-guess.ts), counting with the other instances. */
const guards = new WeakMap<Services, SecretGuessGuard>()

export function adminAuth(svc: Services) {
	if (!guards.has(svc)) guards.set(svc, sharedSecretGuessGuard(svc.strikes))
	const guesses = guards.get(svc)!
	return new Elysia({ name: 'admin-auth' }).derive({ as: 'scoped' }, async ({ request, server }) => {
		const auth = request.headers.get('authorization') ?? ''
		const bearer = auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : ''
		// A presented bearer is a guess at ADMIN_KEY: limited per address and across addresses.
		const ip = bearer && svc.env.adminKey ? callerOf(server, request, svc.env.trustedProxies) : ''
		if (ip) {
			const wait = await guesses.retryAfter(ip)
			if (wait > 0) throw new GatewayError('rate_limit', `Too many wrong admin keys; try again in ${wait} second(s)`, { code: 'too_many_attempts', retryAfter: wait })
			if (safeEqual(bearer, svc.env.adminKey!)) {
				await guesses.succeed(ip)
				return { principal: { kind: 'admin' } as Principal }
			}
		}
		for (const r of svc.principals) {
			const p = await r(request)
			if (p) return { principal: p }
		}
		// A wrong guess that finds its address locked (counted on other instances) is answered as locked.
		const locked = ip ? await guesses.fail(ip) : 0
		if (locked > 0) throw new GatewayError('rate_limit', `Too many wrong admin keys; try again in ${locked} second(s)`, { code: 'too_many_attempts', retryAfter: locked })
		throw new GatewayError('authentication', svc.env.adminKey ? 'Missing or invalid admin credentials' : 'Management API disabled: set ADMIN_KEY', {
			code: 'invalid_admin_key',
		})
	})
}
