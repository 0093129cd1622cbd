/**
 * Errors in OpenAI's shape: `{error:{message, type, param, code}}`
 * (https://platform.openai.com/docs/guides/error-codes). Mid-stream errors are a bare `data:` frame with the same
 * body, which the official SDK turns into an APIError (openai-node `Stream.fromSSEResponse` checks `data.error`).
 * @module
 */
import type { ErrorKind, GatewayError } from '../../core/errors'
import type { SseFrame } from '../../core/sse'
import type { EncodedError } from '../codec'
import type { OpenAIErrorBody } from './model'

/**
 * OpenAI answers a wrong key (401) and anything not found (404: a model, a stored object, a path) with
 * `invalid_request_error`, telling them apart by status and `code` (`invalid_api_key`, `model_not_found`).
 */
const TYPE: Record<ErrorKind, string> = {
	invalid_request: 'invalid_request_error',
	authentication: 'invalid_request_error',
	insufficient_quota: 'insufficient_quota',
	permission: 'permission_error',
	not_found: 'invalid_request_error',
	payload_too_large: 'invalid_request_error',
	rate_limit: 'rate_limit_error',
	api_error: 'server_error',
	upstream: 'server_error',
	unavailable: 'service_unavailable_error',
	overloaded: 'service_unavailable_error',
	timeout: 'timeout_error',
}

/** Codes OpenAI clients switch on, used when the error carries none of its own. */
const DEFAULT_CODE: Partial<Record<ErrorKind, string>> = {
	insufficient_quota: 'insufficient_quota',
	rate_limit: 'rate_limit_exceeded',
	authentication: 'invalid_api_key',
}

/** @example errorBody(badRequest('model is required', 'model')).error.type === 'invalid_request_error' */
export function errorBody(err: GatewayError): OpenAIErrorBody {
	return {
		error: {
			message: err.message,
			type: TYPE[err.kind],
			param: err.param ?? null,
			code: err.code ?? DEFAULT_CODE[err.kind] ?? null,
		},
	}
}

/** An error response: status from the error, `retry-after` when it says how long to wait. */
export function encodeError(err: GatewayError): EncodedError {
	const out: EncodedError = { status: err.status, body: errorBody(err) }
	if (err.retryAfter !== undefined) out.headers = { 'retry-after': String(Math.ceil(err.retryAfter)) }
	return out
}

/** The mid-stream error frame. No `[DONE]` follows it. */
export const encodeStreamError = (err: GatewayError): SseFrame => ({ data: JSON.stringify(errorBody(err)) })

/** OpenAI error type → kind, for errors read from an OpenAI-compatible upstream. */
const KIND_OF_TYPE: Record<string, ErrorKind> = {
	invalid_request_error: 'invalid_request',
	authentication_error: 'authentication',
	insufficient_quota: 'insufficient_quota',
	permission_error: 'permission',
	not_found_error: 'not_found',
	rate_limit_error: 'rate_limit',
	rate_limit_exceeded: 'rate_limit',
	server_error: 'api_error',
	service_unavailable_error: 'unavailable',
	timeout_error: 'timeout',
}

/** @example errorKindOf('rate_limit_error') === 'rate_limit' */
export const errorKindOf = (type: string): ErrorKind | undefined => KIND_OF_TYPE[type]

