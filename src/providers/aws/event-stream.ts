/**
 * AWS event-stream framing (`application/vnd.amazon.eventstream`), how Bedrock streams (InvokeModelWithResponseStream):
 * each message is a prelude (total length, headers length: big-endian uint32), the prelude's CRC32, the headers, the
 * payload and the whole message's CRC32 (https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html).
 * A header is name length (1 byte), name, value type (1 byte), value; strings (type 7) and byte arrays (6) carry a
 * 2-byte length.
 * @module
 */
import { GatewayError } from '../../core/errors'

export type EventMessage = { headers: Record<string, string | number | boolean>; payload: Uint8Array }

const PRELUDE = 12
/** The service caps a message at 16 MB; a larger length is a broken stream, not a message to wait for. */
const MAX_MESSAGE = 16 * 1024 * 1024

const broken = (why: string) => new GatewayError('upstream', `upstream sent a malformed event stream: ${why}`, { retryable: true, code: 'upstream_malformed' })

const crc32 = (b: Uint8Array) => Bun.hash.crc32(b) >>> 0

/**
 * The headers of one message; values of the types Bedrock sends as strings, numbers or booleans (a UUID or byte
 * array as hex, a timestamp as milliseconds).
 */
function readHeaders(b: Uint8Array, view: DataView): EventMessage['headers'] {
	const out: EventMessage['headers'] = {}
	const text = new TextDecoder()
	let i = 0
	while (i < b.length) {
		const nameLen = b[i]!
		const name = text.decode(b.subarray(i + 1, i + 1 + nameLen))
		i += 1 + nameLen
		const type = b[i++]
		switch (type) {
			case 0:
			case 1:
				out[name] = type === 0
				break
			case 2:
				out[name] = view.getInt8(i)
				i += 1
				break
			case 3:
				out[name] = view.getInt16(i)
				i += 2
				break
			case 4:
				out[name] = view.getInt32(i)
				i += 4
				break
			case 5:
			case 8:
				out[name] = Number(view.getBigInt64(i))
				i += 8
				break
			case 6:
			case 7: {
				const len = view.getUint16(i)
				const v = b.subarray(i + 2, i + 2 + len)
				out[name] = type === 7 ? text.decode(v) : Buffer.from(v).toString('hex')
				i += 2 + len
				break
			}
			case 9:
				out[name] = Buffer.from(b.subarray(i, i + 16)).toString('hex')
				i += 16
				break
			default:
				throw broken(`header ${name} has unknown value type ${type}`)
		}
		if (i > b.length) throw broken('a header runs past its section')
	}
	return out
}

/** One message with string headers (type 7), as Bedrock frames its streams: what the gateway's Bedrock-format answers send. */
export function encodeMessage(headers: Record<string, string>, payload: Uint8Array): Uint8Array {
	const text = new TextEncoder()
	const fields: Uint8Array[] = []
	let headersLen = 0
	for (const [name, value] of Object.entries(headers)) {
		const n = text.encode(name)
		const v = text.encode(value)
		const field = new Uint8Array(4 + n.length + v.length)
		field[0] = n.length
		field.set(n, 1)
		field[1 + n.length] = 7
		new DataView(field.buffer).setUint16(2 + n.length, v.length)
		field.set(v, 4 + n.length)
		fields.push(field)
		headersLen += field.length
	}
	const total = PRELUDE + headersLen + payload.length + 4
	const m = new Uint8Array(total)
	const view = new DataView(m.buffer)
	view.setUint32(0, total)
	view.setUint32(4, headersLen)
	view.setUint32(8, crc32(m.subarray(0, 8)))
	let at = PRELUDE
	for (const field of fields) {
		m.set(field, at)
		at += field.length
	}
	m.set(payload, at)
	view.setUint32(total - 4, crc32(m.subarray(0, total - 4)))
	return m
}

/** One whole message (`m` is exactly its bytes), its CRCs checked. */
export function decodeMessage(m: Uint8Array): EventMessage {
	const view = new DataView(m.buffer, m.byteOffset, m.byteLength)
	const total = view.getUint32(0)
	const headersLen = view.getUint32(4)
	if (total !== m.length || headersLen > total - PRELUDE - 4) throw broken('lengths disagree')
	if (crc32(m.subarray(0, 8)) !== view.getUint32(8)) throw broken('prelude CRC mismatch')
	if (crc32(m.subarray(0, total - 4)) !== view.getUint32(total - 4)) throw broken('message CRC mismatch')
	const hv = new DataView(m.buffer, m.byteOffset + PRELUDE, headersLen)
	return { headers: readHeaders(m.subarray(PRELUDE, PRELUDE + headersLen), hv), payload: m.subarray(PRELUDE + headersLen, total - 4) }
}

/**
 * The messages of a body as they complete, whatever the chunking. Throws GatewayError (502, retryable) on a bad CRC or
 * length, and when the body ends inside a message. Takes the body's reader, so its owner can cancel a pending read.
 * @example for await (const m of eventMessages(res.body!.getReader())) if (m.headers[':message-type'] === 'event') use(m.payload)
 */
export async function* eventMessages(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<EventMessage> {
	let buf: Uint8Array = new Uint8Array(0)
	try {
		while (true) {
			const { value, done } = await reader.read()
			if (done) break
			if (buf.length === 0) buf = value
			else {
				const joined = new Uint8Array(buf.length + value.length)
				joined.set(buf)
				joined.set(value, buf.length)
				buf = joined
			}
			while (buf.length >= PRELUDE) {
				const total = new DataView(buf.buffer, buf.byteOffset, 4).getUint32(0)
				if (total < PRELUDE + 4 || total > MAX_MESSAGE) throw broken(`message length ${total}`)
				if (buf.length < total) break
				yield decodeMessage(buf.subarray(0, total))
				buf = buf.subarray(total)
			}
		}
		if (buf.length > 0) throw broken('the stream ended inside a message')
	} finally {
		reader.releaseLock()
	}
}
