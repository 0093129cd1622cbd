/**
 * Server-sent events: bytes ↔ frames. The only place in the gateway that sees SSE as text.
 * Parsing follows the WHATWG event-stream rules (https://html.spec.whatwg.org/multipage/server-sent-events.html):
 * lines end in LF, CR or CRLF; `data:` lines of one event join with LF; a blank line dispatches; `:` starts a comment.
 * @module
 */

export type SseFrame = { event?: string; data: string; id?: string }

const encoder = new TextEncoder()

/**
 * Parses an SSE byte stream into frames, incrementally (never buffers more than one unfinished event).
 * @example for await (const f of parseSse(res.body!)) console.log(f.event, f.data)
 */
export async function* parseSse(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
	for await (const batch of parseSseBatches(body)) yield* batch
}

/**
 * Like `parseSse`, but yields the frames each chunk of the body completed together, so a relay can forward them in
 * one write (vendors often send several events per chunk) and need not resume a generator per frame.
 * @example for await (const frames of parseSseBatches(res.body!)) console.log(frames.length)
 */
export async function* parseSseBatches(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<SseFrame[]> {
	const decoder = new TextDecoder()
	let buf = ''
	let event: string | undefined
	let id: string | undefined
	let data: string[] = []
	let sawData = false
	const dispatch = (): SseFrame | undefined => {
		if (!sawData) {
			event = undefined
			return
		}
		const frame: SseFrame = { data: data.join('\n') }
		if (event !== undefined) frame.event = event
		if (id !== undefined) frame.id = id
		event = undefined
		data = []
		sawData = false
		return frame
	}
	const line = (l: string): SseFrame | undefined => {
		if (l === '') return dispatch()
		if (l.charCodeAt(0) === 58 /* : */) return
		const colon = l.indexOf(':')
		const field = colon === -1 ? l : l.slice(0, colon)
		let value = colon === -1 ? '' : l.slice(colon + 1)
		if (value.charCodeAt(0) === 32) value = value.slice(1)
		if (field === 'data') {
			data.push(value)
			sawData = true
		} else if (field === 'event') event = value
		else if (field === 'id') id = value
	}
	for await (const chunk of body as AsyncIterable<Uint8Array>) {
		buf += decoder.decode(chunk, { stream: true })
		const frames: SseFrame[] = []
		let start = 0
		// Vendors end lines with LF: find those natively. Only a buffer holding a CR needs the scan by character.
		if (buf.indexOf('\r') === -1) {
			for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n', start)) {
				const frame = line(buf.slice(start, nl))
				start = nl + 1
				if (frame) frames.push(frame)
			}
		} else {
			for (let i = 0; i < buf.length; i++) {
				const c = buf.charCodeAt(i)
				if (c !== 10 && c !== 13) continue
				// A CR at the very end may be the first half of CRLF: wait for more bytes.
				if (c === 13 && i === buf.length - 1) break
				const frame = line(buf.slice(start, i))
				if (frame) frames.push(frame)
				if (c === 13 && buf.charCodeAt(i + 1) === 10) i++
				start = i + 1
			}
		}
		buf = buf.slice(start)
		if (frames.length) yield frames
	}
	buf += decoder.decode()
	const frames: SseFrame[] = []
	if (buf.length) {
		const frame = line(buf.replace(/\r$/, ''))
		if (frame) frames.push(frame)
	}
	const last = dispatch()
	if (last) frames.push(last)
	if (frames.length) yield frames
}

/** Encodes one frame. `data` containing newlines becomes several `data:` lines. */
export function encodeSse(frame: SseFrame): Uint8Array {
	return encoder.encode(formatSse(frame))
}

export function formatSse(frame: SseFrame): string {
	let out = ''
	if (frame.event !== undefined) out += `event: ${frame.event}\n`
	if (frame.id !== undefined) out += `id: ${frame.id}\n`
	out += frame.data.indexOf('\n') === -1 ? `data: ${frame.data}\n\n` : frame.data.split('\n').map((d) => `data: ${d}\n`).join('') + '\n'
	return out
}

/** An SSE comment line; clients ignore it, proxies see traffic (keeps idle timeouts from firing). */
export const SSE_KEEPALIVE = encoder.encode(': keepalive\n\n')

export const SSE_HEADERS = {
	'content-type': 'text/event-stream; charset=utf-8',
	'cache-control': 'no-cache',
	connection: 'keep-alive',
	'x-accel-buffering': 'no',
} as const
