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

/**
 * The codes `response.error` takes (openai-python types `ResponseError.code` as exactly these), plus the ones OpenAI
 * also fails a response with and agents act on: Codex CLI compacts on `context_length_exceeded` and stops on
 * `insufficient_quota`.
 */
const FAILED_CODES = new Set([
	'server_error',
	'rate_limit_exceeded',
	'invalid_prompt',
	'data_residency_mismatch',
	'bio_policy',
	'misalignment_policy_violation',
	'vector_store_timeout',
	'invalid_image',
	'invalid_image_format',
	'invalid_base64_image',
	'invalid_image_url',
	'image_too_large',
	'image_too_small',
	'image_parse_error',
	'image_content_policy_violation',
	'invalid_image_mode',
	'image_file_too_large',
	'unsupported_image_media_type',
	'empty_image_file',
	'failed_to_download_image',
	'image_file_not_found',
	'context_length_exceeded',
	'insufficient_quota',
])

/**
 * `response.error.code` of a failed response: the error's code when it is one of OpenAI's, else `rate_limit_exceeded`
 * for a rate limit and `server_error` for the rest. Another vendor's word (Gemini's `UNAVAILABLE`, Anthropic's
 * `overloaded_error`) or the gateway's own (`upstream_error`) is not a value clients expect there; the `error` event
 * before it keeps the code as said.
 * @example failedCode(new GatewayError('overloaded', 'busy', { code: 'UNAVAILABLE' })) === 'server_error'
 */
export function failedCode(err: GatewayError): string {
	const code = errorBody(err).error.code
	if (code && FAILED_CODES.has(code)) return code
	return err.kind === 'rate_limit' ? 'rate_limit_exceeded' : 'server_error'
}
