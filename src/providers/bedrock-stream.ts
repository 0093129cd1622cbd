/**
 * Bedrock's streamed Claude answer (InvokeModelWithResponseStream) as Anthropic's SSE: each `chunk` event's payload is
 * `{"bytes":"<base64 of one Anthropic stream event>"}` (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html),
 * written out as `event: <its type>` and `data: <its JSON, byte for byte>`. An `exception` message (throttling, a
 * model stream error…) becomes Anthropic's `event: error`, so every client protocol sees the error as it would from
 * Anthropic, and the relay downstream is Anthropic's unchanged.
 * @module
 */
import { eventMessages, type EventMessage } from './aws/event-stream'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Bedrock's in-stream exceptions (`:exception-type`) → Anthropic's error types, by what they mean for a retry. */
const ERROR_TYPE: Record<string, string> = {
	throttlingException: 'rate_limit_error',
	serviceUnavailableException: 'overloaded_error',
	modelTimeoutException: 'timeout_error',
	validationException: 'invalid_request_error',
	modelStreamErrorException: 'api_error',
	internalServerException: 'api_error',
}

/** The event's `type`, read from the head of its JSON (Anthropic puts it first) without parsing the rest. */
const TYPE_AT_HEAD = /^\s*\{\s*"type"\s*:\s*"([A-Za-z_]+)"/

function eventType(json: string): string {
	const m = TYPE_AT_HEAD.exec(json)
	if (m) return m[1]!
	try {
		const t = (JSON.parse(json) as { type?: unknown }).type
		return typeof t === 'string' ? t : 'message'
	} catch {
		// Not JSON: the Anthropic stream decoder reports it as malformed.
		return 'message'
	}
}

const errorFrame = (type: string, message: string) => `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`

/** What an `exception` message says: its payload's `message` (or `Message`), else `fallback` (the exception's name). */
export function exceptionText(m: EventMessage, fallback: string): string {
	try {
		const said = (JSON.parse(decoder.decode(m.payload)) as { message?: unknown; Message?: unknown }) ?? {}
		const text = said.message ?? said.Message
		if (typeof text === 'string' && text) return text
	} catch {
		// no JSON body: the exception's name says it
	}
	return fallback || 'upstream stream error'
}

/** One event-stream message as SSE text; '' for messages Anthropic's stream has no place for. */
export function sseOf(m: EventMessage): string {
	const kind = m.headers[':message-type']
	if (kind === 'event') {
		if (m.headers[':event-type'] !== 'chunk') return ''
		const bytes = (JSON.parse(decoder.decode(m.payload)) as { bytes?: unknown }).bytes
		if (typeof bytes !== 'string') return ''
		const json = Buffer.from(bytes, 'base64').toString('utf8')
		return `event: ${eventType(json)}\ndata: ${json}\n\n`
	}
	if (kind === 'exception') {
		const name = String(m.headers[':exception-type'] ?? '')
		return errorFrame(ERROR_TYPE[name] ?? 'api_error', exceptionText(m, name))
	}
	// `:message-type: error`: the service's own failure, its words in headers.
	if (kind === 'error') return errorFrame('api_error', String(m.headers[':error-message'] ?? m.headers[':error-code'] ?? 'upstream stream error'))
	return ''
}

/**
 * Bedrock's event-stream body (InvokeModelWithResponseStream) as Anthropic SSE bytes.
 * @example new Response(anthropicSseOf(res.body!), { headers: { 'content-type': 'text/event-stream' } })
 */
export const anthropicSseOf = (body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => reframed(body, sseOf)

/**
 * An event-stream body as SSE bytes, each message written by `toSse` ('' for one with no place in the SSE), pulled as
 * the reader asks; cancelling it cancels the upstream body, a read waiting on it too. A broken frame (CRC, length)
 * fails the read as a cut connection does. Claude's InvokeModel stream and ConverseStream are both framed so.
 */
export function reframed(body: ReadableStream<Uint8Array>, toSse: (m: EventMessage) => string): ReadableStream<Uint8Array> {
	const reader = body.getReader()
	const messages = eventMessages(reader)
	return new ReadableStream<Uint8Array>({
		async pull(ctl) {
			while (true) {
				const next = await messages.next()
				if (next.done) return ctl.close()
				const text = toSse(next.value)
				if (text) return ctl.enqueue(encoder.encode(text))
			}
		},
		// Through the reader: a read it waits on ends at once (the generator then finishes), where the generator's own
		// return() would wait for that read.
		cancel: (reason) => reader.cancel(reason),
	})
}
