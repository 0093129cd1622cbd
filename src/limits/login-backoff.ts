/**
 * Slows password guessing against one username from many addresses. The per-address lock (console/login-limiter.ts)
 * alone lets an attacker who rotates addresses (a botnet, an IPv6 /64) guess without limit. Here every username has
 * a failure count shared by all addresses: the first `freeFailures` cost nothing, then each further one closes the
 * username for a delay that doubles per failure up to `maxDelayMs` (one minute by default). The delay is bounded on
 * purpose: an attacker can hold a username to about one guess a minute, but cannot lock its owner out for long. And
 * an address that signed in as that user before is not held by it at all (OWASP Authentication Cheat Sheet, "device
 * cookies"): the owner at their usual address signs in even while a guesser keeps the username closed elsewhere.
 * Shared by the instances as the per-address lock (limits/strikes.ts), the addresses a user signed in from too.
 * @module
 */
import type { Strike, Strikes } from './strikes'

export type LoginBackoff = {
	/** Seconds until `username` may be tried again from `ip`, or 0 when allowed now. */
	retryAfter(username: string, ip: string): number | Promise<number>
	fail(username: string, ip: string): void | Promise<void>
	/** Clears the username's count and remembers `ip` as one its owner signs in from. */
	succeed(username: string, ip: string): void | Promise<void>
	/** Only remembers `ip` as one the owner signs in from (for a secret many share, whose count one success must not clear). */
	remember(username: string, ip: string): void | Promise<void>
}

/** The back-off in memory: synchronous. */
export type MemoryLoginBackoff = {
	retryAfter(username: string, ip: string): number
	fail(username: string, ip: string): void
	succeed(username: string, ip: string): void
	remember(username: string, ip: string): void
	/** Whether `ip` is remembered here as one the owner signs in from. */
	knows(username: string, ip: string): boolean
	/** Takes the username's shared count (null: none), which every instance's failures made. */
	mirror(username: string, s: Strike | null): void
}

type Failures = { count: number; last: number }

type BackoffOptions = { freeFailures?: number; baseDelayMs?: number; maxDelayMs?: number; windowMs?: number }

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
export function createLoginBackoff(opts: BackoffOptions & { now?: () => number } = {}): MemoryLoginBackoff {
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
	const put = (user: string, f: Failures) => {
		if (failures.size > MAX_ENTRIES) {
			// Expired entries go, and those still within the free failures (they hold nobody back): a flood of
			// made-up usernames cannot push out, and so reset, the count of the one being guessed.
			for (const [k, e] of failures) if (!current(k) || e.count <= free) failures.delete(k)
			if (failures.size > MAX_ENTRIES) failures.clear()
		}
		failures.set(user, f)
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
			const f = current(user)
			if (f) {
				f.count++
				f.last = now()
			} else put(user, { count: 1, last: now() })
		},
		succeed(username, ip) {
			failures.delete(norm(username))
			remember(username, ip)
		},
		remember,
		knows: (username, ip) => !!known.get(norm(username))?.includes(ip),
		mirror(username, s) {
			if (!s) failures.delete(norm(username))
			else put(norm(username), { count: s.count, last: now() - (windowMs - s.ttlMs) })
		},
	}
}

/** How long the shared store remembers an address a user signed in from, since it last did (a day late at most). */
const KNOWN_MS = 30 * 24 * 60 * 60_000
const DAY_MS = 24 * 60 * 60_000

/**
 * The back-off with its counts, and the addresses users signed in from, in `strikes` (Redis or PostgreSQL), shared
 * by every instance; without (PGlite) the one in memory. `name` keeps its keys apart. Memory mirrors the shared count
 * as last seen and decides alone while the store does not answer. An address remembered here is let through without
 * asking. `check` as for sharedLoginLimiter (console/login-limiter.ts): `always` asks on every check, `after-failure`
 * only once this instance has seen a failure within the window (ADMIN_KEY: the right key costs nothing meanwhile).
 */
export function sharedLoginBackoff(strikes: Strikes | undefined, name: string, opts: BackoffOptions & { check?: 'always' | 'after-failure' } = {}): LoginBackoff {
	const local = createLoginBackoff(opts)
	if (!strikes) return local
	const windowMs = opts.windowMs ?? 15 * 60_000
	let lastFailure = Number.NEGATIVE_INFINITY
	const asks = () => opts.check !== 'after-failure' || Date.now() - lastFailure < windowMs
	const counted = (username: string) => `${name}:${norm(username)}`
	const seen = (username: string, ip: string) => `${name}-known:${norm(username)}|${ip}`
	/** When this instance last wrote each address as known: once a day at most, not on every management call. */
	const marked = new Map<string, number>()
	const mark = (username: string, ip: string) => {
		const k = seen(username, ip)
		if (Date.now() - (marked.get(k) ?? Number.NEGATIVE_INFINITY) < DAY_MS) return
		if (marked.size >= MAX_ENTRIES) marked.clear()
		marked.set(k, Date.now())
		return strikes.hit(k, KNOWN_MS, true).then((s) => {
			if (!s) marked.delete(k)
		})
	}
	return {
		retryAfter(username, ip) {
			if (local.knows(username, ip) || !asks()) return local.retryAfter(username, ip)
			return strikes.read([counted(username), seen(username, ip)]).then((r) => {
				if (!r) return local.retryAfter(username, ip)
				// Another instance saw the owner sign in from here.
				if (r[1]) {
					local.remember(username, ip)
					return 0
				}
				local.mirror(username, r[0])
				return local.retryAfter(username, ip)
			})
		},
		async fail(username, ip) {
			lastFailure = Date.now()
			local.fail(username, ip)
			const s = await strikes.hit(counted(username), windowMs, true)
			if (s) local.mirror(username, s)
		},
		async succeed(username, ip) {
			local.succeed(username, ip)
			await Promise.all([strikes.clear(counted(username)), mark(username, ip)])
		},
		remember(username, ip) {
			local.remember(username, ip)
			return mark(username, ip)
		},
	}
}
