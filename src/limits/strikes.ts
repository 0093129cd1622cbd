/**
 * Failure counts every instance sees, for the console's sign-in lockouts and the wrong-`ADMIN_KEY` limits
 * (modules/console/login-limiter.ts, limits/login-backoff.ts, limits/secret-guess.ts): counted per instance, N
 * instances behind a load balancer would allow N times the documented guesses, and answer a locked user 429 on one
 * instance and 200 on the next. In Redis when there is one (one script per failure under `<REDIS_PREFIX>sb:strike:`,
 * which expires with the count), else in the PostgreSQL the instances share (table `login_strikes`: one upsert per
 * failure, lapsed rows swept every minute by the instances that wrote). None on PGlite: one process, whose memory
 * counts exactly.
 *
 * Only failures write, and a check is one read; the counts lapse by the store's clock, so instances' clocks need not
 * agree. Fail open, as the rate limits: while the store does not answer (an error, or no answer within a second;
 * then it is not asked for a second) calls resolve to undefined and the callers count in memory, per instance, with
 * one warning.
 * @module
 */
import type { Db, Sql } from '../db/client'
import type { Logger } from '../lib/log'
import { remoteGuard } from './remote-guard'

/** A count of failures, and the milliseconds until it lapses. */
export type Strike = { count: number; ttlMs: number }

export type Strikes = {
	/** Where the counts are kept. */
	readonly kind: 'redis' | 'postgres'
	/**
	 * Counts one more failure under `key` and resolves to the count, which lapses `windowMs` after the first failure,
	 * or with `sliding` after the latest. Undefined while the store does not answer.
	 */
	hit(key: string, windowMs: number, sliding: boolean): Promise<Strike | undefined>
	/** The counts under `keys` (null for none), in one round trip; undefined while the store does not answer. */
	read(keys: string[]): Promise<Array<Strike | null> | undefined>
	/** Forgets the count under `key` (nothing to wait for while the store does not answer). */
	clear(key: string): Promise<void>
	close(): Promise<void>
}

/** The store itself: its calls throw when it does not answer. */
type Backend = {
	hit(key: string, windowMs: number, sliding: boolean): Promise<Strike>
	read(keys: string[]): Promise<Array<Strike | null>>
	clear(key: string): Promise<void>
	close(): Promise<void>
}

/** Past this a call counts as failed: the caller counts in memory instead. */
const TIMEOUT_MS = 1_000
const SWEEP_MS = 60_000

/** INCR, the expiry set with the first failure (or with each, `sliding`), and the time left: atomic, one round trip. */
const REDIS_HIT = `local n = redis.call('INCR', KEYS[1])
if n == 1 or ARGV[2] == '1' then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}`
const REDIS_READ = `local n = redis.call('GET', KEYS[1])
if not n then return false end
return {tonumber(n), redis.call('PTTL', KEYS[1])}`

function redisBackend(url: string, prefix: string, options: Bun.RedisOptions = {}): Backend {
	const settings = { enableOfflineQueue: false, connectionTimeout: 500, autoReconnect: true, ...options }
	// Opened at the first failed or checked sign-in, not at start: most instances never see one.
	let client: Bun.RedisClient | undefined
	let first: Promise<unknown> | undefined
	// As the rate limiter's client (rate-limit.ts): Bun gives up reconnecting after `maxRetries`; from there a failing
	// command asks for a new connection, at most once a second.
	let gaveUp = false
	let lastTry = 0
	const open = () => {
		const c = new Bun.RedisClient(url, settings)
		c.onclose = () => {
			gaveUp = true
		}
		first = Promise.race([c.connect().catch(() => {}), Bun.sleep(settings.connectionTimeout ?? 500)]).then(() => {
			first = undefined
		})
		return c
	}
	const send = async (cmd: string, args: string[]): Promise<unknown> => {
		const c = (client ??= open())
		if (first) await first
		try {
			return await c.send(cmd, args)
		} catch (e) {
			if (gaveUp && Date.now() - lastTry >= 1_000) {
				gaveUp = false
				lastTry = Date.now()
				c.connect().catch(() => {})
			}
			throw e
		}
	}
	const at = (key: string) => `${prefix}sb:strike:${key}`
	const strike = (r: unknown): Strike | null => {
		if (!Array.isArray(r)) return null
		return { count: Number(r[0]), ttlMs: Math.max(0, Number(r[1])) }
	}
	return {
		hit: async (key, windowMs, sliding) => strike(await send('EVAL', [REDIS_HIT, '1', at(key), String(windowMs), sliding ? '1' : '0']))!,
		// Several commands sent at once go in one write (Bun pipelines them): one round trip.
		read: (keys) => Promise.all(keys.map(async (k) => strike(await send('EVAL', [REDIS_READ, '1', at(k)])))),
		clear: async (key) => {
			await send('DEL', [at(key)])
		},
		async close() {
			client?.close()
		},
	}
}

/**
 * The count restarts when the row has lapsed; the expiry moves with each failure only when `$3` (sliding). Times
 * are the database's, so the instances' clocks do not matter.
 */
const PG_HIT = `INSERT INTO login_strikes AS s (key, count, expires_at) VALUES ($1, 1, now() + $2::float8 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET
	count = CASE WHEN s.expires_at <= now() THEN 1 ELSE s.count + 1 END,
	expires_at = CASE WHEN $3::boolean OR s.expires_at <= now() THEN excluded.expires_at ELSE s.expires_at END
RETURNING s.count, EXTRACT(EPOCH FROM s.expires_at - now())::float8 * 1000 AS ttl_ms`
const PG_READ = `SELECT key, count, EXTRACT(EPOCH FROM expires_at - now())::float8 * 1000 AS ttl_ms FROM login_strikes
WHERE key = ANY($1::text[]) AND expires_at > now()`

type Row = { key: string; count: number; ttl_ms: number }

function pgBackend(sql: Sql, sweepMs: number): Backend {
	let sweeper: ReturnType<typeof setInterval> | undefined
	const toStrike = (r: Row): Strike => ({ count: Number(r.count), ttlMs: Math.max(0, Number(r.ttl_ms)) })
	return {
		async hit(key, windowMs, sliding) {
			// Whoever writes sweeps: an instance that never saw a failure runs no timer.
			if (!sweeper) {
				sweeper = setInterval(() => void sql.query('DELETE FROM login_strikes WHERE expires_at <= now()').catch(() => {}), sweepMs)
				sweeper.unref?.()
			}
			const [r] = await sql.query<Row>(PG_HIT, [key, windowMs, sliding])
			return toStrike(r!)
		},
		async read(keys) {
			const rows = await sql.query<Row>(PG_READ, [keys])
			return keys.map((k) => {
				const r = rows.find((row) => row.key === k)
				return r ? toStrike(r) : null
			})
		},
		async clear(key) {
			await sql.query('DELETE FROM login_strikes WHERE key = $1', [key])
		},
		async close() {
			clearInterval(sweeper)
		},
	}
}

/**
 * The shared counts: in Redis with `redisUrl` (keys under `prefix`, REDIS_PREFIX), else in `db` when it is a
 * PostgreSQL; undefined on PGlite, where memory is exact. `redis`: client options (tests lower the retries).
 * @example
 * const strikes = createStrikes({ redisUrl: env.redisUrl, prefix: env.redisPrefix, db, log })
 * await strikes?.hit('login:alice|1.2.3.4', 15 * 60_000, false) // { count: 1, ttlMs: 900000 }
 */
export function createStrikes(opts: { redisUrl?: string; prefix?: string; db?: Db; log: Logger; redis?: Bun.RedisOptions; sweepMs?: number }): Strikes | undefined {
	const kind = opts.redisUrl ? 'redis' : opts.db?.kind === 'postgres' ? 'postgres' : undefined
	if (!kind) return undefined
	const store = kind === 'redis' ? redisBackend(opts.redisUrl!, opts.prefix ?? '', opts.redis) : pgBackend(opts.db!.sql, opts.sweepMs ?? SWEEP_MS)
	let warned = false
	// A store that stalls is skipped for a second after each timeout, as the rate limits skip theirs: each ADMIN_KEY
	// request and sign-in reads the counts, and would otherwise wait the full timeout every time.
	const guarded = remoteGuard(`${kind} sign-in lockout query`, TIMEOUT_MS)
	const run = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
		try {
			const r = await guarded(fn)
			if (warned) opts.log.info(`${kind} answers again: sign-in and ADMIN_KEY lockouts are shared across instances`)
			warned = false
			return r
		} catch (e) {
			if (!warned) opts.log.warn(`${kind} unavailable: sign-in and ADMIN_KEY lockouts are per instance until it returns`, { error: String(e) })
			warned = true
			return undefined
		}
	}
	return {
		kind,
		hit: (key, windowMs, sliding) => run(() => store.hit(key, windowMs, sliding)),
		read: (keys) => run(() => store.read(keys)),
		clear: async (key) => {
			await run(() => store.clear(key))
		},
		close: () => store.close(),
	}
}
