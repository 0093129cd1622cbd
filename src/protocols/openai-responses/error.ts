/**
 * Errors of the Responses API. A failed call has OpenAI's usual body, `{error:{message,type,param,code}}`
 * (https://platform.openai.com/docs/guides/error-codes). Mid-stream, the failure is an `error` event,
 * `{type:'error', code, message, param, sequence_number}` (https://platform.openai.com/docs/api-reference/responses-streaming/error),
 * on which the openai SDK's stream throws an APIError.
 * @module
 */
import type { GatewayError } from '../../core/errors'
import type { SseFrame } from '../../core/sse'
import { encodeError, errorBody } from '../openai-chat/error'

export { encodeError }

/**
 * The error as a stream frame. The relay sends it only when a stream breaks outside the encoder, which knows the
 * running `sequence_number`; here it is unknown, so it is 0 (clients do not order by it, they stop at `error`).
 */
export function encodeStreamError(err: GatewayError): SseFrame {
	const e = errorBody(err).error
	return { event: 'error', data: JSON.stringify({ type: 'error', code: e.code, message: e.message, param: e.param, sequence_number: 0 }) }
}
