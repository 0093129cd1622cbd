/**
 * Rate-limit buckets in PostgreSQL (table `rate_buckets`), for instances that share a database and no Redis: every
 * instance counts a key's requests and tokens in the same rows, so N instances allow the limit once, not N times.
 * Only keys that have a limit come here. An admitted request is one statement (an upsert of the current minute that
 * returns it and the minute before); the tokens of finished requests are added in batches, at most TOKENS_FLUSH_MS
 * late for the other instances (this one counts them at once), and written out at close. Minutes no window reads any
 * more are deleted every SWEEP_MS, off the request path.
 *
 * When the database does not answer (an error, or no answer within QUERY_TIMEOUT_MS), calls fail at once for
 * RETRY_MS and then one call tries again: the limiter meanwhile counts in memory (rate-limit.ts).
 * @module
 */
import type { Sql } from '../db/client'
import { remoteGuard } from './remote-guard'
import type { BucketStore, Buckets, LimitedToken, Windows } from './rate-limit'

const WINDOW_MS = 60_000
/** How late another instance may see a finished request's tokens, at most (plus the write). */
const TOKENS_FLUSH_MS = 100
const SWEEP_MS = 60_000
/** Past this a statement counts as failed; the request is counted in memory instead. */
const QUERY_TIMEOUT_MS = 1_000
/** How long after a failure calls go to memory without trying the database. */
const RETRY_MS = 1_000

const NONE: Buckets = { cur: 0, prev: 0 }

/**
 * One more request in the key's current minute, unless its token window (the current minute's tokens plus the
 * previous minute's weighted by `$4`, its share still in the window, plus `$5`, this instance's tokens not written
 * yet) is already at `$3`, the tpm limit: a request refused for tokens is not counted toward requests, as in memory
 * and Redis. Returns both minutes.
 */
const ADMIT = `WITH prev AS (SELECT requests, tokens FROM rate_buckets WHERE key_id = $1 AND minute = $2 - 1),
cur AS (
	INSERT INTO rate_buckets AS b (key_id, minute, requests, tokens)
	VALUES ($1, $2, CASE WHEN $3::bigint IS NULL OR COALESCE((SELECT tokens FROM prev), 0) * $4::float8 + $5::float8 < $3 THEN 1 ELSE 0 END, 0)
	ON CONFLICT (key_id, minute) DO UPDATE
	SET requests = b.requests + CASE WHEN $3::bigint IS NULL OR b.tokens + COALESCE((SELECT tokens FROM prev), 0) * $4::float8 + $5::float8 < $3 THEN 1 ELSE 0 END
	RETURNING b.requests, b.tokens
)
SELECT cur.requests, cur.tokens, COALESCE(prev.requests, 0) AS prev_requests, COALESCE(prev.tokens, 0) AS prev_tokens FROM cur LEFT JOIN prev ON true`

/** A key with only a tpm limit: its two minutes, read without writing. */
const READ = 'SELECT minute, requests, tokens FROM rate_buckets WHERE key_id = $1 AND minute IN ($2 - 1, $2)'

/** A batch of tokens: one row per key and minute (the batch adds each up first: one upsert may not touch a row twice). */
const ADD_TOKENS = `INSERT INTO rate_buckets (key_id, minute, requests, tokens)
SELECT k, m, 0, n FROM unnest($1::text[], $2::int[], $3::bigint[]) AS u(k, m, n)
ON CONFLICT (key_id, minute) DO UPDATE SET tokens = rate_buckets.tokens + excluded.tokens`

/**
 * Minutes before `$1` go: the window reads the current minute and the one before, and one more is kept for an
 * instance whose clock is a little behind.
 */
const SWEEP = 'WITH gone AS (DELETE FROM rate_buckets WHERE minute < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone'

type Row = { requests: number; tokens: number; prev_requests: number; prev_tokens: number }

export type PgBuckets = BucketStore & {
	/** Deletes the minutes no window reads any more; resolves to how many rows went. */
	sweep(): Promise<number>
	close(): Promise<void>
}

/**
 * @example
 * const store = pgBuckets(db.sql, { now: Date.now })
 * const w = await store.admit({ keyId, rpmLimit: 60, tpmLimit: null }, Date.now()) // w.requests.cur === 1
 */
export function pgBuckets(sql: Sql, opts: { now: () => number; flushMs?: number; sweepMs?: number; timeoutMs?: number }): PgBuckets {
	const flushMs = opts.flushMs ?? TOKENS_FLUSH_MS
	const timeoutMs = opts.timeoutMs ?? QUERY_TIMEOUT_MS
	// Real time, not `now` (tests move it): a database that stops answering is skipped for a second, then probed.
	const guarded = remoteGuard('rate limit query', timeoutMs, RETRY_MS)

	/** Tokens waiting for the next batch, by `minute key`, and the batch's outcome, which their callers wait on. */
	let pending = new Map<string, number>()
	let batch: (PromiseWithResolvers<void> & { timer: ReturnType<typeof setTimeout> }) | undefined
	/** Batches sent and not yet answered. */
	const sending = new Set<Map<string, number>>()
	const writing = new Set<Promise<void>>()
	/**
	 * This instance's tokens of a key's minute that the database may not hold yet: its own next request sees them at
	 * once, as in memory (the others, once written). A batch counts here until its write has answered, so a read that
	 * raced its commit may count it twice for that moment: stricter, never looser.
	 */
	const unwritten = (keyId: string, minute: number) => {
		const k = `${minute} ${keyId}`
		let n = pending.get(k) ?? 0
		for (const m of sending) n += m.get(k) ?? 0
		return n
	}
	const flush = () => {
		const b = batch
		if (!b) return Promise.resolve()
		clearTimeout(b.timer)
		batch = undefined
		const sent = pending
		pending = new Map()
		const keys: string[] = []
		const minutes: number[] = []
		const tokens: number[] = []
		for (const [k, n] of sent) {
			const space = k.indexOf(' ')
			minutes.push(Number(k.slice(0, space)))
			keys.push(k.slice(space + 1))
			tokens.push(n)
		}
		sending.add(sent)
		const done = guarded(() => sql.query(ADD_TOKENS, [keys, minutes, tokens])).then(() => b.resolve(), b.reject)
		writing.add(done)
		void done.finally(() => {
			writing.delete(done)
			sending.delete(sent)
		})
		return done
	}

	const sweep = () => guarded(async () => (await sql.query<{ n: number }>(SWEEP, [Math.floor(opts.now() / WINDOW_MS) - 2]))[0]?.n ?? 0)
	// Failures say nothing here: a request meanwhile warns of the outage.
	const sweeper = setInterval(() => void sweep().catch(() => {}), opts.sweepMs ?? SWEEP_MS)
	sweeper.unref?.()

	return {
		async admit(token: LimitedToken, t: number): Promise<Windows> {
			const minute = Math.floor(t / WINDOW_MS)
			const mine = { cur: unwritten(token.keyId, minute), prev: unwritten(token.keyId, minute - 1) }
			if (token.rpmLimit === null) {
				const rows = await guarded(() => sql.query<{ minute: number; requests: number; tokens: number }>(READ, [token.keyId, minute]))
				const at = (m: number) => Number(rows.find((r) => r.minute === m)?.tokens ?? 0)
				return { requests: NONE, tokens: { cur: at(minute) + mine.cur, prev: at(minute - 1) + mine.prev } }
			}
			const weight = 1 - (t % WINDOW_MS) / WINDOW_MS
			const [r] = await guarded(() => sql.query<Row>(ADMIT, [token.keyId, minute, token.tpmLimit, weight, mine.cur + mine.prev * weight]))
			return {
				requests: { cur: Number(r!.requests), prev: Number(r!.prev_requests) },
				tokens: { cur: Number(r!.tokens) + mine.cur, prev: Number(r!.prev_tokens) + mine.prev },
			}
		},
		addTokens(keyId, minute, n) {
			const k = `${minute} ${keyId}`
			pending.set(k, (pending.get(k) ?? 0) + n)
			if (!batch) {
				const b = Promise.withResolvers<void>()
				batch = { ...b, timer: setTimeout(flush, flushMs) }
				// Not what keeps the process up: at exit close() writes them.
				batch.timer.unref?.()
			}
			return batch.promise
		},
		sweep,
		async close() {
			clearInterval(sweeper)
			await flush()
			await Promise.all(writing)
		},
	}
}
