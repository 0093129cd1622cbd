/** Stream helpers shared by the codec tests: arrays as async iterables, encoded frames as the Response a client gets. */
import { formatSse, SSE_HEADERS, type SseFrame } from '../../src/core/sse'

export async function* from<T>(items: T[]): AsyncGenerator<T> {
	for (const x of items) yield x
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
	const out: T[] = []
	for await (const x of it) out.push(x)
	return out
}

/** Frames (an array, or an async stream encoded as it is read) → an SSE `Response`, as the gateway sends it. */
export function sseResponse(frames: SseFrame[] | AsyncIterable<SseFrame>): Response {
	if (Array.isArray(frames)) return new Response(frames.map(formatSse).join(''), { headers: SSE_HEADERS })
	const enc = new TextEncoder()
	const it = frames[Symbol.asyncIterator]()
	const body = new ReadableStream<Uint8Array>({
		async pull(controller) {
			const { value, done } = await it.next()
			if (done) controller.close()
			else controller.enqueue(enc.encode(formatSse(value)))
		},
	})
	return new Response(body, { headers: SSE_HEADERS })
}
