/**
 * Errors of the Interactions API. An HTTP error is Gemini's `{error: {code, message, status}}` (gemini/error.ts, what
 * Google's SDKs read); in a stream, an `error` event whose `error` names the rpc status as its `code` with the
 * message (https://ai.google.dev/api/interactions-api, ErrorEvent).
 * @module
 */
import type { GatewayError } from '../../core/errors'
import type { SseFrame } from '../../core/sse'
import { encodeError as encodeGeminiError, geminiStatusOf } from '../gemini/error'

export const encodeError = encodeGeminiError

/** The error as a stream's `error` event. */
export function errorEvent(err: GatewayError, eventId?: string): SseFrame {
	return { event: 'error', data: JSON.stringify({ event_type: 'error', error: { code: geminiStatusOf(err.kind), message: err.message }, ...(eventId && { event_id: eventId }) }) }
}

export const encodeStreamError = (err: GatewayError): SseFrame => errorEvent(err)
