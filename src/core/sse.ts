/**
 * Server-sent events: bytes ↔ frames. The only place in the gateway that sees SSE as text.
 * Parsing follows the WHATWG event-stream rules (https://html.spec.whatwg.org/multipage/server-sent-events.html):
 * lines end in LF, CR or CRLF; `data:` lines of one event join with LF; a blank line dispatches; `:` starts a comment.
 * @module
 */

export type SseFrame = {
	event?: string
	data: string
	id?: string
	/** The frame's text exactly as received, blank line included (absent for a last frame the stream did not end). */
	raw?: string
}

const encoder = new TextEncoder()

/**
 * The incremental parser: `push` takes the next piece of text and returns the frames it completed; `end` returns
 * the one an unterminated stream left. Never holds more than one unfinished event. With `keepRaw`, frames carry
 * their text as received (`raw`), for relays that forward what they do not change.
 */
export function createSseParser(keepRaw = false) {
	let buf = ''
	/** Complete lines of the frame in progress that earlier pieces delivered (its raw text so far). */
	let carried = ''
	let event: string | undefined
	let id: string | undefined
	let data: string[] = []
	let sawData = false
	let out: SseFrame[] = []
	/** Where the frame in progress starts in `buf`. */
	let blockStart = 0

	const dispatch = (raw: string | undefined) => {
		if (sawData) {
			const frame: SseFrame = { data: data.join('\n') }
			if (event !== undefined) frame.event = event
			if (id !== undefined) frame.id = id
			if (keepRaw && raw !== undefined) frame.raw = raw
			out.push(frame)
		}
		event = undefined
		data = []
		sawData = false
	}
	/** One line, without its terminator; `end` is where the next line starts. */
	const line = (l: string, end: number) => {
		if (l === '') {
			dispatch(keepRaw ? carried + buf.slice(blockStart, end) : undefined)
			carried = ''
			blockStart = end
			return
		}
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

	return {
		push(text: string): SseFrame[] {
			buf += text
			out = []
			blockStart = 0
			let start = 0
			// Vendors end lines with LF: find those natively. Only a buffer holding a CR needs the scan by character.
			if (buf.indexOf('\r') === -1) {
				for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n', start)) {
					// The shapes vendors send, `data: …` or `event: …` + `data: …`, then a blank line, read in one step
					// when a frame starts here; anything else goes line by line.
					if (start === blockStart && !sawData && event === undefined && carried === '') {
						let ev: string | undefined
						let d = start
						let end = nl
						if (buf.startsWith('event: ', start)) {
							ev = buf.slice(start + 7, nl)
							d = nl + 1
							end = buf.indexOf('\n', d)
						}
						if (end !== -1 && buf.charCodeAt(end + 1) === 10 && buf.startsWith('data: ', d)) {
							const frame: SseFrame = { data: buf.slice(d + 6, end) }
							if (ev !== undefined) frame.event = ev
							if (id !== undefined) frame.id = id
							if (keepRaw) frame.raw = buf.slice(start, end + 2)
							out.push(frame)
							start = blockStart = end + 2
							continue
						}
					}
					line(buf.slice(start, nl), nl + 1)
					start = nl + 1
				}
			} else {
				for (let i = 0; i < buf.length; i++) {
					const c = buf.charCodeAt(i)
					if (c !== 10 && c !== 13) continue
					// A CR at the very end may be the first half of CRLF: wait for more bytes.
					if (c === 13 && i === buf.length - 1) break
					const l = buf.slice(start, i)
					if (c === 13 && buf.charCodeAt(i + 1) === 10) i++
					line(l, i + 1)
					start = i + 1
				}
			}
			if (keepRaw) carried += buf.slice(blockStart, start)
			buf = buf.slice(start)
			return out
		},
		end(text = ''): SseFrame[] {
			buf += text
			out = []
			blockStart = 0
			if (buf.length) line(buf.replace(/\r$/, ''), buf.length)
			// Not terminated by a blank line: no raw text, so it is formatted afresh (with one) when relayed.
			dispatch(undefined)
			buf = ''
			carried = ''
			return out
		},
	}
}

/**
 * Parses an SSE byte stream into frames, incrementally (never buffers more than one unfinished event). Frames are
 * yielded one by one, not by `yield*` onto the parser's arrays: from an async generator that wraps each array in an
 * async-from-sync iterator.
 * @example for await (const f of parseSse(res.body!)) console.log(f.event, f.data)
 */
export async function* parseSse(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
	const decoder = new TextDecoder()
	const parser = createSseParser()
	for await (const chunk of body as AsyncIterable<Uint8Array>) for (const f of parser.push(decoder.decode(chunk, { stream: true }))) yield f
	for (const f of parser.end(decoder.decode())) yield f
}

/**
 * The frames each chunk of a ReadableStream completed, in batches, from its reader as a plain iterator (no generator
 * to resume per chunk), with each frame's `raw` text: the relay reads through this, forwards a batch in one write and
 * unchanged frames as they came.
 */
export function sseBatchReader(body: ReadableStream<Uint8Array>): AsyncIterator<SseFrame[], undefined> {
	const reader = body.getReader()
	const decoder = new TextDecoder()
	const parser = createSseParser(true)
	let ended = false
	const done = { value: undefined, done: true } as const
	return {
		async next() {
			while (!ended) {
				const r = await reader.read()
				if (r.done) {
					ended = true
					const last = parser.end(decoder.decode())
					if (last.length) return { value: last, done: false }
					break
				}
				const frames = parser.push(decoder.decode(r.value, { stream: true }))
				if (frames.length) return { value: frames, done: false }
			}
			return done
		},
		async return() {
			ended = true
			return done
		},
	}
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
