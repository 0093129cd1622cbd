/**
 * Errors in Anthropic's shape: `{type:"error", error:{type, message}, request_id}` with the documented status per
 * type (https://docs.anthropic.com/en/api/errors). Mid-stream, the same body goes out as `event: error`, which is
 * the only form Anthropic SDKs surface (a bare `data:` error is ignored; WIRE-NOTES wire §2).
 * @module
 */
import type { EncodedError } from '../codec'
import { type ErrorKind, GatewayError, upstreamRateLimited } from '../../core/errors'
import type { SseFrame } from '../../core/sse'
import type { AnthropicErrorBody } from './model'

/** Gateway error kind → Anthropic error type. */
export const ERROR_TYPE: Record<ErrorKind, string> = {
	invalid_request: 'invalid_request_error',
	authentication: 'authentication_error',
	insufficient_quota: 'billing_error',
	permission: 'permission_error',
	not_found: 'not_found_error',
	payload_too_large: 'request_too_large',
	rate_limit: 'rate_limit_error',
	api_error: 'api_error',
	upstream: 'api_error',
	unavailable: 'api_error',
	// Sent with Anthropic's status for it, 529 (OVERLOADED_STATUS), not the 503 the other shapes get.
	overloaded: 'overloaded_error',
	timeout: 'timeout_error',
}

const KIND: Record<string, ErrorKind> = {
	invalid_request_error: 'invalid_request',
	authentication_error: 'authentication',
	billing_error: 'insufficient_quota',
	permission_error: 'permission',
	not_found_error: 'not_found',
	request_too_large: 'payload_too_large',
	rate_limit_error: 'rate_limit',
	api_error: 'api_error',
	overloaded_error: 'overloaded',
	timeout_error: 'timeout',
}

/**
 * Anthropic error type → gateway error kind (unknown types are `api_error`).
 * @example errorKindOf('overloaded_error') === 'overloaded'
 */
export const errorKindOf = (type: string): ErrorKind => KIND[type] ?? 'api_error'

/** Error types after which another attempt may succeed. */
const RETRYABLE = new Set(['rate_limit_error', 'api_error', 'overloaded_error', 'timeout_error'])

/**
 * An `error` object from an Anthropic body or stream event → GatewayError. Mid-stream failures are `upstream`
 * (the relay already committed to this channel), except an overload: `overloaded`, what callers get for an Anthropic
 * 529 (also when it is the first event of a stream and no channel answers instead); `code` keeps the type.
 * A rate limit is the gateway's own 429, as at the HTTP level (Anthropic's text names the gateway's organization).
 */
export function upstreamError(error: unknown, fallback = 'upstream error'): GatewayError {
	const e = typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : {}
	const type = typeof e.type === 'string' ? e.type : 'api_error'
	const message = typeof e.message === 'string' && e.message ? e.message : fallback
	if (type === 'rate_limit_error') return upstreamRateLimited(message)
	return new GatewayError(type === 'overloaded_error' ? 'overloaded' : 'upstream', message, { code: type, retryable: RETRYABLE.has(type) })
}

/**
 * A prompt longer than the context window in Anthropic's words, "prompt is too long: N tokens > M maximum"
 * (https://docs.anthropic.com/en/api/errors), which Claude Code and other Anthropic clients compact their history on,
 * whichever vendor refused it.
 */
function overflowMessage(err: GatewayError): string {
	const o = err.overflow!
	if (o.tokens !== undefined && o.max !== undefined) return `prompt is too long: ${o.tokens} tokens > ${o.max} maximum`
	return err.message.startsWith('prompt is too long') ? err.message : `prompt is too long: ${err.message}`
}

const body = (err: GatewayError, requestId?: string): AnthropicErrorBody => {
	const message = err.overflow ? overflowMessage(err) : err.message
	const out: AnthropicErrorBody = { type: 'error', error: { type: ERROR_TYPE[err.kind] ?? 'api_error', message } }
	// Anthropic's SDK acts on `error.details.error_code` (a lost message thread is replayed under a new one).
	if (err.details) out.error.details = err.details
	if (requestId) out.request_id = requestId
	return out
}

/**
 * Anthropic's status for `overloaded_error` (https://docs.anthropic.com/en/api/errors: "529 - overloaded_error").
 * Its clients act on the status, not the type: the Python SDK raises `OverloadedError` for a 529 only (a 503 is an
 * `InternalServerError`, which `except anthropic.OverloadedError` misses), and Claude Code's `fallbackModel` switches
 * models on an overload. Callers of the other shapes get the gateway's 503 for the same error.
 */
export const OVERLOADED_STATUS = 529

/**
 * An error response. `requestId` (optional, beyond the codec contract) fills the documented `request_id` field.
 * @example encodeError(new GatewayError('rate_limit', 'slow down', { retryAfter: 3 })).headers['retry-after'] === '3'
 */
export function encodeError(err: GatewayError, requestId?: string): EncodedError {
	const out: EncodedError = { status: err.kind === 'overloaded' ? OVERLOADED_STATUS : err.status, body: body(err, requestId) }
	if (err.retryAfter !== undefined) out.headers = { 'retry-after': String(Math.max(0, Math.ceil(err.retryAfter))) }
	if (requestId) out.headers = { ...out.headers, [REQUEST_ID_HEADER]: requestId }
	return out
}

/**
 * The header Anthropic names every answer's request with, which `@anthropic-ai/sdk` reads (`_request_id`,
 * `APIError.requestID`; https://docs.anthropic.com/en/api/errors#request-id). The gateway puts its own id there.
 */
export const REQUEST_ID_HEADER = 'request-id'

/** Names `res` with `requestId` as Anthropic does, in place (the relays' Responses have mutable headers). */
export function withRequestId(res: Response, requestId: string): Response {
	res.headers.set(REQUEST_ID_HEADER, requestId)
	return res
}

/** The `event: error` frame sent when a stream fails after the headers went out. */
export function encodeStreamError(err: GatewayError): SseFrame {
	return { event: 'error', data: JSON.stringify(body(err)) }
}
