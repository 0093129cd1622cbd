/**
 * How a relay lets go of its upstream call when the client's stream ends: after a clean end the rest of the body is
 * drained (the connection goes back to the pool) and the call aborted only past the grace; after anything else, and
 * when the client leaves, it is aborted at once. The bill is settled in the turn the last chunk goes out either way.
 */
import { describe, expect, it } from 'bun:test'
import { drainingUpstreams, type RelayStep, relaySource, releaseAfterEnd } from '../../../src/relay/stream'
import { cutStreams } from '../../../src/relay/stream-relay'

/** An upstream call that records what the relay did with it. */
function call() {
	const log: string[] = []
	return { log, up: { abort: () => log.push('abort'), release: () => log.push('release') } }
}

/** A body's remaining reads: `n` chunks, then its end, or never an end. */
function rest(n: number, ends = true) {
	let reads = 0
	return {
		reads: () => reads,
		next: (): Promise<IteratorResult<unknown>> => {
			reads++
			if (reads <= n) return Promise.resolve({ value: [], done: false })
			return ends ? Promise.resolve({ value: undefined, done: true }) : new Promise(() => {})
		},
	}
}

const steps = (...list: RelayStep[]) => {
	let i = 0
	return async () => list[i++]!
}

describe('releaseAfterEnd', () => {
	it('should read the body to its end and release the call without aborting it', async () => {
		const { log, up } = call()
		const body = rest(2)
		releaseAfterEnd(up, body.next, 500)
		await Bun.sleep(20)
		expect(body.reads()).toBe(3)
		expect(log).toEqual(['release'])
	})
	it('should abort a call whose body stays open past the grace', async () => {
		const { log, up } = call()
		releaseAfterEnd(up, rest(0, false).next, 100)
		await Bun.sleep(40)
		expect(log).toEqual([])
		// The window clock ticks every 50 ms: the abort comes at most one tick after the grace.
		await Bun.sleep(160)
		expect(log).toEqual(['abort'])
	})
	it('should count the drain as pending until the body ends, for the idle collector', async () => {
		const { log, up } = call()
		let end!: () => void
		const before = drainingUpstreams()
		releaseAfterEnd(up, () => new Promise((r) => (end = () => r({ value: undefined, done: true }))), 500)
		expect(drainingUpstreams()).toBe(before + 1)
		await Bun.sleep(10)
		expect(drainingUpstreams()).toBe(before + 1)
		end()
		await Bun.sleep(10)
		expect(log).toEqual(['release'])
		expect(drainingUpstreams()).toBe(before)
	})
	it('should stop counting a drain it aborted', async () => {
		const { log, up } = call()
		const before = drainingUpstreams()
		releaseAfterEnd(up, rest(0, false).next, 60)
		expect(drainingUpstreams()).toBe(before + 1)
		await Bun.sleep(160)
		expect(log).toEqual(['abort'])
		expect(drainingUpstreams()).toBe(before)
	})
	it('should abort when reading the rest fails', async () => {
		const { log, up } = call()
		releaseAfterEnd(up, () => Promise.reject(new Error('reset')), 500)
		await Bun.sleep(20)
		expect(log).toEqual(['abort'])
	})
})

describe('relay pump (what the client stream runs)', () => {
	/** A sink that logs writes and the response's end into the same log as the upstream call and the bill. */
	const sink = (log: string[], opts: { slow?: boolean; turn?: boolean } = {}) => ({
		closed: false,
		write(chunk: string | Uint8Array) {
			log.push(`write ${chunk}`)
			return opts.slow ? Bun.sleep(5).then(() => log.push(`drained ${chunk}`)) : 1
		},
		end(last: string) {
			log.push(`end ${last}`)
			// Whatever runs after the end's turn (a microtask: the earliest anything else can run).
			if (opts.turn) queueMicrotask(() => log.push('later'))
		},
	})

	it('should write each step, end the response with the last one, bill in the same turn, then drain after a clean end', async () => {
		const { log, up } = call()
		const source = relaySource(up, async () => void log.push('bill'), () => 'failed', rest(0).next, steps({ text: 'a', last: false }, { text: 'b', last: true, clean: true }))
		await source.pump(sink(log, { turn: true }))
		await Bun.sleep(20)
		expect(log).toEqual(['write a', 'end b', 'bill', 'later', 'release'])
		expect(source.over).toBe(true)
	})
	it('should abort at once when the stream ends otherwise (a broken frame, an upstream error)', async () => {
		const { log, up } = call()
		const body = rest(0)
		const source = relaySource(up, async () => void log.push('bill'), () => 'failed', body.next, steps({ text: 'error frame', last: true }))
		await source.pump(sink(log))
		expect(log).toEqual(['end error frame', 'abort', 'bill'])
		expect(body.reads()).toBe(0)
	})
	it('should abort at once and settle when the client goes away', async () => {
		const { log, up } = call()
		const source = relaySource(up, async () => void log.push('bill'), () => 'failed', rest(0).next, steps({ text: 'a', last: false }))
		await source.return()
		expect(log).toEqual(['abort', 'bill'])
		expect(source.over).toBe(true)
	})
	it('should wait for a slow client before reading on (backpressure)', async () => {
		const { log, up } = call()
		let reads = 0
		const read = async () => {
			log.push(`read ${++reads}`)
			return reads < 3 ? { text: `t${reads}`, last: false } : { text: 'end', last: true, clean: true }
		}
		const source = relaySource(up, async () => void log.push('bill'), () => 'failed', rest(0).next, read)
		await source.pump(sink(log, { slow: true }))
		expect(log.slice(0, 7)).toEqual(['read 1', 'write t1', 'drained t1', 'read 2', 'write t2', 'drained t2', 'read 3'])
	})
	it('should abort and write the closing text when a read throws', async () => {
		const { log, up } = call()
		const source = relaySource(up, async () => void log.push('bill'), () => 'failed', rest(0).next, async () => {
			throw new Error('cut')
		})
		await source.pump(sink(log))
		expect(log).toEqual(['end failed', 'abort', 'bill'])
	})
	it('should stop without writing once the client is gone', async () => {
		const { log, up } = call()
		const s = sink(log)
		const source = relaySource(up, async () => void log.push('bill'), () => 'failed', rest(0).next, async () => {
			s.closed = true
			return { text: 'late', last: false }
		})
		await source.pump(s)
		expect(log).toEqual([])
	})
	it('should end a stream cut at shutdown with the error event, not the upstream failure, abort and bill it', async () => {
		const log: string[] = []
		let fail: (e: Error) => void = () => {}
		const up = { abort: () => (log.push('abort'), fail(new Error('aborted'))), release: () => log.push('release') }
		let reads = 0
		const source = relaySource(up, async () => void log.push('bill'), () => 'failed', rest(0).next, () =>
			++reads === 1 ? Promise.resolve({ text: 'a', last: false }) : new Promise((_, no) => (fail = no)),
		)
		const pumped = source.pump(sink(log))
		await Bun.sleep(5)
		await Promise.all([cutStreams(1_000), pumped])
		expect(log).toEqual(['write a', 'abort', 'end error shutting_down', 'abort', 'bill'])
		expect(source.over).toBe(true)
	})
})
