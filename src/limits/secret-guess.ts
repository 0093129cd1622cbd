/**
 * Slows guessing of a secret that has no username in front of it: ADMIN_KEY, which the operator chooses (and may
 * choose weak), checked on every management call. Two limits, as for console sign-in: per address, `perAddress`
 * wrong guesses within 15 minutes lock that address out (even the right key, so the lock is no oracle); across
 * addresses, past `freeFailures` the back-off of limits/login-backoff.ts (doubling, at most a minute), from which
 * addresses that presented the right key before are exempt (a right key does not clear that shared count). A client misconfigured with a stale key locks only its own
 * address, and stops counting toward the shared back-off once it is locked out.
 *
 * With shared counts (limits/strikes.ts: Redis, or a PostgreSQL several instances share) every wrong guess is counted
 * there, whichever instance it reaches, and one that finds its address already locked is answered as locked. The
 * right key asks the store only on an instance that has seen a wrong guess within the window: while nobody guesses
 * there, management calls cost nothing more.
 * @module
 */
import { createLoginLimiter, sharedLoginLimiter } from '../modules/console/login-limiter'
import { createLoginBackoff, sharedLoginBackoff } from './login-backoff'
import type { Strikes } from './strikes'

export type SecretGuessGuard = {
	/** Seconds until `ip` may present the secret again, or 0 when allowed now. */
	retryAfter(ip: string): number | Promise<number>
	/** Counts a wrong guess; resolves to the seconds to wait when `ip` was already locked out (answer it so), else 0. */
	fail(ip: string): number | Promise<number>
	succeed(ip: string): void | Promise<void>
}

const ALL = '#secret'
const WINDOW_MS = 15 * 60_000

/** @example const g = createSecretGuessGuard(); g.fail('1.2.3.4') // ten times → g.retryAfter('1.2.3.4') > 0 */
export function createSecretGuessGuard(opts: { perAddress?: number; freeFailures?: number; now?: () => number } = {}) {
	const byAddress = createLoginLimiter({ maxFailures: opts.perAddress ?? 10, windowMs: WINDOW_MS, now: opts.now })
	const shared = createLoginBackoff({ freeFailures: opts.freeFailures ?? 20, now: opts.now })
	return {
		retryAfter: (ip: string) => Math.max(byAddress.retryAfter(ip), shared.retryAfter(ALL, ip)),
		fail(ip: string) {
			const locked = byAddress.fail(ip)
			if (!locked) shared.fail(ALL, ip)
			return locked
		},
		succeed(ip: string) {
			byAddress.succeed(ip)
			// Not `succeed`: the administrator's own calls, many a minute, would clear the count of everyone's guesses.
			shared.remember(ALL, ip)
		},
	} satisfies SecretGuessGuard
}

/** The guard with its counts in `strikes`, shared by every instance; without (PGlite) the one in memory. */
export function sharedSecretGuessGuard(strikes: Strikes | undefined, opts: { perAddress?: number; freeFailures?: number } = {}): SecretGuessGuard {
	if (!strikes) return createSecretGuessGuard(opts)
	const byAddress = sharedLoginLimiter(strikes, 'admin-key', { maxFailures: opts.perAddress ?? 10, windowMs: WINDOW_MS, check: 'after-failure' })
	const shared = sharedLoginBackoff(strikes, 'admin-key-all', { freeFailures: opts.freeFailures ?? 20, check: 'after-failure' })
	return {
		async retryAfter(ip) {
			const [a, b] = await Promise.all([byAddress.retryAfter(ip), shared.retryAfter(ALL, ip)])
			return Math.max(a, b)
		},
		async fail(ip) {
			const locked = await byAddress.fail(ip)
			if (!locked) await shared.fail(ALL, ip)
			return locked
		},
		async succeed(ip) {
			// Remembering the address is written once a day at most, and need not hold up the call.
			void shared.remember(ALL, ip)
			await byAddress.succeed(ip)
		},
	}
}
