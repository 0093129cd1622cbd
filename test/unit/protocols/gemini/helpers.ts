/** Shared helpers for the Gemini codec tests: fixtures, event collection, SSE bodies. */
import { join } from 'node:path'
import type { StreamEvent } from '../../../../src/core/events'
import { parseSse, type SseFrame } from '../../../../src/core/sse'
export { sseResponse } from '../../../helpers/sse'

const FIXTURES = join(import.meta.dir, '../../../fixtures/gemini')

export const fixtureText = (name: string): Promise<string> => Bun.file(join(FIXTURES, name)).text()

export const fixtureJson = async <T = unknown>(name: string): Promise<T> => JSON.parse(await fixtureText(name)) as T

/** A fixture's SSE frames, parsed by the gateway's own SSE parser (as the relay does). */
export async function* fixtureFrames(name: string): AsyncGenerator<SseFrame> {
	const body = new Response(await fixtureText(name)).body
	if (!body) throw new Error('no body')
	yield* parseSse(body)
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
	const out: T[] = []
	for await (const x of it) out.push(x)
	return out
}

export async function* fromArray<T>(items: T[]): AsyncGenerator<T> {
	for (const x of items) yield x
}


/** Asserts the canonical stream invariants: one start first, strictly nested blocks, increasing indexes, one terminal. */
export function checkInvariants(events: StreamEvent[]): void {
	if (events[0]?.type !== 'start') throw new Error('first event must be start')
	if (events.filter((e) => e.type === 'start').length !== 1) throw new Error('exactly one start')
	let open: number | undefined
	let nextIndex = 0
	for (const e of events) {
		if (e.type === 'block_start') {
			if (open !== undefined) throw new Error(`block ${e.index} opened while ${open} is open`)
			if (e.index !== nextIndex) throw new Error(`block index ${e.index}, expected ${nextIndex}`)
			open = e.index
			nextIndex++
		} else if (e.type === 'block_stop') {
			if (open !== e.index) throw new Error(`block_stop ${e.index} but open is ${open}`)
			open = undefined
		} else if ('index' in e && e.index !== open) throw new Error(`${e.type} for block ${e.index} but open is ${open}`)
	}
	if (open !== undefined) throw new Error('a block is left open')
	const last = events[events.length - 1]
	if (last.type !== 'finish' && last.type !== 'error') throw new Error('must end with finish or error')
	if (events.filter((e) => e.type === 'finish' || e.type === 'error').length !== 1) throw new Error('exactly one terminal event')
	const finishAt = events.findIndex((e) => e.type === 'finish')
	if (finishAt !== -1 && events.slice(finishAt + 1).length) throw new Error('events after finish')
}
