/**
 * How late this process's timers run while a timed check is under way. CI runs two test files at once beside
 * PostgreSQL and a browser on two cores, and a stall of the event loop there (a collection, a neighbour's burst) delays
 * the timer under test and this one alike. An upper bound on elapsed time adds the worst lateness seen, so a slow
 * machine does not read as slow code, while a timer that fires at the wrong deadline still fails on any machine.
 */
export function watchLateness(everyMs = 10) {
	let worst = 0
	let last = performance.now()
	const tick = () => {
		const now = performance.now()
		worst = Math.max(worst, now - last - everyMs)
		last = now
	}
	const timer = setInterval(tick, everyMs)
	return {
		/** The worst delay of a tick so far (ms), the current one included: call it when the timed part is over. */
		worst() {
			tick()
			return worst
		},
		stop() {
			clearInterval(timer)
			return this.worst()
		},
	}
}
