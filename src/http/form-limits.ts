/**
 * Bounds on a multipart body's shape, checked on its bytes before it is parsed. MAX_UPLOAD_BYTES bounds its size only:
 * 200,000 one-byte fields fit in 13 MB, and parsing them held the event loop for seconds (the route's plain view of a
 * name repeated that often, for minutes), while no other request was answered.
 * @module
 */
import { GatewayError } from '../core/errors'

/**
 * Most parts (fields and files) a multipart body may have. OpenAI's upload endpoints take a handful of fields; the
 * largest real body, an image edit, has up to 16 `image[]` files, a mask and some fifteen fields.
 */
export const MAX_FORM_PARTS = 256

/** Longest headers of one part (its `content-disposition` with the field's name and the file's name, its type), bytes. */
export const MAX_PART_HEADER_BYTES = 8 * 1024

const utf8 = new TextEncoder()

/** The boundary parameter of a multipart content-type (quoted or not), or undefined when it has none. */
export function boundaryOf(contentType: string): string | undefined {
	const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
	return m ? (m[1] ?? m[2]) : undefined
}

/**
 * The error for a multipart body with more than MAX_FORM_PARTS parts or a part whose headers run past
 * MAX_PART_HEADER_BYTES; undefined when it is within both (or has no boundary: the parser refuses it then). Every
 * `--boundary` is counted, wherever it stands, so no line ending the parser might also take slips past; a client
 * picks a boundary its content does not hold. The search is native (indexOf): ~1 ms for 13 MB of tiny fields.
 * @example formLimitError(bytes, 'multipart/form-data; boundary=x') // GatewayError 413 too_many_parts, or undefined
 */
export function formLimitError(bytes: Uint8Array, contentType: string): GatewayError | undefined {
	const boundary = boundaryOf(contentType)
	if (!boundary) return undefined
	const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
	const delimiter = utf8.encode(`--${boundary}`)
	let parts = 0
	for (let at = body.indexOf(delimiter); at !== -1; at = body.indexOf(delimiter, at + delimiter.length)) {
		const headers = at + delimiter.length
		// The close delimiter (`--boundary--`) ends the body: no part follows it.
		if (body[headers] === 45 && body[headers + 1] === 45) continue
		if (++parts > MAX_FORM_PARTS)
			return new GatewayError('payload_too_large', `Too many parts in the multipart body: an upload takes at most ${MAX_FORM_PARTS} fields and files`, {
				code: 'too_many_parts',
			})
		const window = body.subarray(headers, headers + MAX_PART_HEADER_BYTES + 4)
		if (window.length === MAX_PART_HEADER_BYTES + 4 && window.indexOf('\r\n\r\n') === -1 && window.indexOf('\n\n') === -1)
			return new GatewayError('invalid_request', `A part of the multipart body has headers (its field name, its file name) over ${MAX_PART_HEADER_BYTES} bytes`, {
				code: 'part_header_too_large',
			})
	}
	return undefined
}
