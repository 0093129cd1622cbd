/**
 * Request bodies sent compressed (`Content-Encoding: gzip`, `deflate`, `br`, `zstd`, or several in the order
 * applied). Codex compresses its Responses turns with zstd for OpenAI's backend, which takes them, and so do other
 * agents and HTTP clients set to compress uploads (an agent's history, re-sent on every turn, shrinks ~3×). They are
 * decoded before anything reads them, so every route sees a plain body, and held to the same size limit once decoded:
 * a small compressed body may expand past it (a zip bomb), which is cut off as soon as it does.
 * @module
 */
import { GatewayError } from '../core/errors'

/** The Web Streams format of each content coding (RFC 9110 §8.4.1; `x-gzip` is gzip). */
const FORMATS: Readonly<Record<string, CompressionFormat>> = {
	gzip: 'gzip',
	'x-gzip': 'gzip',
	deflate: 'deflate',
	br: 'brotli' as CompressionFormat,
	zstd: 'zstd' as CompressionFormat,
}

/** More codings than this in one header is not a client compressing its upload. */
const MAX_CODINGS = 3

/** The codings a body was sent with, in the order they were applied (`identity` dropped); empty for a plain body. */
export function contentCodings(request: Request): string[] {
	const header = request.headers.get('content-encoding')
	if (header === null) return []
	return header
		.split(',')
		.map((c) => c.trim().toLowerCase())
		.filter((c) => c !== '' && c !== 'identity')
}

const unsupported = (codings: string[]) =>
	new GatewayError('invalid_request', `Unsupported content-encoding "${codings.join(', ')}": send the body uncompressed, or compressed with gzip, deflate, br or zstd`, {
		code: 'unsupported_content_encoding',
		status: 415,
	})

/**
 * The body decoded, or the error to answer: 415 for a coding not taken, 413 once the decoded bytes pass `limit`, 400
 * for bytes that do not decode. Reading stops at the first of these (the rest is not decompressed).
 */
export async function decodeBody(request: Request, codings: string[], limit: number): Promise<Uint8Array | GatewayError> {
	if (codings.length > MAX_CODINGS || codings.some((c) => !(c in FORMATS))) return unsupported(codings)
	if (!request.body) return new Uint8Array()
	const chunks: Uint8Array[] = []
	let size = 0
	try {
		let stream: ReadableStream<Uint8Array> = request.body
		// The last coding applied is the first to undo.
		for (const [i, c] of codings.toReversed().entries()) {
			let format = FORMATS[c]!
			// `deflate` is zlib-wrapped (RFC 9110), but some clients send the bare stream (as Bun's and PHP's deflate
			// functions make it): told apart by the zlib header in the first two bytes.
			if (format === 'deflate' && i === 0) {
				const peeked = await peek(stream)
				stream = peeked.stream
				if (!isZlib(peeked.first)) format = 'deflate-raw'
			}
			stream = stream.pipeThrough(new DecompressionStream(format) as unknown as ReadableWritablePair<Uint8Array, Uint8Array>)
		}
		const reader = stream.getReader()
		for (;;) {
			const { done, value } = await reader.read()
			if (done) break
			size += value.byteLength
			if (size > limit) {
				void reader.cancel().catch(() => {})
				return new GatewayError('payload_too_large', `Request body is over ${limit} bytes once decoded (content-encoding ${codings.join(', ')}), the limit`, { code: 'request_too_large' })
			}
			chunks.push(value)
		}
	} catch {
		return new GatewayError('invalid_request', `Malformed request body: it does not decode as its content-encoding says (${codings.join(', ')})`, { code: 'invalid_body' })
	}
	const out = new Uint8Array(new ArrayBuffer(size))
	let at = 0
	for (const c of chunks) {
		out.set(c, at)
		at += c.byteLength
	}
	return out
}

/** The zlib header (RFC 1950): deflate as compression method, and a check value making the two bytes a multiple of 31. */
const isZlib = (b: Uint8Array | undefined) => b !== undefined && b.length >= 2 && (b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0

/** The stream's first chunk, and a stream giving that chunk and then the rest. */
async function peek(stream: ReadableStream<Uint8Array>): Promise<{ first: Uint8Array | undefined; stream: ReadableStream<Uint8Array> }> {
	const reader = stream.getReader()
	const first = await reader.read()
	const rest = new ReadableStream<Uint8Array>({
		start(c) {
			if (first.done) c.close()
			else c.enqueue(first.value)
		},
		async pull(c) {
			const r = await reader.read()
			if (r.done) c.close()
			else c.enqueue(r.value)
		},
		cancel: (reason) => reader.cancel(reason),
	})
	return { first: first.done ? undefined : first.value, stream: rest }
}

/** `request` with its body replaced by the decoded bytes, and the headers saying so. */
export function decodedRequest(request: Request, body: Uint8Array): Request {
	const headers = new Headers(request.headers)
	headers.delete('content-encoding')
	headers.set('content-length', String(body.byteLength))
	return new Request(request.url, { method: request.method, headers, body: body as Uint8Array<ArrayBuffer>, signal: request.signal })
}
