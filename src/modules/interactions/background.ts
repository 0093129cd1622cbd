/**
 * Background interactions (`background: true`, https://ai.google.dev/gemini-api/docs/background-execution): the
 * gateway runs the answer itself, for any model, as a stream nobody reads but this module. The POST waits only for
 * the relay to start (the reservation taken and the upstream answering: an unknown model, a short balance or a
 * refused request are the HTTP errors they always are, nothing kept), keeps the interaction `in_progress`, and
 * answers with it; `GET` polls it to its end, when the whole resource is written as any kept interaction is.
 *
 * The events of the run (as a stream would have sent them, `evt_0`…) are held in memory on the instance running it,
 * where `GET ?stream=true` (and a POST with `stream: true` too) follows them live, and kept with the row once it ended
 * so any instance replays them. `cancel` stops it by compare-and-set on the row: on its own instance at once, elsewhere
 * at the next heartbeat (the running instance touches the row every HEARTBEAT_MS and stops a run cancelled or deleted
 * meanwhile). Stopping cuts the upstream as a client that leaves a stream does: billed for what ran, no more. A run
 * whose instance died goes stale (store.ts STALE_MS) and reads as `failed`.
 * @module
 */
import type { Services } from '../../services'
import { parseSse } from '../../core/sse'
import { nextEventId, resumeAt, stepsOf } from './events'
import { DONE_FRAME } from '../../protocols/gemini-interactions/stream-encode'
import type { InteractionStore } from './store'

type Obj = Record<string, unknown>

export const HEARTBEAT_MS = 2_000

type Run = {
	events: string[]
	done: boolean
	/** Woken on each event and at the end. */
	wake: Set<() => void>
	stop(): void
}

/** The background interactions running on this instance, by id. */
const runs = new Map<string, Run>()

export const isRunningHere = (id: string) => runs.has(id)

export type BackgroundRun = {
	svc: Services
	store: InteractionStore
	accountId: number
	id: string
	/** The relay's stream (the Interactions events of the answer). */
	body: ReadableStream<Uint8Array>
	/** The whole interaction, once the stream completed (the codec's `keep`). */
	final: () => Obj | undefined
	/** The shell the interaction was kept with (status in_progress). */
	shell: Obj
}

/** Reads the run's stream to its end in the background, keeping its events and writing its end. */
export function runInBackground(r: BackgroundRun): void {
	const reader = r.body.getReader()
	let stopped = false
	const run: Run = {
		events: [],
		done: false,
		wake: new Set(),
		stop() {
			if (stopped || run.done) return
			stopped = true
			// As a client leaving a stream: the upstream is cut and what it produced billed (relay/stream-relay.ts).
			void reader.cancel().catch(() => {})
		},
	}
	const notify = () => {
		for (const w of run.wake) w()
		run.wake.clear()
	}
	runs.set(r.id, run)
	const beat = setInterval(() => {
		r.store
			.touch(r.id)
			.then((status) => status !== 'in_progress' && run.stop())
			.catch((e) => r.svc.log.warn('interaction heartbeat failed', { id: r.id, error: String(e) }))
	}, HEARTBEAT_MS)
	void (async () => {
		try {
			for await (const f of parseSse(readerIterable(reader))) {
				// The end marker is no event: the stream of the run adds it when it ends (events.ts `sseResponse`).
				if (f.data === DONE_FRAME.data) continue
				run.events.push(f.data)
				notify()
			}
		} catch (e) {
			if (!stopped) r.svc.log.warn('background interaction stream failed', { id: r.id, error: String(e) })
		}
		clearInterval(beat)
		try {
			const final = r.final()
			if (final && !stopped) {
				// Cancelled as it ended: it stays cancelled, with the whole answer it was billed for.
				if (!(await r.store.finish(r.id, final))) await r.store.finish(r.id, { ...final, status: 'cancelled' }, 'cancelled')
			}
			else if (stopped) {
				// Cancelled (or deleted): the stream closes as a cancelled interaction's does, with what it built.
				const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
				const shown = { ...r.shell, status: 'cancelled', updated: now }
				run.events.push(JSON.stringify({ event_type: 'interaction.status_update', interaction_id: r.id, status: 'cancelled', event_id: nextEventId(run.events) }))
				run.events.push(JSON.stringify({ event_type: 'interaction.completed', interaction: shown, event_id: nextEventId(run.events) }))
				await r.store.finish(r.id, { ...shown, steps: stepsOf(run.events) }, 'cancelled')
			} else await r.store.stop(r.accountId, r.id, 'failed')
			await r.store.saveEvents(r.id, run.events)
		} catch (e) {
			r.svc.log.warn('background interaction not written', { id: r.id, error: String(e) })
		}
		run.done = true
		runs.delete(r.id)
		notify()
	})()
}

async function* readerIterable(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array> {
	for (;;) {
		const { value, done } = await reader.read()
		if (done) return
		yield value
	}
}

/** Stops the run of `id` if it runs here (its row already moved to cancelled): the steps it had built, else undefined. */
export function stopHere(id: string): Obj[] | undefined {
	const run = runs.get(id)
	if (!run) return undefined
	run.stop()
	return stepsOf(run.events)
}

/**
 * The events of the run of `id` on this instance after `lastEventId`, live until it ends; undefined when it does
 * not run here. Throws the 400 of an unknown `lastEventId` before anything is sent.
 */
export function followHere(id: string, lastEventId: string | undefined, signal?: AbortSignal): AsyncIterable<string> | undefined {
	const run = runs.get(id)
	if (!run) return undefined
	let at = resumeAt(run.events, lastEventId)
	return {
		async *[Symbol.asyncIterator]() {
			for (;;) {
				while (at < run.events.length) yield run.events[at++]!
				if (run.done || signal?.aborted) return
				await new Promise<void>((wake) => run.wake.add(wake))
			}
		},
	}
}
