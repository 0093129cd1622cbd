/**
 * Per-key limits: requests per minute and tokens per minute. A sliding window approximated from two fixed one-minute
 * buckets (the previous one weighted by how much of it still overlaps the window), the way Cloudflare and Redis'
 * documentation describe it. With Redis the buckets are shared by every instance (INCR + EXPIRE in one round trip);
 * without it, or while Redis is down, they are per instance (with a warning), so an outage degrades limits rather
 * than serving nothing.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { Logger } from '../lib/log'

export type LimitedToken = { keyId: string; rpmLimit: number | null; tpmLimit: number | null }

export type RateLimiter = {
	/**
	 * Counts one request and throws 429 (with retry-after) when a limit is exceeded. Undefined, not a promise, for a
	 * key without limits (most keys): nothing to wait for.
	 */
	admit(token: LimitedToken): Promise<void> | undefined
	/** Adds the tokens a finished request used. */
	addTokens(keyId: string, tokens: number): void
	readonly shared: boolean
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
	const client = new Bun.RedisClient(url, { enableOfflineQueue: false, connectionTimeout: 500, autoReconnect: true, ...options })
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
	const guarded = async <T>(fn: () => Promise<T>): Promise<T> => {
		try {
			return await fn()
		} catch (e) {
			revive()
			throw e
		}
	}
	client.connect().catch(() => {}) // failures surface per command, which then falls back to memory
	return {
		incr: (key, by) =>
			guarded(async () => {
				const n = Number(await client.send('INCRBY', [key, String(by)]))
				if (n === by) await client.send('PEXPIRE', [key, String(2 * WINDOW_MS)])
				return n
			}),
		get: (key) => guarded(async () => Number((await client.get(key)) ?? 0)),
	}
}

/** Window count: the current bucket plus the overlapping share of the previous one. */
async function windowed(c: Counter, base: string, now: number, add: number): Promise<number> {
	const bucket = Math.floor(now / WINDOW_MS)
	const overlap = 1 - (now % WINDOW_MS) / WINDOW_MS
	const cur = add ? await c.incr(`${base}:${bucket}`, add) : await c.get(`${base}:${bucket}`)
	const prev = await c.get(`${base}:${bucket - 1}`)
	return cur + prev * overlap
}

/**
 * `redis`: options for the Redis client (tests lower `maxRetries`).
 *
 * Policy while Redis is down: fail open to per-instance counters (each instance enforces the full limit on its own
 * share of the traffic), never refuse for want of Redis; shared counting resumes once it answers again.
 */
export function createRateLimiter(opts: { redisUrl?: string; log: Logger; now?: () => number; redis?: Bun.RedisOptions }): RateLimiter {
	const now = opts.now ?? Date.now
	const local = memoryCounter()
	const remote = opts.redisUrl ? redisCounter(opts.redisUrl, opts.redis) : undefined
	let warned = false
	/** Redis when it answers, else the local counter. */
	const run = async <T>(fn: (c: Counter) => Promise<T>): Promise<T> => {
		if (remote) {
			try {
				const r = await fn(remote)
				if (warned) opts.log.info('redis answers again: rate limits are shared across instances')
				warned = false
				return r
			} catch (e) {
				if (!warned) opts.log.warn('redis unavailable: rate limits are per instance until it returns', { error: String(e) })
				warned = true
			}
		}
		return fn(local)
	}
	const retryAfter = (t: number) => Math.max(1, Math.ceil((WINDOW_MS - (t % WINDOW_MS)) / 1000))

	async function check(token: LimitedToken): Promise<void> {
		const t = now()
		if (token.tpmLimit !== null) {
			const used = await run((c) => windowed(c, `sb:tpm:${token.keyId}`, t, 0))
			if (used >= token.tpmLimit)
				throw new GatewayError('rate_limit', `Token rate limit reached: ${token.tpmLimit} tokens per minute`, { code: 'rate_limit_exceeded', retryAfter: retryAfter(t) })
		}
		if (token.rpmLimit !== null) {
			const n = await run((c) => windowed(c, `sb:rpm:${token.keyId}`, t, 1))
			if (n > token.rpmLimit)
				throw new GatewayError('rate_limit', `Request rate limit reached: ${token.rpmLimit} requests per minute`, { code: 'rate_limit_exceeded', retryAfter: retryAfter(t) })
		}
	}

	return {
		shared: !!remote,
		admit(token) {
			return token.rpmLimit === null && token.tpmLimit === null ? undefined : check(token)
		},
		addTokens(keyId, tokens) {
			if (tokens > 0) void run((c) => c.incr(`sb:tpm:${keyId}:${Math.floor(now() / WINDOW_MS)}`, tokens)).catch(() => {})
		},
	}
}
