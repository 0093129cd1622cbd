/** Shared test helpers for the Anthropic codec: fixture loading, event collection and SSE responses. */
import type { StreamEvent } from '../../../../src/core/events'
import { parseSse, type SseFrame } from '../../../../src/core/sse'
export { collect, from, sseResponse } from '../../../helpers/sse'

const FIXTURES = new URL('../../../fixtures/anthropic-messages/', import.meta.url)

export const fixturePath = (name: string) => new URL(name, FIXTURES)

/** A recorded upstream body as SSE frames, parsed incrementally from the file stream. */
export const fixtureFrames = (name: string): AsyncIterable<SseFrame> => parseSse(Bun.file(fixturePath(name)).stream())

export const fixtureJson = async <T = unknown>(name: string): Promise<T> => (await Bun.file(fixturePath(name)).json()) as T




/** Data objects of encoded frames, for assertions on the wire shape. */
export const payloads = (frames: SseFrame[]) => frames.map((f) => JSON.parse(f.data) as Record<string, unknown>)

/**
 * Checks the canonical stream contract: one start first (unless the stream is only an error), strictly nested
 * blocks with increasing indexes, usage before the single finish, error or finish last.
 */
export function assertContract(events: StreamEvent[]): void {
	const fail = (m: string) => {
		throw new Error(`stream contract: ${m}\n${JSON.stringify(events, null, 1)}`)
	}
	if (events[0]?.type !== 'start' && !(events.length === 1 && events[0]?.type === 'error')) {
		if (events.find((e) => e.type !== 'error' && e.type !== 'ping')) fail('first event is not start')
	}
	if (events.filter((e) => e.type === 'start').length > 1) fail('more than one start')
	let open: number | undefined
	let expected = 0
	let finished = false
	for (const e of events) {
		if (finished) fail('event after finish')
		if (e.type === 'block_start') {
			if (open !== undefined) fail(`block ${e.index} opened while ${open} is open`)
			if (e.index !== expected) fail(`block index ${e.index}, expected ${expected}`)
			open = e.index
			expected++
		} else if (e.type === 'block_stop') {
			if (open !== e.index) fail(`stop of ${e.index} while ${open} is open`)
			open = undefined
		} else if (e.type === 'text_delta' || e.type === 'thinking_delta' || e.type === 'signature_delta' || e.type === 'json_delta') {
			if (open !== e.index) fail(`delta for ${e.index} while ${open} is open`)
		} else if (e.type === 'finish') {
			if (open !== undefined) fail('finish with an open block')
			finished = true
		} else if (e.type === 'error' && open !== undefined) fail('error with an open block')
	}
	const last = events[events.length - 1]
	if (last && last.type !== 'finish' && last.type !== 'error') fail(`last event is ${last.type}`)
}

/** A `fetch` that answers every request with `serve()` (SDK clients accept a custom fetch). */
export const fakeFetch = (serve: () => Response): typeof fetch =>
	Object.assign(async () => serve(), { preconnect: () => {} }) as typeof fetch
