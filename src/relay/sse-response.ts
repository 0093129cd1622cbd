/**
 * Turns an async generator of SSE bytes into a streaming Response: pull-based (backpressure: the generator runs only
 * as fast as the client reads), with a keepalive comment whenever nothing was sent for a while (long silent
 * reasoning must not trip proxies' idle timeouts, WIRE-NOTES #19), and with client disconnects reaching the
 * generator's `finally` (through `return()`), which is where the relay settles the bill.
 * @module
 */
import { SSE_HEADERS, SSE_KEEPALIVE } from '../core/sse'

export const KEEPALIVE_MS = 15_000

export function sseResponse(gen: AsyncGenerator<Uint8Array>, onCancel: () => void, headers: Record<string, string>, keepaliveMs = KEEPALIVE_MS): Response {
	let lastSent = Date.now()
	let closed = false
	let timer: ReturnType<typeof setInterval> | undefined
	const stop = () => {
		closed = true
		if (timer) clearInterval(timer)
	}
	const body = new ReadableStream<Uint8Array>(
		{
			start(controller) {
				timer = setInterval(
					() => {
						if (closed || Date.now() - lastSent < keepaliveMs) return
						try {
							controller.enqueue(SSE_KEEPALIVE)
							lastSent = Date.now()
						} catch {
							stop()
						}
					},
					Math.max(250, keepaliveMs / 3),
				)
			},
			async pull(controller) {
				try {
					const { value, done } = await gen.next()
					if (closed) return
					if (done) {
						stop()
						controller.close()
						return
					}
					lastSent = Date.now()
					controller.enqueue(value)
				} catch (e) {
					stop()
					controller.error(e)
				}
			},
			async cancel() {
				stop()
				onCancel()
				await gen.return(undefined)
			},
		},
		{ highWaterMark: 0 },
	)
	return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...headers } })
}
