/**
 * ConverseStream's AWS event-stream body as SSE, for the Converse codec's stream decoder
 * (protocols/bedrock-converse/stream.ts). Each `event` message's `:event-type` (messageStart, contentBlockDelta…)
 * becomes the frame's `event:` and its JSON payload the `data:`, as sent
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html); an `exception` message
 * (throttlingException, modelStreamErrorException…) or the service's own `error` message becomes `event: exception`
 * with `{exceptionType, message}`.
 * @module
 */
import type { EventMessage } from './aws/event-stream'
import { exceptionText, reframed } from './bedrock-stream'

const decoder = new TextDecoder()

const exceptionFrame = (exceptionType: string, message: string) => `event: exception\ndata: ${JSON.stringify({ exceptionType, message })}\n\n`

/** One event-stream message as SSE text; '' for a message with no event type. */
export function converseSseOf(m: EventMessage): string {
	const kind = m.headers[':message-type']
	if (kind === 'event') {
		const type = m.headers[':event-type']
		if (typeof type !== 'string' || !type) return ''
		// SSE data is one line here: the payload is JSON, whose own line breaks can only be white space.
		return `event: ${type}\ndata: ${decoder.decode(m.payload).replace(/[\r\n]+/g, ' ')}\n\n`
	}
	if (kind === 'exception') {
		const name = String(m.headers[':exception-type'] ?? '')
		return exceptionFrame(name, exceptionText(m, name))
	}
	if (kind === 'error') return exceptionFrame('internalServerException', String(m.headers[':error-message'] ?? m.headers[':error-code'] ?? 'upstream stream error'))
	return ''
}

/**
 * A ConverseStream body as SSE bytes, pulled as the reader asks (bedrock-stream.ts `reframed`).
 * @example new Response(converseSseOf(res.body!), { headers: { 'content-type': 'text/event-stream' } })
 */
export const converseSse = (body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => reframed(body, converseSseOf)
