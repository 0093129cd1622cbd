/**
 * A large request body sent upstream as the pieces it is made of: stretches of the client's text and the members the
 * fast path changed between them (fast-path.ts `bodyText`). Joined, they would be one new string as long as the body,
 * made on the event loop when `fetch` takes it (a rope resolved: 60–140 ms with every other request waiting, for a
 * 20 MB body of a base64 image, `bench/README.md`). Sent as a stream of short encoded stretches with the body's length
 * instead, nothing that large is made, and the bytes go out as the socket takes them.
 * @module
 */

/** Bodies this long (UTF-16 units) or longer go as pieces; shorter ones are joined, as cheap as any string. */
export const PIECES_MIN = 1 << 20

/** How much text is encoded at a time (UTF-16 units). */
const STRETCH = 256 * 1024

const utf8 = new TextEncoder()

/** The body's pieces, in order. `String(pieces)` joins them (for a vendor's hook that signs or reshapes the text). */
export class TextPieces {
	constructor(readonly parts: readonly string[]) {}
	toString(): string {
		return this.parts.join('')
	}
}

/** Pieces joined when short, kept apart when long. */
export const joinedWhenShort = (parts: string[], length: number): string | TextPieces => (parts.length > 1 && length >= PIECES_MIN ? new TextPieces(parts) : parts.join(''))

/**
 * The pieces as a stream of UTF-8 bytes, and its length in bytes (for `content-length`: sent sized, not chunked). A
 * stretch never ends between the two halves of a surrogate pair, which would encode as two replacement characters.
 * @example const { body, length } = piecesStream(new TextPieces(['{"a":', '1}'])) // length 7
 */
export function piecesStream(pieces: TextPieces): { body: ReadableStream<Uint8Array>; length: number } {
	let length = 0
	for (const part of pieces.parts) length += Buffer.byteLength(part, 'utf8')
	let index = 0
	let at = 0
	const body = new ReadableStream<Uint8Array>({
		pull(out) {
			for (;;) {
				const part = pieces.parts[index]
				if (part === undefined) return out.close()
				if (at >= part.length) {
					index++
					at = 0
					continue
				}
				let end = Math.min(part.length, at + STRETCH)
				// A high surrogate last: its pair starts the next stretch with it.
				if (end < part.length && (part.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--
				const bytes = utf8.encode(part.slice(at, end))
				at = end
				return out.enqueue(bytes)
			}
		},
	})
	return { body, length }
}
