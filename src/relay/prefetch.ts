/**
 * The prefetch window: a stream's first reads are held back until content arrives (or the window ends), so an
 * upstream that fails at once can still fail over to another channel before the client has seen anything
 * (WIRE-NOTES wire §21).
 * @module
 */
import type { SseFrame } from '../core/sse'

/** How long to wait for the first content before committing to this channel. */
export const FIRST_EVENT_WINDOW_MS = 1_000

/**
 * The clock of the prefetch windows (and of the drains after a stream's end, which watch it for their grace): one
 * timer for every stream rather than a timer set and cleared per stream (most windows end at the first read). The
 * upstream calls' idle watch has a clock of its own (relay/upstream-fetch.ts). It ticks every WINDOW_TICK_MS while
 * reads wait on it or watchers watch it, and stops at a tick that finds neither, so a window ends at most one tick
 * late. Each waiting read registers its own resolver and removes it when the read wins: a `Promise.race` against one shared tick promise would instead leave a reaction on
 * it per read, keeping every read's result (the upstream's first frames) alive until the tick (measured: 7 µs of CPU
 * per stream and ~25 MB of peak RSS at 64 streamed connections).
 */
const WINDOW_TICK_MS = 50
const waiting = new Set<(v: 'tick') => void>()
/** Called at every tick, with the tick's `performance.now()`, until taken off (the drains of ended streams, src/relay/stream-relay.ts). */
const watchers = new Set<(now: number) => void>()
let clock: ReturnType<typeof setInterval> | undefined

function onTick() {
	if (waiting.size === 0 && watchers.size === 0) {
		clearInterval(clock)
		clock = undefined
		return
	}
	for (const resolve of waiting) resolve('tick')
	waiting.clear()
	if (watchers.size === 0) return
	// One clock read per tick, not one per watcher: thousands of open streams each watch it.
	const now = performance.now()
	for (const watch of watchers) watch(now)
}

/** Calls `fn` at every tick of the windows' clock until `unwatchTicks(fn)`. */
export function watchTicks(fn: (now: number) => void) {
	watchers.add(fn)
	clock ??= setInterval(onTick, WINDOW_TICK_MS)
}

export function unwatchTicks(fn: (now: number) => void) {
	watchers.delete(fn)
}

/** `next`'s result, or 'tick' if the clock ticks first. */
export function untilTick<T>(next: Promise<T>): Promise<T | 'tick'> {
	const { promise, resolve, reject } = Promise.withResolvers<T | 'tick'>()
	waiting.add(resolve)
	clock ??= setInterval(onTick, WINDOW_TICK_MS)
	next.then(
		(v) => {
			waiting.delete(resolve)
			resolve(v)
		},
		(e) => {
			waiting.delete(resolve)
			reject(e)
		},
	)
	return promise
}

/** Reads items while they are only preamble (per `isPreamble`), up to the window. */
export async function prefetch<T>(it: AsyncIterator<T>, isPreamble: (v: T) => boolean, windowMs: number) {
	const buffered: T[] = []
	// Monotonic: a wall-clock change must not stretch or cut the window.
	const deadline = performance.now() + windowMs
	let next = it.next()
	while (true) {
		const r = await untilTick(next)
		if (r === 'tick') {
			if (performance.now() >= deadline) return { buffered, pending: next, done: false }
			continue
		}
		if (r.done) return { buffered, pending: undefined, done: true }
		buffered.push(r.value)
		if (!isPreamble(r.value)) return { buffered, pending: undefined, done: false }
		next = it.next()
	}
}

/** A frame predicate's counterpart for whole batches, made once per predicate (not a closure per stream). */
const allPreamble = new WeakMap<(f: SseFrame) => boolean, (b: SseFrame[]) => boolean>()
const toUndefined = () => undefined

/**
 * The prefetch window over an upstream's frame batches: `frames`, all it read; `head`, those up to the first that is
 * not preamble (only they decide failover, as when frames were awaited one at a time). Undefined when the upstream's
 * body failed inside the window.
 */
export async function prefetchFrames(it: AsyncIterator<SseFrame[], undefined>, isPreamble: (f: SseFrame) => boolean) {
	let batchIsPreamble = allPreamble.get(isPreamble)
	if (!batchIsPreamble) allPreamble.set(isPreamble, (batchIsPreamble = (b) => b.every(isPreamble)))
	const pre = await prefetch(it, batchIsPreamble, FIRST_EVENT_WINDOW_MS).catch(toUndefined)
	if (!pre) return undefined
	const frames = pre.buffered.length === 1 ? pre.buffered[0]! : pre.buffered.flat()
	// Where content starts in the last batch the window read (its length: all preamble, as the earlier ones were).
	const last = pre.buffered.length ? pre.buffered[pre.buffered.length - 1]! : []
	let contentAt = 0
	while (contentAt < last.length && isPreamble(last[contentAt]!)) contentAt++
	const head = contentAt === last.length ? frames : frames.slice(0, frames.length - last.length + contentAt + 1)
	return { pre, frames, head }
}

export type FramesPrefetched = NonNullable<Awaited<ReturnType<typeof prefetchFrames>>>
