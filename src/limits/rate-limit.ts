/**
 * Per-key limits: requests per minute and tokens per minute. A sliding window approximated from two fixed one-minute
 * buckets (the previous one weighted by how much of it still overlaps the window), the way Cloudflare and Redis'
 * documentation describe it. The buckets are shared by every instance: in Redis when there is one (INCR + EXPIRE in
 * one round trip), else in the PostgreSQL they share (pg-buckets.ts). On PGlite, one process's database, they are in
 * memory, which is exact there. While Redis or PostgreSQL does not answer they are per instance (with a warning), so
 * an outage degrades limits rather than serving nothing.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { Db } from '../db/client'
import type { Logger } from '../lib/log'
import { pgBuckets } from './pg-buckets'
import { remoteGuard } from './remote-guard'

export type LimitedToken = { keyId: string; rpmLimit: number | null; tpmLimit: number | null }

export type RateLimiter = {
	/**
	 * Counts one request and throws 429 (with retry-after) when a limit is exceeded. Undefined, not a promise, for a
	 * key without limits (most keys): nothing to wait for.
	 */
	admit(token: LimitedToken): Promise<void> | undefined
	/** Adds the tokens a finished request used. */
	addTokens(keyId: string, tokens: number): void
	/** Whether instances share the counts (through Redis or PostgreSQL). */
	readonly shared: boolean
	/** Writes out the tokens still waiting to be counted and stops timers (at shutdown, before the database closes). */
	close(): Promise<void>
}

/** The two buckets a window at some moment reads: the current one and the one before. */
export type Buckets = { cur: number; prev: number }

/** A key's windows at one moment: of requests and of tokens. */
export type Windows = { requests: Buckets; tokens: Buckets }

/** Where the buckets are kept: memory, Redis or PostgreSQL. */
export type BucketStore = {
	/**
	 * The key's windows at `t`, after counting this request in the current bucket when the key has an rpm limit and
	 * its token window has room (a request refused for tokens does not count toward requests).
	 */
	admit(token: LimitedToken, t: number): Promise<Windows>
	/** Adds `tokens` to the key's bucket of `minute`; resolves once counted. */
	addTokens(keyId: string, minute: number, tokens: number): Promise<void>
	close?(): Promise<void>
}

type Counter = { incr(key: string, by: number): Promise<number>; get(key: string): Promise<number> }

const WINDOW_MS = 60_000

function memoryCounter(): Counter {
	const m = new Map<string, { n: number; until: number }>()
	let sweep = Date.now()
	const tidy = () => {
		const now = Date.now()
		if (now - sweep < WINDOW_MS) return
		sweep = now
		for (const [k, v] of m) if (v.until < now) m.delete(k)
	}
	return {
		async incr(key, by) {
			tidy()
			const e = m.get(key) ?? { n: 0, until: Date.now() + 2 * WINDOW_MS }
			e.n += by
			m.set(key, e)
			return e.n
		},
		async get(key) {
			return m.get(key)?.n ?? 0
		},
	}
}

function redisCounter(url: string, options: Bun.RedisOptions = {}): Counter {
	const settings = { enableOfflineQueue: false, connectionTimeout: 500, autoReconnect: true, ...options }
	const client = new Bun.RedisClient(url, settings)
	// Bun reconnects by itself, but gives up after `maxRetries` attempts (about 30 s down) and runs `onclose`; the
	// limits would then stay per instance until a restart. From there a failing command asks for a new connection,
	// at most once a second (https://bun.com/docs/runtime/redis "Reconnection Behavior").
	let gaveUp = false
	let lastTry = 0
	client.onclose = () => {
		gaveUp = true
	}
	const revive = () => {
		if (!gaveUp || Date.now() - lastTry < 1_000) return
		gaveUp = false
		lastTry = Date.now()
		client.connect().catch(() => {})
	}
	// A Redis that stops answering (a partition, a stuck server) fails no command by itself: each is given 1 s, and
	// after one that failed or did not answer the others count in memory for a second before one tries again.
	const remote = remoteGuard('rate limit command')
	const guarded = async <T>(fn: () => Promise<T>): Promise<T> => {
		try {
			return await remote(fn)
		} catch (e) {
			revive()
			throw e
		}
	}
	// Commands wait for the first connection, at most `connectionTimeout` (its promise, retrying by itself, can take
	// ~30 s to fail on a Redis that is down): a new instance's first requests are counted in Redis, not in memory, where
	// a second instance just started let a key past its limit. Failures surface per command, which then falls back to
	// memory. Once it is settled, commands do not wait on it at all.
	let first: Promise<unknown> | undefined = Promise.race([client.connect().catch(() => {}), Bun.sleep(settings.connectionTimeout ?? 500)]).then(() => {
		first = undefined
	})
	return {
		incr: (key, by) =>
			guarded(async () => {
				if (first) await first
				const n = Number(await client.send('INCRBY', [key, String(by)]))
				if (n === by) await client.send('PEXPIRE', [key, String(2 * WINDOW_MS)])
				return n
			}),
		get: (key) =>
			guarded(async () => {
				if (first) await first
				return Number((await client.get(key)) ?? 0)
			}),
	}
}

/** Window count at `t`: the current bucket plus the overlapping share of the previous one. */
const count = (w: Buckets, t: number) => w.cur + w.prev * (1 - (t % WINDOW_MS) / WINDOW_MS)

/** Reads (after adding `add` to the current one) the buckets of the window at `now`. */
async function windowed(c: Counter, base: string, now: number, add: number): Promise<Buckets> {
	const bucket = Math.floor(now / WINDOW_MS)
	const cur = add ? await c.incr(`${base}:${bucket}`, add) : await c.get(`${base}:${bucket}`)
	const prev = await c.get(`${base}:${bucket - 1}`)
	return { cur, prev }
}

/**
 * Whole seconds until the window, with no further traffic, `fits`: the value of `retry-after`, which the SDKs wait
 * before they send the request again. Not the current bucket's end: the window slides, and right after that end the
 * full bucket still counts almost whole as the previous one, so a retry sent then would be refused again (and, being
 * counted, push the next one further out). Checked second by second over the two minutes after which nothing counts.
 * @example retryAfter({ cur: 3, prev: 0 }, 1_000, (n) => n + 1 <= 2) // 100: 59 s to the bucket's end, then 41 s of sliding
 */
export function retryAfter(w: Buckets, now: number, fits: (n: number) => boolean): number {
	const bucket = Math.floor(now / WINDOW_MS)
	const limit = (2 * WINDOW_MS) / 1000
	for (let s = 1; s < limit; s++) {
		const t = now + s * 1000
		const ahead = Math.floor(t / WINDOW_MS) - bucket
		const at = ahead === 0 ? w : ahead === 1 ? { cur: 0, prev: w.cur } : { cur: 0, prev: 0 }
		if (fits(count(at, t))) return s
	}
	return limit
}

const NONE: Buckets = { cur: 0, prev: 0 }

/** Buckets as counters (memory, Redis): `<prefix>sb:rpm:<keyId>:<minute>` and `…sb:tpm:…`. */
function counterStore(c: Counter, prefix: string): BucketStore {
	const rpmKey = `${prefix}sb:rpm:`
	const tpmKey = `${prefix}sb:tpm:`
	return {
		async admit(token, t) {
			const tpm = token.tpmLimit
			const tokens = tpm === null ? NONE : await windowed(c, `${tpmKey}${token.keyId}`, t, 0)
			if (token.rpmLimit === null || (tpm !== null && count(tokens, t) >= tpm)) return { requests: NONE, tokens }
			return { requests: await windowed(c, `${rpmKey}${token.keyId}`, t, 1), tokens }
		},
		async addTokens(keyId, minute, tokens) {
			await c.incr(`${tpmKey}${keyId}:${minute}`, tokens)
		},
	}
}

/**
 * `redis`: options for the Redis client (tests lower `maxRetries`). `prefix` (REDIS_PREFIX) goes before every key.
 * `db`: without Redis, a PostgreSQL database keeps the buckets (a PGlite one does not: memory is exact there).
 * `pg`: timings of the PostgreSQL store (tests).
 *
 * Policy while Redis or PostgreSQL is down: fail open to per-instance counters (each instance enforces the full limit
 * on its own share of the traffic), never refuse for want of them; shared counting resumes once they answer again.
 */
export function createRateLimiter(opts: {
	redisUrl?: string
	prefix?: string
	log: Logger
	now?: () => number
	redis?: Bun.RedisOptions
	db?: Db
	pg?: { flushMs?: number; sweepMs?: number; timeoutMs?: number }
}): RateLimiter {
	const now = opts.now ?? Date.now
	const local = counterStore(memoryCounter(), opts.prefix ?? '')
	const remote: { name: string; store: BucketStore } | undefined = opts.redisUrl
		? { name: 'redis', store: counterStore(redisCounter(opts.redisUrl, opts.redis), opts.prefix ?? '') }
		: opts.db?.kind === 'postgres'
			? { name: 'postgres', store: pgBuckets(opts.db.sql, { now, ...opts.pg }) }
			: undefined
	let warned = false
	/** Redis or PostgreSQL when it answers, else the local counters. */
	const run = async <T>(fn: (s: BucketStore) => Promise<T>): Promise<T> => {
		if (remote) {
			try {
				const r = await fn(remote.store)
				if (warned) opts.log.info(`${remote.name} answers again: rate limits are shared across instances`)
				warned = false
				return r
			} catch (e) {
				if (!warned) opts.log.warn(`${remote.name} unavailable: rate limits are per instance until it returns`, { error: String(e) })
				warned = true
			}
		}
		return fn(local)
	}
	async function check(token: LimitedToken): Promise<void> {
		const t = now()
		const w = await run((s) => s.admit(token, t))
		const tpm = token.tpmLimit
		if (tpm !== null && count(w.tokens, t) >= tpm)
			throw new GatewayError('rate_limit', `Token rate limit reached: ${tpm} tokens per minute`, {
				code: 'rate_limit_exceeded',
				retryAfter: retryAfter(w.tokens, t, (n) => n < tpm),
			})
		const rpm = token.rpmLimit
		// This request is counted, admitted or not (as OpenAI counts refused requests): a client retrying at once
		// does not get through sooner.
		if (rpm !== null && count(w.requests, t) > rpm)
			throw new GatewayError('rate_limit', `Request rate limit reached: ${rpm} requests per minute`, {
				code: 'rate_limit_exceeded',
				retryAfter: retryAfter(w.requests, t, (n) => n + 1 <= rpm),
			})
	}

	return {
		shared: !!remote,
		admit(token) {
			return token.rpmLimit === null && token.tpmLimit === null ? undefined : check(token)
		},
		addTokens(keyId, tokens) {
			if (tokens > 0) void run((s) => s.addTokens(keyId, Math.floor(now() / WINDOW_MS), tokens)).catch(() => {})
		},
		close: async () => {
			await remote?.store.close?.()
		},
	}
}
