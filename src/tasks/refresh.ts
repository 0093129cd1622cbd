/**
 * Bringing a task up to date: ask its upstream (unless it is terminal) and apply what it says through the state
 * machine. Used by client polls (GET /v1/video/generations/{id}, the Midjourney and Suno fetch routes) and by the
 * background poller, so a task nobody asks about still finishes, and a failure is refunded whoever sees it first.
 * @module
 */
import type { Services } from '../services'
import { refreshBatch } from './batch'
import { refreshGeminiBatch } from './gemini-batch'
import { refreshMessageBatch } from './message-batch'
import { failTask } from './refund'
import { type TaskRow, type TaskUpdate, advance, getTask, isTerminal } from './store'
import { TASK_POLLERS } from './upstream'

/** Applies an upstream's update; returns the row as it is afterwards. */
export async function applyUpdate(svc: Services, task: TaskRow, u: TaskUpdate): Promise<TaskRow> {
	if (isTerminal(task.status)) return task
	if (u.status === 'failed') await failTask(svc, task, u.error ?? 'task failed')
	else {
		// What the submit recorded (e.g. a video's prompt) stays beside what the upstream says now.
		const result = u.result ? { ...task.result, ...u.result } : undefined
		const moved = await advance(svc.db, task.id, { ...u, status: u.status, result })
		if (moved) return moved
	}
	return (await getTask(svc.db, task.id)) ?? task
}

/**
 * Polls the task's upstream once and applies the answer. A poll that fails leaves the task as it is; a task past
 * `maxAgeMs` that its upstream has not finished is failed (and refunded) instead of polled forever. The upstream is
 * asked first even then: after a long stop (or polls failing for a day) a task it finished was delivered, and must
 * stay charged, not be refunded unasked.
 */
export async function refreshTask(svc: Services, task: TaskRow, opts: { signal?: AbortSignal; maxAgeMs?: number } = {}): Promise<TaskRow> {
	if (isTerminal(task.status)) return task
	// A batch settles its real cost when it ends, and lives by its own window (batch.ts).
	if (task.kind === 'batch') return (await refreshBatch(svc, task, opts.signal)).task
	if (task.kind === 'message_batch') return (await refreshMessageBatch(svc, task, opts.signal)).task
	if (task.kind === 'gemini_batch') return (await refreshGeminiBatch(svc, task, opts.signal)).task
	const expired = Date.now() - task.createdAt.getTime() > (opts.maxAgeMs ?? svc.env.taskMaxAgeMs)
	const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
	let update: TaskUpdate | undefined
	if (ch && task.upstreamId) {
		try {
			update = await TASK_POLLERS[task.kind as keyof typeof TASK_POLLERS]?.(ch, task.upstreamId, opts.signal ?? new AbortController().signal)
		} catch (e) {
			svc.log.debug('task poll failed', { task: task.id, error: String(e) })
		}
	}
	if (expired && !(update && isTerminal(update.status))) return applyUpdate(svc, task, { status: 'failed', error: 'task timed out: the upstream did not finish it' })
	return update ? applyUpdate(svc, task, update) : task
}
