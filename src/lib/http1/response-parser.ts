/**
 * An HTTP/1.1 response read from a connection's bytes as they come (RFC 9112): the status line and headers, then the
 * body framed by `Transfer-Encoding: chunked`, by `Content-Length`, or by the connection's close. Informational
 * answers (1xx) before the final one are skipped. The parser only frames: it hands the body's bytes over as they
 * arrive (decoded from chunks) and says whether the connection may carry another request afterwards.
 * @module
 */

export type ResponseHead = { status: number; statusText: string; headers: [string, string][] }

export type ResponseEvents = {
	head(head: ResponseHead): void
	body(bytes: Uint8Array): void
	end(): void
}

/** A response the parser cannot frame: the connection must not be used again. */
export class HttpParseError extends Error {
	override name = 'HttpParseError'
}

/** Longest status line and header block accepted (as Node's default). */
const MAX_HEAD_BYTES = 16 * 1024
/** Longest chunk-size line accepted (size and extensions). */
const MAX_CHUNK_LINE = 1024

const enum State {
	Head,
	Sized,
	ChunkSize,
	ChunkData,
	ChunkDataEnd,
	Trailers,
	UntilClose,
	Done,
}

const CR = 13
const LF = 10

const latin1 = new TextDecoder('latin1')

/**
 * One response's parser. `push` every byte the connection delivers (it throws HttpParseError on a malformed
 * response), `eof` when the connection closed; `done` once the response ended, `reusable` whether the connection
 * may then carry another request.
 */
export class ResponseParser {
	private state = State.Head
	/** Bytes of an incomplete head or chunk-size line, kept until the rest arrives. */
	private held: Uint8Array | undefined = undefined
	private left = 0
	private keepAlive = true
	/** Bytes after the end of the response (a server must send none before the next request). */
	extra = 0

	constructor(
		private readonly on: ResponseEvents,
		/** The request was HEAD: the response has no body, whatever its headers say. */
		private readonly headRequest = false,
	) {}

	get done(): boolean {
		return this.state === State.Done
	}

	get reusable(): boolean {
		return this.state === State.Done && this.keepAlive && this.extra === 0
	}

	/** Whether the head has been read (the body's bytes may follow). */
	get started(): boolean {
		return this.state !== State.Head
	}

	push(bytes: Uint8Array): void {
		let b = bytes
		if (this.held) {
			b = concat(this.held, bytes)
			this.held = undefined
		}
		let i = 0
		while (i < b.length) {
			switch (this.state) {
				case State.Head: {
					const end = headEnd(b, i)
					if (end === -1) {
						if (b.length - i > MAX_HEAD_BYTES) throw new HttpParseError('response head too large')
						this.held = b.subarray(i)
						return
					}
					const next = this.head(latin1.decode(b.subarray(i, end.text)))
					i = end.next
					this.state = next
					if (next === State.Done) this.on.end()
					break
				}
				case State.Sized: {
					const n = Math.min(this.left, b.length - i)
					this.on.body(b.subarray(i, i + n))
					i += n
					this.left -= n
					if (this.left === 0) this.finish()
					break
				}
				case State.UntilClose:
					this.on.body(i === 0 ? b : b.subarray(i))
					return
				case State.ChunkSize: {
					const nl = b.indexOf(LF, i)
					if (nl === -1) {
						if (b.length - i > MAX_CHUNK_LINE) throw new HttpParseError('chunk size line too long')
						this.held = b.subarray(i)
						return
					}
					const size = chunkSize(latin1.decode(b.subarray(i, nl)))
					i = nl + 1
					if (size === 0) this.state = State.Trailers
					else {
						this.left = size
						this.state = State.ChunkData
					}
					break
				}
				case State.ChunkData: {
					const n = Math.min(this.left, b.length - i)
					this.on.body(b.subarray(i, i + n))
					i += n
					this.left -= n
					if (this.left === 0) this.state = State.ChunkDataEnd
					break
				}
				case State.ChunkDataEnd: {
					// The CRLF after a chunk's data (a bare LF is tolerated, as by most clients).
					if (b[i] === CR) {
						if (i + 1 === b.length) {
							this.held = b.subarray(i)
							return
						}
						i++
					}
					if (b[i] !== LF) throw new HttpParseError('missing CRLF after chunk data')
					i++
					this.state = State.ChunkSize
					break
				}
				case State.Trailers: {
					const nl = b.indexOf(LF, i)
					if (nl === -1) {
						if (b.length - i > MAX_HEAD_BYTES) throw new HttpParseError('trailers too large')
						this.held = b.subarray(i)
						return
					}
					const blank = nl === i || (nl === i + 1 && b[i] === CR)
					i = nl + 1
					if (blank) this.finish()
					break
				}
				case State.Done:
					this.extra += b.length - i
					return
			}
		}
	}

	/** The connection closed: ends a body framed by it; anything else unfinished is an error. */
	eof(): void {
		if (this.state === State.UntilClose) {
			this.state = State.Done
			this.on.end()
			return
		}
		if (this.state !== State.Done) throw new HttpParseError(this.state === State.Head ? 'connection closed before a response' : 'connection closed before the response ended')
	}

	private finish() {
		this.state = State.Done
		this.on.end()
	}

	/** Reads a head; returns the state the body starts in (Head again after an informational answer). */
	private head(text: string): State {
		const lines = text.split(/\r?\n/)
		const m = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] ?? '')
		if (!m) throw new HttpParseError(`bad status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`)
		const status = Number(m[2])
		const headers: [string, string][] = []
		let chunked = false
		let length: number | undefined
		let close = m[1] === '0'
		for (let k = 1; k < lines.length; k++) {
			const line = lines[k]!
			const colon = line.indexOf(':')
			if (colon <= 0) throw new HttpParseError('bad header line')
			const name = line.slice(0, colon).trim().toLowerCase()
			const value = line.slice(colon + 1).trim()
			headers.push([name, value])
			if (name === 'transfer-encoding') chunked = /(?:^|,)\s*chunked\s*$/i.test(value)
			else if (name === 'content-length') {
				if (!/^\d+$/.test(value)) throw new HttpParseError('bad content-length')
				const n = Number(value)
				if (length !== undefined && length !== n) throw new HttpParseError('conflicting content-length')
				length = n
			} else if (name === 'connection') {
				const v = value.toLowerCase()
				if (v.includes('close')) close = true
				else if (v.includes('keep-alive') && m[1] === '0') close = false
			}
		}
		// 1xx: an interim answer (100 Continue, 103 Early Hints); the final one follows on the same connection.
		if (status < 200 && status !== 101) return State.Head
		this.keepAlive = !close
		this.on.head({ status, statusText: m[3] ?? '', headers })
		if (this.headRequest || status === 204 || status === 304 || status === 101) return State.Done
		if (chunked) return State.ChunkSize
		if (length !== undefined) {
			this.left = length
			return length === 0 ? State.Done : State.Sized
		}
		this.keepAlive = false
		return State.UntilClose
	}
}

/** Where the head ends at or after `from`: the text's end (before the blank line) and the body's start. */
function headEnd(b: Uint8Array, from: number): { text: number; next: number } | -1 {
	for (let i = b.indexOf(LF, from); i !== -1; i = b.indexOf(LF, i + 1)) {
		if (b[i + 1] === LF) return { text: i, next: i + 2 }
		if (b[i + 1] === CR && b[i + 2] === LF) return { text: b[i - 1] === CR ? i - 1 : i, next: i + 3 }
	}
	return -1
}

function chunkSize(line: string): number {
	const semi = line.indexOf(';')
	const hex = (semi === -1 ? line : line.slice(0, semi)).trim()
	if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new HttpParseError('bad chunk size')
	return Number.parseInt(hex, 16)
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
	const out = new Uint8Array(a.length + b.length)
	out.set(a)
	out.set(b, a.length)
	return out
}
