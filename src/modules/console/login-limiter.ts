/**
 * Slows password guessing: after `maxFailures` wrong passwords for one username from one address within the
 * window, further attempts are refused until the window passes. In memory and per instance on purpose: it needs no
 * Redis, and with N instances an attacker still gets at most N × maxFailures guesses per window.
 * @module
 */

export type LoginLimiter = {
	/** Seconds until another attempt is allowed, or 0 when allowed now. */
	retryAfter(key: string): number
	fail(key: string): void
	succeed(key: string): void
}

/**
 * @example
 * const l = createLoginLimiter({ maxFailures: 5, windowMs: 15 * 60_000 })
 * l.fail('alice|1.2.3.4') // five times → l.retryAfter('alice|1.2.3.4') > 0
 */
export function createLoginLimiter(opts: { maxFailures?: number; windowMs?: number; now?: () => number } = {}): LoginLimiter {
	const max = opts.maxFailures ?? 5
	const windowMs = opts.windowMs ?? 15 * 60_000
	const now = opts.now ?? Date.now
	const failures = new Map<string, { count: number; since: number }>()

	const current = (key: string) => {
		const f = failures.get(key)
		if (f && now() - f.since >= windowMs) {
			failures.delete(key)
			return undefined
		}
		return f
	}

	return {
		retryAfter(key) {
			const f = current(key)
			if (!f || f.count < max) return 0
			return Math.max(1, Math.ceil((f.since + windowMs - now()) / 1000))
		},
		fail(key) {
			// Bound memory against attempts with ever-new usernames: drop the expired entries, and all if still huge.
			if (failures.size > 50_000) {
				for (const k of failures.keys()) current(k)
				if (failures.size > 50_000) failures.clear()
			}
			const f = current(key)
			if (f) f.count++
			else failures.set(key, { count: 1, since: now() })
		},
		succeed(key) {
			failures.delete(key)
		},
	}
}

/** The limiter key: the username as typed (lower-cased) plus the client address. */
export const limiterKey = (username: string, ip: string) => `${username.trim().toLowerCase()}|${ip}`
