/**
 * Bounds on a multipart body's shape, checked on its bytes before it is parsed. MAX_UPLOAD_BYTES bounds its size only:
 * 200,000 one-byte fields fit in 13 MB, and parsing them held the event loop for seconds (the route's plain view of a
 * name repeated that often, for minutes), while no other request was answered.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { FormScan } from './multipart'

/**
 * Most parts (fields and files) a multipart body may have. OpenAI's upload endpoints take a handful of fields; the
 * largest real body, an image edit, has up to 16 `image[]` files, a mask and some fifteen fields.
 */
export const MAX_FORM_PARTS = 256

/** Longest headers of one part (its `content-disposition` with the field's name and the file's name, its type), bytes. */
export const MAX_PART_HEADER_BYTES = 8 * 1024

/**
 * The error for a multipart body with more than MAX_FORM_PARTS parts or a part whose headers run past
 * MAX_PART_HEADER_BYTES; undefined when it is within both. Every `--boundary` is counted (`scan.at`), wherever it
 * stands, so no line ending the parser might also take slips past; a client picks a boundary its content does not hold.
 * @example await formLimitError(body, await scanForm(body, 'multipart/form-data; boundary=x')) // 413 too_many_parts, or undefined
 */
export async function formLimitError(body: Blob, scan: FormScan): Promise<GatewayError | undefined> {
	const tooMany = () => new GatewayError('payload_too_large', `Too many parts in the multipart body: an upload takes at most ${MAX_FORM_PARTS} fields and files`, { code: 'too_many_parts' })
	if (scan.more) return tooMany()
	let parts = 0
	for (const at of scan.at) {
		const headers = at + scan.open.length
		const window = Buffer.from(await body.slice(headers, headers + MAX_PART_HEADER_BYTES + 4).arrayBuffer())
		// The close delimiter (`--boundary--`) ends the body: no part follows it.
		if (window[0] === 45 && window[1] === 45) continue
		if (++parts > MAX_FORM_PARTS) return tooMany()
		if (window.length === MAX_PART_HEADER_BYTES + 4 && window.indexOf('\r\n\r\n') === -1 && window.indexOf('\n\n') === -1)
			return new GatewayError('invalid_request', `A part of the multipart body has headers (its field name, its file name) over ${MAX_PART_HEADER_BYTES} bytes`, {
				code: 'part_header_too_large',
			})
	}
	return undefined
}
