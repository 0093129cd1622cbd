/**
 * Slows guessing of a secret that has no username in front of it: ADMIN_KEY, which the operator chooses (and may
 * choose weak), checked on every management call. Two limits, as for console sign-in: per address, `perAddress`
 * wrong guesses within 15 minutes lock that address out (even the right key, so the lock is no oracle); across
 * addresses, past `freeFailures` the back-off of limits/login-backoff.ts (doubling, at most a minute), from which
 * addresses that presented the right key before are exempt (a right key does not clear that shared count). A client misconfigured with a stale key locks only its own
 * address, and stops counting toward the shared back-off once it is locked out.
 * @module
 */
import { createLoginLimiter } from '../modules/console/login-limiter'
import { createLoginBackoff } from './login-backoff'

export type SecretGuessGuard = {
	/** Seconds until `ip` may present the secret again, or 0 when allowed now. */
	retryAfter(ip: string): number
	fail(ip: string): void
	succeed(ip: string): void
}

const ALL = '#secret'

/** @example const g = createSecretGuessGuard(); g.fail('1.2.3.4') // ten times → g.retryAfter('1.2.3.4') > 0 */
export function createSecretGuessGuard(opts: { perAddress?: number; freeFailures?: number; now?: () => number } = {}): SecretGuessGuard {
	const byAddress = createLoginLimiter({ maxFailures: opts.perAddress ?? 10, windowMs: 15 * 60_000, now: opts.now })
	const shared = createLoginBackoff({ freeFailures: opts.freeFailures ?? 20, now: opts.now })
	return {
		retryAfter: (ip) => Math.max(byAddress.retryAfter(ip), shared.retryAfter(ALL, ip)),
		fail(ip) {
			byAddress.fail(ip)
			shared.fail(ALL, ip)
		},
		succeed(ip) {
			byAddress.succeed(ip)
			// Not `succeed`: the administrator's own calls, many a minute, would clear the count of everyone's guesses.
			shared.remember(ALL, ip)
		},
	}
}
