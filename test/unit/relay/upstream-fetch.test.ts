import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { fetchUpstream } from '../../../src/relay/upstream-fetch'
import { watchLateness } from '../../helpers/lateness'

// An upstream that answers at once with a body it never finishes, and notes when a call's request is aborted.
const aborted: string[] = []
let server: ReturnType<typeof Bun.serve>
let url: string

beforeAll(() => {
	server = Bun.serve({
		port: 0,
		hostname: '127.0.0.1',
		fetch(req) {
			const id = new URL(req.url).searchParams.get('id') ?? ''
			req.signal.addEventListener('abort', () => aborted.push(id))
			if (id.startsWith('slow')) return Bun.sleep(5_000).then(() => new Response('late'))
			// A first frame, then a second one `gap` ms later, then silence.
			const gap = Number(new URL(req.url).searchParams.get('gap') ?? 0)
			if (gap)
				return new Response(
					new ReadableStream({
						async start(c) {
							c.enqueue(new TextEncoder().encode('data: first\n\n'))
							await Bun.sleep(gap)
							c.enqueue(new TextEncoder().encode('data: second\n\n'))
						},
					}),
					{ headers: { 'content-type': 'text/event-stream' } },
				)
			return new Response(
				new ReadableStream({
					start(c) {
						c.enqueue(new TextEncoder().encode('data: first\n\n'))
					},
				}),
				{ headers: { 'content-type': 'text/event-stream' } },
			)
		},
	})
	url = `http://127.0.0.1:${server.port}/v1/chat/completions`
})

afterAll(() => server.stop(true))

const TIMEOUTS = { firstByteMs: 2_000, idleMs: 10_000 }
const post = (id: string, client: AbortSignal) => fetchUpstream(`${url}?id=${id}`, { headers: {}, body: '{}' }, TIMEOUTS, client)

async function until(test: () => boolean, ms = 1_000) {
	const end = Date.now() + ms
	while (!test()) {
		if (Date.now() > end) throw new Error('condition not met in time')
		await Bun.sleep(5)
	}
}

describe('fetchUpstream', () => {
	it('should say the client is gone once its request is aborted, so a failure then is not blamed on the upstream', async () => {
		const client = new AbortController()
		const up = await post('gone', client.signal)
		expect(up.clientGone).toBe(false)
		client.abort()
		expect(up.clientGone).toBe(true)
		up.abort()
	})

	it('should abort the upstream call and run the relay hook when the client goes away mid-answer', async () => {
		const client = new AbortController()
		const up = await post('mid', client.signal)
		const reader = up.res.body!.getReader()
		expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n')
		let read: Promise<unknown> | undefined
		up.onClientGone(() => (read = reader.read().then(() => 'read', () => 'aborted')))
		client.abort()
		expect(await read).toBe('aborted')
		await until(() => aborted.includes('mid'))
	})

	it('should not run the hook once the relay released the call', async () => {
		const client = new AbortController()
		const up = await post('released', client.signal)
		let ran = 0
		up.onClientGone(() => ran++)
		up.abort()
		client.abort()
		up.onClientGone(() => ran++)
		expect(ran).toBe(0)
	})

	it('should run the hook at once when the client is already gone', async () => {
		const client = new AbortController()
		const up = await post('gone', client.signal)
		client.abort()
		let ran = 0
		up.onClientGone(() => ran++)
		expect(ran).toBe(1)
	})

	it('should fail with client_closed when the client leaves before the upstream answers', async () => {
		const client = new AbortController()
		const pending = post('slow-1', client.signal).catch((e: unknown) => e)
		await Bun.sleep(50)
		client.abort()
		const e = await pending
		expect(e).toBeInstanceOf(GatewayError)
		expect((e as GatewayError).code).toBe('client_closed')
		await until(() => aborted.includes('slow-1'))
	})

	it('should fail with upstream_timeout when no headers come within the first-byte timeout', async () => {
		const e = await fetchUpstream(`${url}?id=slow-2`, { headers: {}, body: '{}' }, { firstByteMs: 100, idleMs: 10_000 }, new AbortController().signal).catch((x: unknown) => x)
		expect(e).toBeInstanceOf(GatewayError)
		expect((e as GatewayError).code).toBe('upstream_timeout')
	})

	it('should time out each call at its own deadline, and never a call whose headers came', async () => {
		const started = performance.now()
		const lateness = watchLateness()
		const answered = await fetchUpstream(`${url}?id=answered`, { headers: {}, body: '{}' }, { firstByteMs: 100, idleMs: 10_000 }, new AbortController().signal)
		const times = await Promise.all(
			[100, 400].map((ms, i) =>
				fetchUpstream(`${url}?id=slow-at-${i}`, { headers: {}, body: '{}' }, { firstByteMs: ms, idleMs: 10_000 }, new AbortController().signal).catch((e: GatewayError) => {
					expect(e.code).toBe('upstream_timeout')
					return performance.now() - started
				}),
			),
		)
		// Each fired after its own timeout (with some scheduling slack, and as late as this machine's timers ran), not
		// with the other.
		const late = lateness.stop()
		expect(times[0]).toBeGreaterThanOrEqual(100)
		expect(times[0]).toBeLessThan(300 + late)
		expect(times[1]).toBeGreaterThanOrEqual(400)
		expect(times[1]).toBeLessThan(600 + late)
		// Long past its own 100 ms, the call that got its headers is still open: its body reads on.
		expect(aborted).not.toContain('answered')
		answered.abort()
	})

	describe('idle timeout of a body read as SSE', () => {
		const watched = (id: string, idleMs: number, query = '') => fetchUpstream(`${url}?id=${id}${query}`, { headers: {}, body: '{}' }, { firstByteMs: 2_000, idleMs }, new AbortController().signal)

		it('should abort the call once a read has waited idleMs, to within two ticks of the shared clock', async () => {
			const up = await watched('idle-300', 300)
			const it = up.sse()
			expect((await it.next()).value?.map((f) => f.data)).toEqual(['first'])
			const started = performance.now()
			const lateness = watchLateness()
			const e = await it.next().catch((x: unknown) => x)
			const took = performance.now() - started
			expect(e).toBeInstanceOf(GatewayError)
			expect((e as GatewayError).code).toBe('upstream_timeout')
			expect(took).toBeGreaterThanOrEqual(300)
			expect(took).toBeLessThan(300 + 2 * 50 + 100 + lateness.stop())
			await until(() => aborted.includes('idle-300'))
			up.abort()
		})

		it('should restart the idle time at every chunk', async () => {
			const up = await watched('idle-gap', 500, '&gap=300')
			const it = up.sse()
			expect((await it.next()).value?.map((f) => f.data)).toEqual(['first'])
			// 300 ms after the first frame, under the 500 ms idle timeout: it comes.
			expect((await it.next()).value?.map((f) => f.data)).toEqual(['second'])
			up.abort()
		})

		it('should not count the time the relay does not read (a slow client holding it back)', async () => {
			// The second frame comes 600 ms after the first, past the 300 ms idle timeout, but no read waits meanwhile.
			const up = await watched('idle-unread', 300, '&gap=600')
			const it = up.sse()
			expect((await it.next()).value?.map((f) => f.data)).toEqual(['first'])
			await Bun.sleep(800)
			expect((await it.next()).value?.map((f) => f.data)).toEqual(['second'])
			expect(aborted).not.toContain('idle-unread')
			up.abort()
		})

		it('should stop watching once the relay lets the call go', async () => {
			const up = await watched('idle-released', 200)
			const it = up.sse()
			await it.next()
			up.release()
			await Bun.sleep(400)
			expect(aborted).not.toContain('idle-released')
			up.abort()
		})
	})
})
