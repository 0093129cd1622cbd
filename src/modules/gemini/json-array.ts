/**
 * `:streamGenerateContent` without `alt=sse`: Google streams one JSON array whose elements are the chunks
 * (WIRE-NOTES wire §16), and an error as a one-element array `[{"error":…}]`. The relay produces SSE, so its frames
 * are rewritten as array elements here as they arrive; a client disconnect cancels the SSE body underneath, which
 * settles the bill.
 * @module
 */
import { parseSse } from '../../core/sse'

const encoder = new TextEncoder()

/** The relay's answer (an SSE stream, or a JSON error) in the JSON-array form. */
export async function toJsonArray(res: Response): Promise<Response> {
	const headers = new Headers(res.headers)
	headers.set('content-type', 'application/json; charset=utf-8')
	if (!res.ok || !res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
		const text = await res.text()
		return new Response(res.ok ? text : `[${text}]`, { status: res.status, headers })
	}
	const frames = parseSse(res.body)[Symbol.asyncIterator]()
	let first = true
	const body = new ReadableStream<Uint8Array>(
		{
			async pull(controller) {
				const r = await frames.next()
				if (r.done) {
					controller.enqueue(encoder.encode(first ? '[]' : ']'))
					controller.close()
					return
				}
				controller.enqueue(encoder.encode((first ? '[' : '\r\n,') + r.value.data))
				first = false
			},
			async cancel() {
				await frames.return?.(undefined)
			},
		},
		{ highWaterMark: 0 },
	)
	return new Response(body, { status: res.status, headers })
}
