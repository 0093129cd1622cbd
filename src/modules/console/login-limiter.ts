/**
 * Slows password guessing: after `maxFailures` wrong passwords for one username from one address within the
 * window, further attempts are refused until the window passes. With Redis, or on a PostgreSQL that several instances
 * share, the counts are kept there (limits/strikes.ts), so the lock holds on every instance at once; on PGlite, one
 * process, they are in memory.
 * @module
 */
import type { Strike, Strikes } from '../../limits/strikes'

export type LoginLimiter = {
	/** Seconds until another attempt is allowed, or 0 when allowed now. */
	retryAfter(key: string): number | Promise<number>
	/**
	 * Counts a failure. Resolves to the seconds to wait when the key was already locked before it (an attempt that
	 * raced the check, or one no check asked the shared count for), so the caller answers as to a locked key; else 0.
	 */
	fail(key: string): number | Promise<number>
	succeed(key: string): void | Promise<void>
}

/** The limiter in memory: synchronous. */
export type MemoryLoginLimiter = {
	retryAfter(key: string): number
	fail(key: string): number
	succeed(key: string): void
	/** Failures counted for `key` within the window. */
	count(key: string): number
	/** Takes the shared count for `key` (null: none), which every instance's failures made. */
	mirror(key: string, s: Strike | null): void
}

/** Entries kept at most, so attempts with ever-new usernames cannot grow memory without bound. */
const MAX_ENTRIES = 50_000

/**
 * @example
 * const l = createLoginLimiter({ maxFailures: 5, windowMs: 15 * 60_000 })
 * l.fail('alice|1.2.3.4') // five times → l.retryAfter('alice|1.2.3.4') > 0
 */
export function createLoginLimiter(opts: { maxFailures?: number; windowMs?: number; now?: () => number } = {}): MemoryLoginLimiter {
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
	const retryAfter = (key: string) => {
		const f = current(key)
		if (!f || f.count < max) return 0
		return Math.max(1, Math.ceil((f.since + windowMs - now()) / 1000))
	}
	const put = (key: string, f: { count: number; since: number }) => {
		// Bound memory against attempts with ever-new usernames: drop the expired entries, and all if still huge.
		if (failures.size > MAX_ENTRIES) {
			for (const k of failures.keys()) current(k)
			if (failures.size > MAX_ENTRIES) failures.clear()
		}
		failures.set(key, f)
	}

	return {
		retryAfter,
		fail(key) {
			const f = current(key)
			if (f) f.count++
			else put(key, { count: 1, since: now() })
			return (f?.count ?? 1) > max ? retryAfter(key) : 0
		},
		succeed(key) {
			failures.delete(key)
		},
		count: (key) => current(key)?.count ?? 0,
		mirror(key, s) {
			if (!s) failures.delete(key)
			else put(key, { count: s.count, since: now() - (windowMs - s.ttlMs) })
		},
	}
}

/**
 * The limiter with its counts in `strikes` (Redis or PostgreSQL), shared by every instance; without (PGlite) the one
 * in memory. `name` keeps its keys apart from other limiters'. Memory mirrors the shared count as last seen: a key
 * seen locked is refused without asking again, and while the store does not answer memory alone decides (per
 * instance, fail open). `check`: `always` asks on every check (sign-in, rare); `after-failure` only once this instance
 * has seen a failure within the window, so a caller presenting the right secret costs nothing while nobody guesses
 * here (ADMIN_KEY, checked on every management call), and a wrong guess, always counted in the store, finds the lock.
 */
export function sharedLoginLimiter(
	strikes: Strikes | undefined,
	name: string,
	opts: { maxFailures?: number; windowMs?: number; check?: 'always' | 'after-failure' } = {},
): LoginLimiter {
	const local = createLoginLimiter(opts)
	if (!strikes) return local
	const max = opts.maxFailures ?? 5
	const windowMs = opts.windowMs ?? 15 * 60_000
	let lastFailure = Number.NEGATIVE_INFINITY
	const asks = () => opts.check !== 'after-failure' || Date.now() - lastFailure < windowMs
	const at = (key: string) => `${name}:${key}`
	return {
		retryAfter(key) {
			const wait = local.retryAfter(key)
			if (wait > 0 || !asks()) return wait
			return strikes.read([at(key)]).then((r) => {
				if (!r) return wait
				local.mirror(key, r[0])
				return local.retryAfter(key)
			})
		},
		async fail(key) {
			lastFailure = Date.now()
			// Counted here at once too: attempts racing on this instance see it before the store answers.
			const was = local.fail(key)
			const s = await strikes.hit(at(key), windowMs, false)
			if (!s) return was
			local.mirror(key, s)
			return s.count > max ? Math.max(1, Math.ceil(s.ttlMs / 1000)) : 0
		},
		succeed(key) {
			// On every sign-in (rare); for ADMIN_KEY only when the check just read a count: not on every management call.
			const had = local.count(key) > 0
			local.succeed(key)
			if (had || opts.check !== 'after-failure') return strikes.clear(at(key))
		},
	}
}

/** The limiter key: the username as typed (lower-cased) plus the client address. */
export const limiterKey = (username: string, ip: string) => `${username.trim().toLowerCase()}|${ip}`
