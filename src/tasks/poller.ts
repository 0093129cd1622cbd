/**
 * The background poller: finishes tasks nobody polls. Every `intervalMs` it claims open tasks idle for that long
 * (several instances share them: claimDue skips rows another instance holds) and refreshes each. Start it once per
 * process after the services are up; `stop()` waits for a running round, so tests and shutdown end cleanly.
 * @module
 */
import type { Services } from '../services'
import { refreshTask } from './refresh'
import { claimDue } from './store'

export type TaskPollerOptions = {
	/** Time between rounds (default TASK_POLL_INTERVAL_MS or 15 s). */
	intervalMs?: number
	/** How long a task must be idle (not polled by anyone) to be claimed; defaults to `intervalMs`. */
	idleMs?: number
	/** Tasks per round (default 50). */
	batch?: number
	/** Open tasks older than this are failed and refunded (default TASK_MAX_AGE_MS or 24 h). */
	maxAgeMs?: number
}

export type TaskPoller = {
	/** One round now; resolves to the number of tasks polled. */
	tick(): Promise<number>
	/** Stops the timer and waits for a running round. */
	stop(): Promise<void>
}

/**
 * @example
 * const poller = startTaskPoller(svc)            // in src/index.ts, after createServices
 * process.on('SIGTERM', async () => { await poller.stop(); await svc.close() })
 */
export function startTaskPoller(svc: Services, opts: TaskPollerOptions = {}): TaskPoller {
	const intervalMs = opts.intervalMs ?? svc.env.taskPollIntervalMs
	const idleMs = opts.idleMs ?? intervalMs
	const batch = opts.batch ?? 50
	const maxAgeMs = opts.maxAgeMs ?? svc.env.taskMaxAgeMs
	const ctl = new AbortController()
	let running: Promise<number> | undefined
	let stopped = false

	const round = async (): Promise<number> => {
		const due = await claimDue(svc.db, idleMs, batch)
		for (const task of due) {
			if (stopped) break
			await refreshTask(svc, task, { signal: ctl.signal, maxAgeMs }).catch((e) => svc.log.warn('task refresh failed', { task: task.id, error: String(e) }))
		}
		return due.length
	}
	const tick = (): Promise<number> => {
		// One round at a time per process; a tick during a round joins it.
		running ??= round().finally(() => {
			running = undefined
		})
		return running
	}
	const timer = setInterval(() => {
		if (!stopped) void tick().catch((e) => svc.log.warn('task poll round failed', { error: String(e) }))
	}, intervalMs)
	timer.unref?.()

	return {
		tick,
		async stop() {
			stopped = true
			clearInterval(timer)
			ctl.abort()
			await running?.catch(() => 0)
		},
	}
}
