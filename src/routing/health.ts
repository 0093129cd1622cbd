/**
 * Channel circuit breakers (per instance). After `threshold` consecutive failures a channel opens (is skipped) for
 * an exponentially growing cool-down (base × 2^(trips−1), capped); when it elapses one request probes it (half-open):
 * success closes the breaker, failure opens it again for longer. A failure that says how long to wait (a 429 or an
 * overload with `retry-after`) opens it at once until then (at most the longest cool-down): the vendor refuses the
 * channel's requests until then, and counts the refused ones against its limits. Channels whose breaker is open are
 * tried only after all others, so a request still goes somewhere when every channel is cooling down. A channel edited
 * or enabled again starts afresh on every instance, as each loads the change (`reset`).
 * @module
 */

export type BreakerState = 'closed' | 'open' | 'half_open'

export type ChannelHealth = {
	state: BreakerState
	consecutive_failures: number
	/** ISO time the cool-down ends, while open. */
	open_until: string | null
	last_error: string | null
	last_failure_at: string | null
}

type Entry = { failures: number; trips: number; openUntil: number; probing: boolean; lastError: string | null; lastFailureAt: number | null }

export type HealthOptions = { threshold: number; baseMs: number; maxMs: number; now: () => number }

export const DEFAULT_HEALTH: HealthOptions = { threshold: 3, baseMs: 5_000, maxMs: 300_000, now: Date.now }

export function createChannelHealth(opts: Partial<HealthOptions> = {}) {
	const o = { ...DEFAULT_HEALTH, ...opts }
	const m = new Map<number, Entry>()
	const get = (id: number) => {
		let e = m.get(id)
		if (!e) m.set(id, (e = { failures: 0, trips: 0, openUntil: 0, probing: false, lastError: null, lastFailureAt: null }))
		return e
	}
	const state = (e: Entry | undefined): BreakerState => (!e || e.trips === 0 ? 'closed' : o.now() < e.openUntil ? 'open' : 'half_open')

	return {
		/**
		 * Channels in the order to try them: healthy (or due for a probe) first, cooling-down ones last. A channel due for
		 * a probe is claimed by this call (one probe at a time); `success`, `failure` or `unclaim` ends the claim, and
		 * `claims` says which ids this call claimed.
		 */
		order<C extends { id: number }>(channels: C[], claims: number[] = []): C[] {
			// All healthy, as nearly always: the order given, with no arrays made per request.
			let healthy = 0
			while (healthy < channels.length && state(m.get(channels[healthy]!.id)) === 'closed') healthy++
			if (healthy === channels.length) return channels
			const ready: C[] = []
			const cooling: C[] = []
			for (const c of channels) {
				const e = m.get(c.id)
				const s = state(e)
				if (s === 'closed') ready.push(c)
				else if (s === 'half_open' && !e!.probing) {
					e!.probing = true // one probe at a time
					claims.push(c.id)
					ready.push(c)
				} else cooling.push(c)
			}
			return ready.concat(cooling)
		},
		/**
		 * Gives back a probe `order` claimed when the request ended without a verdict on the channel (it was not tried,
		 * or failed for the request's own reason): otherwise the channel would stay half-open and never be probed again.
		 */
		unclaim(id: number) {
			const e = m.get(id)
			if (e) e.probing = false
		},
		/**
		 * Forgets the channel's failures and cool-down: an operator edited it or enabled it again (routing/catalog.ts), so
		 * what failed before says nothing about it now, and it is tried in its place at once rather than after the others.
		 */
		reset(id: number) {
			m.delete(id)
		},
		success(id: number) {
			const e = m.get(id)
			if (e) m.delete(id)
		},
		/** `retryAfterS`: the wait the upstream asked for, in seconds (its `retry-after`), when it named one. */
		failure(id: number, error: string, retryAfterS?: number) {
			const e = get(id)
			const t = o.now()
			e.failures++
			e.lastError = error.slice(0, 300)
			e.lastFailureAt = t
			const told = retryAfterS !== undefined && retryAfterS > 0 ? Math.min(o.maxMs, Math.ceil(retryAfterS * 1000)) : 0
			const tripped = e.probing || e.failures >= o.threshold
			if (tripped || told > 0) {
				e.trips++
				const coolDown = tripped ? Math.min(o.maxMs, o.baseMs * 2 ** (e.trips - 1)) : 0
				e.openUntil = t + Math.max(coolDown, told)
				e.probing = false
				e.failures = 0
			}
		},
		snapshot(id: number): ChannelHealth {
			const e = m.get(id)
			return {
				state: state(e),
				consecutive_failures: e?.failures ?? 0,
				open_until: e && state(e) === 'open' ? new Date(e.openUntil).toISOString() : null,
				last_error: e?.lastError ?? null,
				last_failure_at: e?.lastFailureAt ? new Date(e.lastFailureAt).toISOString() : null,
			}
		},
	}
}

export type ChannelHealthTracker = ReturnType<typeof createChannelHealth>
