/**
 * AWS event-stream framing as Bedrock sends it (https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html):
 * total length and headers length (big-endian uint32), the prelude's CRC32, string headers (type 7), the payload,
 * the message's CRC32. Written for the mock from the documented layout, apart from the gateway's decoder.
 * @module
 */

const encoder = new TextEncoder()
const crc32 = (b: Uint8Array) => Bun.hash.crc32(b) >>> 0

/**
 * One message with string headers.
 * @example frameMessage({ ':message-type': 'event', ':event-type': 'chunk', ':content-type': 'application/json' }, payload)
 */
export function frameMessage(headers: Record<string, string>, payload: Uint8Array | string): Uint8Array<ArrayBuffer> {
	const body = typeof payload === 'string' ? encoder.encode(payload) : payload
	const head: number[] = []
	for (const [k, v] of Object.entries(headers)) {
		const name = encoder.encode(k)
		const value = encoder.encode(v)
		head.push(name.length, ...name, 7, value.length >> 8, value.length & 0xff, ...value)
	}
	const total = 12 + head.length + body.length + 4
	const m = new Uint8Array(total)
	const view = new DataView(m.buffer)
	view.setUint32(0, total)
	view.setUint32(4, head.length)
	view.setUint32(8, crc32(m.subarray(0, 8)))
	m.set(head, 12)
	m.set(body, 12 + head.length)
	view.setUint32(total - 4, crc32(m.subarray(0, total - 4)))
	return m
}

/** A `chunk` event carrying one Anthropic stream event, base64 in `bytes` as Bedrock wraps it. */
export const chunkMessage = (eventJson: string) =>
	frameMessage({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ bytes: Buffer.from(eventJson).toString('base64'), p: 'abcdefgh' }))

/** An in-stream exception (`throttlingException`, `modelStreamErrorException`…), as the stream's last message. */
export const exceptionMessage = (type: string, message: string) =>
	frameMessage({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }))
