/**
 * The clock of a mock task: it advances one step each time someone asks about it, so tests decide how many polls a
 * task takes (`steps`) and whether it ends in failure (`#fail` in its prompt).
 * @module
 */

export type Phase = 'queued' | 'running' | 'done' | 'failed'

export interface MockTask {
	id: string
	prompt: string
	/** Times its state was read. */
	polls: number
	/** Reads until it finishes. */
	steps: number
	fails: boolean
	createdAt: number
	/** Anything the vendor keeps (action, model, parent …). */
	meta: Record<string, unknown>
}

/** The phase after `polls` reads: queued before the first, running while under `steps`, then done or failed. */
export function phaseOf(t: MockTask): Phase {
	if (t.polls === 0) return 'queued'
	if (t.polls < t.steps) return 'running'
	return t.fails ? 'failed' : 'done'
}

/** Progress in percent for the phase. */
export const percentOf = (t: MockTask): number => (phaseOf(t) === 'done' ? 100 : phaseOf(t) === 'queued' ? 0 : Math.floor((Math.min(t.polls, t.steps) / t.steps) * 100))

/** Counts one read and returns the new phase. */
export function poll(t: MockTask): Phase {
	t.polls++
	return phaseOf(t)
}

export interface TaskMockOptions {
	/** The only key the mock accepts. */
	apiKey: string
	/** Reads a task takes to finish (default 2: the first read says running, the second done). */
	steps?: number
}
