/**
 * multipart/form-data read and written without holding the event loop. Bun's own parser scans a 20 MB upload for
 * its boundary in 30–115 ms and copies each file, and a FormData sent by `fetch` is serialised into one buffer first
 * (70–100 ms more): every request in flight waited that long whenever someone uploaded a large audio file. Here a
 * form is searched a piece at a time (native searches) and cut into slices of the body's Blob (no copy), and sent as
 * a stream of its parts with its length, so a file's bytes are read piece by piece as the socket takes them
 * (`bun bench/upload.ts`: the slowest other request during a 20 MB upload 142–205 ms before, 89–100 after, and
 * 19–26 ms with the body spooled to a file as it arrives, body-spool.ts; bench/README.md).
 * @module
 */
import { MAX_FORM_PARTS, MAX_PART_HEADER_BYTES } from './form-limits'

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
const CRLF = utf8.encode('\r\n')
const HEADERS_END = utf8.encode('\r\n\r\n')
const DASH = 45

/** The boundary parameter of a multipart content-type (quoted or not), or undefined when it has none. */
export function boundaryOf(contentType: string): string | undefined {
	const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
	return m ? (m[1] ?? m[2]) : undefined
}

/** Where a form's delimiters stand: what form-limits.ts counts and `parseMultipart` cuts along. */
export type FormScan = {
	/** `--boundary`, as bytes. */
	open: Uint8Array
	/** Every place `--boundary` stands, ascending. */
	at: number[]
	/** Of those, the ones that open the body or a line: the delimiters a parser cuts along. */
	lineStart: number[]
	/** The search stopped at MAX_DELIMITERS: the body has more, so more parts than any form may have. */
	more: boolean
}

/**
 * Most `--boundary`s a search collects: twice the parts a form may have (each part's delimiter, and as many close
 * delimiters or boundaries inside content as a careless client might leave). A body of nothing but delimiters (25 MB
 * of `--a`) would otherwise be eight million positions to keep and walk.
 */
const MAX_DELIMITERS = 2 * (MAX_FORM_PARTS + 1)

/** How much of a body is searched at a time; between pieces other requests are served. */
const SCAN_PIECE = 1 << 20

/**
 * Where the boundary of `contentType` stands in `body` (undefined without a boundary: the parser refuses that). The
 * body is searched a piece at a time (native searches, zero-copy slices), yielding to other requests between pieces.
 */
export async function scanForm(body: Blob, contentType: string): Promise<FormScan | undefined> {
	const boundary = boundaryOf(contentType)
	if (!boundary) return undefined
	const open = utf8.encode(`--${boundary}`)
	const at: number[] = []
	const lineStart: number[] = []
	// Each piece starts two bytes early (the line end before a delimiter) and runs on by the delimiter's length, so a
	// delimiter across two pieces is found once, in the first.
	for (let from = 0; from < body.size; from += SCAN_PIECE) {
		if (from > 0) await new Promise((next) => setImmediate(next))
		const lead = Math.min(from, 2)
		const piece = await bytesOf(body, from - lead, from + SCAN_PIECE + open.length - 1)
		for (let i = piece.indexOf(open, lead); i !== -1 && i - lead < SCAN_PIECE; i = piece.indexOf(open, i + 1)) {
			const pos = from + i - lead
			if (at.length > 0 && pos < at[at.length - 1]! + open.length) continue
			if (at.length === MAX_DELIMITERS) return { open, at, lineStart, more: true }
			at.push(pos)
			if (pos === 0 || (piece[i - 2] === 13 && piece[i - 1] === 10)) lineStart.push(pos)
		}
	}
	return { open, at, lineStart, more: false }
}

/**
 * The form in `body`, cut along its delimiters (`scan`), or undefined for anything outside the plain shape every
 * client library and browser sends (CRLF line ends, `form-data` parts with quoted `name` and `filename`, UTF-8 text):
 * the caller then leaves the body to Bun's parser, which decides as before. A file is a slice of the body, not a
 * copy, and keeps the type its `Content-Type` header says (Bun's parser guesses one from the file name's extension
 * instead, and so drops an `image/png` named `blob`).
 */
export async function parseMultipart(body: Blob, scan: FormScan): Promise<FormData | undefined> {
	const { open, lineStart } = scan
	const form = new FormData()
	for (let i = 0; i < lineStart.length; i++) {
		const after = lineStart[i]! + open.length
		const next = lineStart[i + 1]
		const lead = await bytesOf(body, after, after + 2)
		// The close delimiter: whatever follows (an epilogue) is ignored.
		if (lead[0] === DASH && lead[1] === DASH) return form
		if (lead[0] !== 13 || lead[1] !== 10 || next === undefined) return undefined
		// The part runs to the line end before the next delimiter.
		const end = next - CRLF.length
		const headersStart = after + CRLF.length
		const head = await bytesOf(body, headersStart, Math.min(end, headersStart + MAX_PART_HEADER_BYTES + HEADERS_END.length))
		const headersEnd = head.indexOf(HEADERS_END)
		if (headersEnd === -1) return undefined
		const part = partHeaders(head.subarray(0, headersEnd))
		if (!part) return undefined
		const contentStart = headersStart + headersEnd + HEADERS_END.length
		if (contentStart > end) return undefined
		if (part.filename === undefined) {
			const text = decode(await bytesOf(body, contentStart, end))
			if (text === undefined) return undefined
			form.append(part.name, text)
		} else {
			const type = part.type ?? 'application/octet-stream'
			form.append(part.name, new File([body.slice(contentStart, end, type)], part.filename, { type }))
		}
	}
	// No close delimiter: Bun's parser refuses the body.
	return undefined
}

/** Bytes `from`–`to` of `body`, as a Buffer over them (a slice's bytes are a view of the Blob's, not a copy). */
export async function bytesOf(body: Blob, from: number, to: number): Promise<Buffer> {
	const u = await body.slice(from, to).bytes()
	return Buffer.from(u.buffer, u.byteOffset, u.byteLength)
}

/** A part's name, its file name when it is a file, and its declared type; undefined for headers read otherwise. */
function partHeaders(raw: Uint8Array): { name: string; filename?: string; type?: string } | undefined {
	const text = decode(raw)
	if (text === undefined) return undefined
	let disposition: string | undefined
	let type: string | undefined
	for (const line of text.split('\r\n')) {
		const colon = line.indexOf(':')
		if (colon <= 0) return undefined
		const name = line.slice(0, colon).trim().toLowerCase()
		const value = line.slice(colon + 1).trim()
		if (name === 'content-disposition') disposition = value
		else if (name === 'content-type') type = value
	}
	if (!disposition) return undefined
	const params = dispositionParams(disposition)
	if (!params || params.name === undefined) return undefined
	// Bun's FormData writes an empty file name for a Blob appended without one (the AI SDK's images): the name it
	// stands for is `blob`, which Node's, browsers' and this gateway's own encoders write.
	return { name: params.name, filename: params.filename === '' ? 'blob' : params.filename, type: type || undefined }
}

/** `form-data; name="…"; filename="…"`: each parameter quoted, with no backslash (whose reading parsers differ on). */
function dispositionParams(value: string): { name?: string; filename?: string } | undefined {
	const semi = value.indexOf(';')
	if ((semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase() !== 'form-data') return undefined
	const out: { name?: string; filename?: string } = {}
	let rest = semi === -1 ? '' : value.slice(semi + 1)
	while (rest.trim()) {
		const m = /^\s*([A-Za-z*-]+)\s*=\s*"([^"\\]*)"\s*(?:;|$)/.exec(rest)
		if (!m) return undefined
		const key = m[1]!.toLowerCase()
		if (key === 'name') out.name = m[2]
		else if (key === 'filename') out.filename = m[2]
		else return undefined
		rest = rest.slice(m[0].length)
	}
	return out
}

function decode(bytes: Uint8Array): string | undefined {
	try {
		return strictUtf8.decode(bytes)
	} catch {
		return undefined
	}
}

/** A name or file name in a part's headers, escaped as browsers do (WHATWG's multipart/form-data encoding). */
const quoted = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')

/**
 * `form` as a request body: a stream of its parts, with the `content-type` (a new boundary) and `content-length` to
 * send it with. Each call makes a new stream, so a call made again sends the form again. A file's bytes are pulled
 * from it as the upstream takes them, never copied whole.
 * @example const { body, headers } = multipartBody(form); await fetch(url, { method: 'POST', body, headers })
 */
export function multipartBody(form: FormData): { body: ReadableStream<Uint8Array>; headers: { 'content-type': string; 'content-length': string } } {
	const boundary = `----SwitchboardFormBoundary${crypto.randomUUID().replaceAll('-', '')}`
	const pieces: (Uint8Array | Blob)[] = []
	for (const [name, value] of form.entries() as Iterable<[string, FormDataEntryValue]>) {
		if (typeof value === 'string') {
			pieces.push(utf8.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`))
			continue
		}
		const type = value.type || 'application/octet-stream'
		pieces.push(utf8.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"; filename="${quoted(value.name ?? 'blob')}"\r\nContent-Type: ${type}\r\n\r\n`), value, CRLF)
	}
	pieces.push(utf8.encode(`--${boundary}--\r\n`))
	const length = pieces.reduce((n, p) => n + (p instanceof Blob ? p.size : p.byteLength), 0)
	let next = 0
	let reading: ReadableStreamDefaultReader<Uint8Array> | undefined
	const body = new ReadableStream<Uint8Array>({
		async pull(out) {
			for (;;) {
				if (reading) {
					const r = await reading.read()
					if (!r.done) return out.enqueue(r.value)
					reading = undefined
				}
				const piece = pieces[next++]
				if (piece === undefined) return out.close()
				if (!(piece instanceof Blob)) return out.enqueue(piece)
				reading = piece.stream().getReader()
			}
		},
		cancel(reason) {
			return reading?.cancel(reason)
		},
	})
	return { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(length) } }
}
