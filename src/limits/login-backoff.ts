/**
 * Slows password guessing against one username from many addresses. The per-address lock (console/login-limiter.ts)
 * alone lets an attacker who rotates addresses (a botnet, an IPv6 /64) guess without limit. Here every username has
 * a failure count shared by all addresses: the first `freeFailures` cost nothing, then each further one closes the
 * username for a delay that doubles per failure up to `maxDelayMs` (one minute by default). The delay is bounded on
 * purpose: an attacker can hold a username to about one guess a minute, but cannot lock its owner out for long. And
 * an address that signed in as that user before is not held by it at all (OWASP Authentication Cheat Sheet, "device
 * cookies"): the owner at their usual address signs in even while a guesser keeps the username closed elsewhere.
 * In memory and per instance, as the per-address lock.
 * @module
 */

export type LoginBackoff = {
	/** Seconds until `username` may be tried again from `ip`, or 0 when allowed now. */
	retryAfter(username: string, ip: string): number
	fail(username: string, ip: string): void
	/** Clears the username's count and remembers `ip` as one its owner signs in from. */
	succeed(username: string, ip: string): void
	/** Only remembers `ip` as one the owner signs in from (for a secret many share, whose count one success must not clear). */
	remember(username: string, ip: string): void
}

type Failures = { count: number; last: number }

/** Entries kept at most (each map), so attempts with ever-new usernames cannot grow memory without bound. */
const MAX_ENTRIES = 50_000
/** Addresses remembered per user: the last few they signed in from. */
const KNOWN_PER_USER = 8

const norm = (username: string) => username.trim().toLowerCase()

/**
 * @example
 * const b = createLoginBackoff({ freeFailures: 10 })
 * for (let i = 0; i < 11; i++) b.fail('admin', `10.0.0.${i}`) // b.retryAfter('admin', '10.0.0.99') === 1
 */
export function createLoginBackoff(opts: { freeFailures?: number; baseDelayMs?: number; maxDelayMs?: number; windowMs?: number; now?: () => number } = {}): LoginBackoff {
	const free = opts.freeFailures ?? 10
	const base = opts.baseDelayMs ?? 1000
	const max = opts.maxDelayMs ?? 60_000
	const windowMs = opts.windowMs ?? 15 * 60_000
	const now = opts.now ?? Date.now
	const failures = new Map<string, Failures>()
	const known = new Map<string, string[]>()

	/** The count, forgotten once no failure came for a whole window. */
	const current = (user: string) => {
		const f = failures.get(user)
		if (f && now() - f.last >= windowMs) {
			failures.delete(user)
			return undefined
		}
		return f
	}
	const delayAfter = (count: number) => (count <= free ? 0 : Math.min(max, base * 2 ** Math.min(30, count - free - 1)))

	const remember = (username: string, ip: string) => {
		const user = norm(username)
		const list = (known.get(user) ?? []).filter((a) => a !== ip)
		list.push(ip)
		if (list.length > KNOWN_PER_USER) list.shift()
		// Re-inserted so the map's order is least recently signed in first; the oldest user goes when it is full.
		known.delete(user)
		if (known.size >= MAX_ENTRIES) known.delete(known.keys().next().value!)
		known.set(user, list)
	}

	return {
		retryAfter(username, ip) {
			const user = norm(username)
			if (known.get(user)?.includes(ip)) return 0
			const f = current(user)
			if (!f) return 0
			const wait = f.last + delayAfter(f.count) - now()
			return wait > 0 ? Math.ceil(wait / 1000) : 0
		},
		fail(username) {
			const user = norm(username)
			if (failures.size > MAX_ENTRIES) {
				// Expired entries go, and those still within the free failures (they hold nobody back): a flood of
				// made-up usernames cannot push out, and so reset, the count of the one being guessed.
				for (const [k, f] of failures) if (!current(k) || f.count <= free) failures.delete(k)
				if (failures.size > MAX_ENTRIES) failures.clear()
			}
			const f = current(user)
			if (f) {
				f.count++
				f.last = now()
			} else failures.set(user, { count: 1, last: now() })
		},
		succeed(username, ip) {
			failures.delete(norm(username))
			remember(username, ip)
		},
		remember,
	}
}
