/**
 * Gives memory back after a burst. Left alone, the garbage collector keeps the heap a burst grew to, and the
 * process's RSS with it, for a long time. So once at least `minRequests` requests came since the last collection, the
 * first quiet interval (no new request, nothing `busy`, e.g. no stream open) runs one full collection: one pause of a
 * few milliseconds on an idle process. Costs one counter increment per request.
 * @module
 */

export type IdleGc = { note(): void; stop(): void }

export function createIdleGc(opts: { busy?: () => boolean; minRequests?: number; quietMs?: number } = {}): IdleGc {
	const min = opts.minRequests ?? 200
	let count = 0
	let seen = 0
	const timer = setInterval(() => {
		const quiet = count === seen
		seen = count
		if (quiet && count >= min && !opts.busy?.()) {
			Bun.gc(true)
			count = seen = 0
		}
	}, opts.quietMs ?? 1_000)
	;(timer as { unref?: () => void }).unref?.()
	return {
		note() {
			count++
		},
		stop: () => clearInterval(timer),
	}
}
