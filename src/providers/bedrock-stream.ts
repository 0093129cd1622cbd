/**
 * Bedrock's streamed Claude answer (InvokeModelWithResponseStream) as Anthropic's SSE: each `chunk` event's payload is
 * `{"bytes":"<base64 of one Anthropic stream event>"}` (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html),
 * written out as `event: <its type>` and `data: <its JSON, byte for byte>`. An `exception` message (throttling, a
 * model stream error…) becomes Anthropic's `event: error`, so every client protocol sees the error as it would from
 * Anthropic, and the relay downstream is Anthropic's unchanged.
 * @module
 */
import { eventMessages, type EventMessage } from './aws/event-stream'
import { asRefusal, guardedEvent } from './bedrock-guardrail'

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

/** The Anthropic event a `chunk` message carries (its payload's base64 `bytes`), or undefined for any other message. */
function chunkJson(m: EventMessage): string | undefined {
	if (m.headers[':message-type'] !== 'event' || m.headers[':event-type'] !== 'chunk') return undefined
	const bytes = (JSON.parse(decoder.decode(m.payload)) as { bytes?: unknown }).bytes
	return typeof bytes === 'string' ? Buffer.from(bytes, 'base64').toString('utf8') : undefined
}

const eventFrame = (json: string) => `event: ${eventType(json)}\ndata: ${json}\n\n`

/** One event-stream message as SSE text; '' for messages Anthropic's stream has no place for. */
export function sseOf(m: EventMessage): string {
	const kind = m.headers[':message-type']
	if (kind === 'event') {
		const json = chunkJson(m)
		return json === undefined ? '' : eventFrame(json)
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
 * `sseOf` for the stream of a channel with a guardrail (bedrock-guardrail.ts): each event without Bedrock's guardrail
 * members, and `message_delta` saying `stop_reason: "refusal"` when the guardrail intervened. Where Bedrock says so
 * (`message_start`'s message, or any event up to the last), `message_delta` is held until the next message: only
 * `message_stop` follows it, so nothing waits on the wire, and an intervention said on the last event still counts.
 * @example const g = guardedSseOf(); reframed(body, g.message, g.end)
 */
export function guardedSseOf(): { message: (m: EventMessage) => string; end: () => string } {
	let intervened = false
	let held: string | undefined
	const flush = () => {
		if (held === undefined) return ''
		const json = intervened ? asRefusal(held) : held
		held = undefined
		return eventFrame(json)
	}
	return {
		message(m) {
			const raw = chunkJson(m)
			if (raw === undefined) return flush() + sseOf(m)
			const seen = guardedEvent(raw)
			intervened ||= seen.intervened
			if (eventType(seen.json) !== 'message_delta') return flush() + eventFrame(seen.json)
			const before = flush()
			held = seen.json
			return before
		},
		end: flush,
	}
}

/**
 * Bedrock's event-stream body (InvokeModelWithResponseStream) as Anthropic SSE bytes; `guarded`: the channel applies a
 * guardrail (`guardedSseOf`).
 * @example new Response(anthropicSseOf(res.body!), { headers: { 'content-type': 'text/event-stream' } })
 */
export function anthropicSseOf(body: ReadableStream<Uint8Array>, guarded = false): ReadableStream<Uint8Array> {
	if (!guarded) return reframed(body, sseOf)
	const g = guardedSseOf()
	return reframed(body, g.message, g.end)
}

/**
 * An event-stream body as SSE bytes, each message written by `toSse` ('' for one with no place in the SSE), and what
 * `end` still holds once the body ended, pulled as the reader asks; cancelling it cancels the upstream body, a read
 * waiting on it too. A broken frame (CRC, length) fails the read as a cut connection does. Claude's InvokeModel stream
 * and ConverseStream are both framed so.
 */
export function reframed(body: ReadableStream<Uint8Array>, toSse: (m: EventMessage) => string, end?: () => string): ReadableStream<Uint8Array> {
	const reader = body.getReader()
	const messages = eventMessages(reader)
	return new ReadableStream<Uint8Array>({
		async pull(ctl) {
			while (true) {
				const next = await messages.next()
				if (next.done) {
					const rest = end?.()
					if (rest) ctl.enqueue(encoder.encode(rest))
					return ctl.close()
				}
				const text = toSse(next.value)
				if (text) return ctl.enqueue(encoder.encode(text))
			}
		},
		// Through the reader: a read it waits on ends at once (the generator then finishes), where the generator's own
		// return() would wait for that read.
		cancel: (reason) => reader.cancel(reason),
	})
}
