/** The shared body-read deadline (http/body-deadline.ts): one sweep for every waiting read, longer for a large body. */
import { describe, expect, it } from 'bun:test'
import { BodyReadTimeout, bodyTimeoutOf, createBodyDeadline, readsUnderDeadline } from '../../../src/http/body-deadline'
import { watchLateness } from '../../helpers/lateness'

describe('createBodyDeadline', () => {
	it('should pass a read that settles in time through, and fail one that does not, marking its request', async () => {
		const reads = createBodyDeadline(100)
		const request = new Request('http://x/', { method: 'POST', body: 'x' })
		const never = new Promise<string>(() => {})
		const started = Date.now()
		const lateness = watchLateness()
		const [fast, slow] = await Promise.allSettled([reads.within(Promise.resolve('body')), reads.within(never, request)])
		expect(fast).toEqual({ status: 'fulfilled', value: 'body' })
		expect(slow.status).toBe('rejected')
		expect((slow as PromiseRejectedResult).reason).toBeInstanceOf(BodyReadTimeout)
		expect(Date.now() - started).toBeGreaterThanOrEqual(100)
		expect(Date.now() - started).toBeLessThan(400 + lateness.stop())
		expect(bodyTimeoutOf(request)?.timeoutMs).toBe(100)
		expect(reads.waiting).toBe(0)
		reads.stop()
	})

	it('should give a large body longer, by its length past 1 MiB at 128 KiB/s, and a small one the deadline alone', async () => {
		const reads = createBodyDeadline(100)
		const sized = (bytes: number) => new Request('http://x/', { method: 'POST', headers: { 'content-length': String(bytes) } })
		const small = sized(1024 * 1024)
		// 32 KiB past the MiB: 250 ms more.
		const large = sized(1024 * 1024 + 32 * 1024)
		const never = new Promise<string>(() => {})
		const started = Date.now()
		const lateness = watchLateness()
		const smallRead = reads.within(never, small).catch(() => Date.now() - started)
		const largeRead = reads.within(never, large).catch(() => Date.now() - started)
		// CI saw the small read fail at 398 ms on a loaded VM: it may be as late as the machine's timers, not 250 ms more.
		const smallTook = await smallRead
		expect(smallTook).toBeLessThan(300 + lateness.stop())
		expect(await largeRead).toBeGreaterThanOrEqual(350)
		expect(bodyTimeoutOf(small)?.timeoutMs).toBe(100)
		expect(bodyTimeoutOf(large)?.timeoutMs).toBe(350)
		reads.stop()
	})

	it('should keep a failed read’s own error, and not mark its request', async () => {
		const reads = createBodyDeadline(1_000)
		const request = new Request('http://x/', { method: 'POST', body: 'x' })
		await expect(reads.within(Promise.reject(new Error('connection closed')), request)).rejects.toThrow('connection closed')
		expect(bodyTimeoutOf(request)).toBeUndefined()
		expect(reads.waiting).toBe(0)
		reads.stop()
	})

	it('should put the request’s own reads under it, leaving what they read unchanged', async () => {
		const reads = createBodyDeadline(1_000)
		const request = new Request('http://x/', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } })
		readsUnderDeadline(request, reads)
		const read = request.json()
		expect(reads.waiting).toBe(1)
		expect(await read).toEqual({ a: 1 })
		expect(reads.waiting).toBe(0)
		reads.stop()
	})
})
