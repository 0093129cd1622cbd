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
 * their text as received (`raw`), for relays that forward what they do not change. A class rather than closures: one
 * runs per stream, and its state as fields costs one object where closures cost a function and a scope each.
 */
export class SseParser {
	private buf = ''
	/** Complete lines of the frame in progress that earlier pieces delivered (its raw text so far). */
	private carried = ''
	private event: string | undefined = undefined
	private id: string | undefined = undefined
	private data: string[] = []
	private sawData = false
	private out: SseFrame[] = []
	/** Where the frame in progress starts in `buf`. */
	private blockStart = 0

	constructor(private readonly keepRaw = false) {}

	private dispatch(raw: string | undefined) {
		if (this.sawData) {
			const frame: SseFrame = { data: this.data.join('\n') }
			if (this.event !== undefined) frame.event = this.event
			if (this.id !== undefined) frame.id = this.id
			if (this.keepRaw && raw !== undefined) frame.raw = raw
			this.out.push(frame)
			this.data = []
		}
		this.event = undefined
		this.sawData = false
	}

	/** One line, without its terminator; `end` is where the next line starts. */
	private line(l: string, end: number) {
		if (l === '') {
			this.dispatch(this.keepRaw ? this.carried + this.buf.slice(this.blockStart, end) : undefined)
			this.carried = ''
			this.blockStart = end
			return
		}
		if (l.charCodeAt(0) === 58 /* : */) return
		const colon = l.indexOf(':')
		const field = colon === -1 ? l : l.slice(0, colon)
		let value = colon === -1 ? '' : l.slice(colon + 1)
		if (value.charCodeAt(0) === 32) value = value.slice(1)
		if (field === 'data') {
			this.data.push(value)
			this.sawData = true
		} else if (field === 'event') this.event = value
		else if (field === 'id') this.id = value
	}

	push(text: string): SseFrame[] {
		const buf = (this.buf += text)
		const out: SseFrame[] = (this.out = [])
		this.blockStart = 0
		let start = 0
		// Vendors end lines with LF: find those natively. Only a buffer holding a CR needs the scan by character.
		if (buf.indexOf('\r') === -1) {
			for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n', start)) {
				// The shapes vendors send, `data: …` or `event: …` + `data: …`, then a blank line, read in one step
				// when a frame starts here; anything else goes line by line.
				if (start === this.blockStart && !this.sawData && this.event === undefined && this.carried === '') {
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
						if (this.id !== undefined) frame.id = this.id
						if (this.keepRaw) frame.raw = buf.slice(start, end + 2)
						out.push(frame)
						start = this.blockStart = end + 2
						continue
					}
				}
				this.line(buf.slice(start, nl), nl + 1)
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
				this.line(l, i + 1)
				start = i + 1
			}
		}
		if (this.keepRaw) this.carried += buf.slice(this.blockStart, start)
		this.buf = buf.slice(start)
		return out
	}

	/** Nothing of a frame is held: the text so far ended exactly where a frame (or a blank line) did. */
	get atBoundary(): boolean {
		return this.buf === '' && this.carried === '' && !this.sawData && this.event === undefined
	}

	end(text = ''): SseFrame[] {
		this.buf += text
		this.out = []
		this.blockStart = 0
		if (this.buf.length) this.line(this.buf.replace(/\r$/, ''), this.buf.length)
		// Not terminated by a blank line: no raw text, so it is formatted afresh (with one) when relayed.
		this.dispatch(undefined)
		this.buf = ''
		this.carried = ''
		return this.out
	}
}

export const createSseParser = (keepRaw = false) => new SseParser(keepRaw)

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
export const sseBatchReader = (body: ReadableStream<Uint8Array>, keepRaw = true) => new SseBatchReader(body, keepRaw)

const DONE = { value: undefined, done: true } as const

export class SseBatchReader implements AsyncIterator<SseFrame[], undefined> {
	/** The body's reader: read through `read()`, so that `asked` counts the reads. */
	readonly reader: ReadableStreamDefaultReader<Uint8Array>
	/**
	 * Reads asked of the body (`read()`) and reads it answered (`framesOf`): a read waits on the upstream while they
	 * differ. Two counters rather than a timestamp per chunk: the upstream call's idle watch (relay/upstream-fetch.ts)
	 * compares them at its clock's ticks, so a chunk costs two increments, not a clock read or a timer reset.
	 */
	asked = 0
	got = 0
	/**
	 * Called once when the body ends or the reader is given up: the upstream call's idle watch stops then, rather than
	 * at its clock's next tick with the ended stream still referenced.
	 */
	onEnd: (() => void) | undefined = undefined
	private readonly decoder = new TextDecoder()
	private readonly parser: SseParser
	/** The body ended (its last frames were returned). */
	ended = false
	/** The last read, when its text was exactly whole frames (see `bytesOf`): those frames, its bytes, its length as text. */
	private chunkFrames: SseFrame[] | undefined = undefined
	private chunkBytes: Uint8Array | undefined = undefined
	private chunkChars = 0

	/** `keepRaw` false: frames without their text as received (a relay that rewrites every frame has no use for it). */
	constructor(body: ReadableStream<Uint8Array>, keepRaw = true) {
		this.reader = body.getReader()
		this.parser = new SseParser(keepRaw)
	}

	/** The frames one read of `reader` completed (often none); at the body's end, the frame an unterminated body left. */
	framesOf(r: { done: true; value?: undefined } | { done: false; value: Uint8Array }): SseFrame[] {
		this.got++
		if (!r.done) {
			// A leading byte-order mark is dropped by the decoder, so such a read's bytes are not its frames' text.
			const fromBoundary = this.parser.atBoundary && r.value[0] !== 0xef
			const text = this.decoder.decode(r.value, { stream: true })
			const frames = this.parser.push(text)
			if (fromBoundary && this.parser.atBoundary) {
				this.chunkFrames = frames
				this.chunkBytes = r.value
				this.chunkChars = text.length
			} else this.chunkFrames = this.chunkBytes = undefined
			return frames
		}
		this.chunkFrames = this.chunkBytes = undefined
		this.end()
		return this.parser.end(this.decoder.decode())
	}

	/**
	 * The bytes the upstream sent for `frames`, when they are the last read's frames and that read held nothing else:
	 * it began and ended at a frame's edge, and their raw texts add up to all of its text (no comment or stray blank
	 * line was left out). A relay that changes none of them writes these rather than their text joined, which the
	 * response would encode again (bench/README, twelfth VM: 17–22 µs less CPU per stream at one connection, ~1 at 64).
	 */
	bytesOf(frames: SseFrame[]): Uint8Array | undefined {
		if (frames !== this.chunkFrames) return undefined
		let chars = 0
		for (const f of frames) {
			if (f.raw === undefined) return undefined
			chars += f.raw.length
		}
		return chars === this.chunkChars ? this.chunkBytes : undefined
	}

	/** One read of the body, for a relay that parses it with `framesOf` (one await per chunk instead of two). */
	read(): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
		this.asked++
		return this.reader.read()
	}

	/** Chained to the reader's read with a method made once, not awaited in an async call per chunk (a frame each). */
	next(): Promise<IteratorResult<SseFrame[], undefined>> {
		return this.ended ? Promise.resolve(DONE) : this.read().then(this.onRead)
	}

	private readonly onRead = (r: Parameters<SseBatchReader['framesOf']>[0]): IteratorResult<SseFrame[], undefined> | Promise<IteratorResult<SseFrame[], undefined>> => {
		const frames = this.framesOf(r)
		return frames.length ? { value: frames, done: false } : this.next()
	}

	async return(): Promise<IteratorResult<SseFrame[], undefined>> {
		this.end()
		return DONE
	}

	private end() {
		if (this.ended) return
		this.ended = true
		const onEnd = this.onEnd
		this.onEnd = undefined
		onEnd?.()
	}
}

/**
 * The frames of a batch reader one by one, for a reader of single frames (a codec's `decodeStream`); stopping early
 * ends the batch reader too.
 * @example for await (const f of eachFrame(up.sse(false))) console.log(f.data)
 */
export async function* eachFrame(batches: AsyncIterator<SseFrame[], undefined>): AsyncGenerator<SseFrame> {
	try {
		for (;;) {
			const r = await batches.next()
			if (r.done) return
			for (const f of r.value) yield f
		}
	} finally {
		await batches.return?.()
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
