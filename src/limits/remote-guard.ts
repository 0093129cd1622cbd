/**
 * Calls to a store the instances share (Redis, PostgreSQL) that may stop answering: a connection that stalls (a
 * partition, a stuck server) never fails by itself, and every request waiting on it would wait as long.
 * @module
 */
import { within } from '../lib/bus-core'

/**
 * Each call is given `timeoutMs`; after a failure or a timeout calls fail at once for `retryMs`, then one call probes
 * the store while the others still fail at once, and its success lets them all through again. The callers fall back
 * to what they can do alone (rate limits counted per instance).
 * @example const guarded = remoteGuard('rate limit query'); await guarded(() => sql`SELECT 1`)
 */
export function remoteGuard(what: string, timeoutMs = 1_000, retryMs = 1_000): <T>(fn: () => Promise<T>) => Promise<T> {
	/** Until when calls fail without trying (real time); 0 while the store answers. */
	let downUntil = 0
	let probing = false
	return async <T>(fn: () => Promise<T>): Promise<T> => {
		let probe = false
		if (downUntil) {
			if (probing || Date.now() < downUntil) throw new Error(`${what}: the store did not answer lately`)
			probing = probe = true
		}
		try {
			const r = await within(fn(), timeoutMs, what)
			downUntil = 0
			return r
		} catch (e) {
			downUntil = Date.now() + retryMs
			throw e
		} finally {
			if (probe) probing = false
		}
	}
}
