import { describe, expect, it } from 'bun:test'
import { type ErrorKind, GatewayError } from '../../../../src/core/errors'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import { errorKindOf, upstreamError } from '../../../../src/protocols/anthropic-messages/error'

describe('anthropicMessages.encodeError', () => {
	it.each<[ErrorKind, number, string]>([
		['invalid_request', 400, 'invalid_request_error'],
		['authentication', 401, 'authentication_error'],
		['insufficient_quota', 402, 'billing_error'],
		['permission', 403, 'permission_error'],
		['not_found', 404, 'not_found_error'],
		['payload_too_large', 413, 'request_too_large'],
		['rate_limit', 429, 'rate_limit_error'],
		['api_error', 500, 'api_error'],
		['upstream', 502, 'api_error'],
		['unavailable', 503, 'api_error'],
		// Anthropic's own status for an overload (the other shapes answer 503): its Python SDK's OverloadedError.
		['overloaded', 529, 'overloaded_error'],
		['timeout', 504, 'timeout_error'],
	])('should render %s as status %d with type %s', (kind, status, type) => {
		const out = anthropicMessages.encodeError(new GatewayError(kind, 'boom'))
		expect(out.status).toBe(status)
		expect(out.body).toEqual({ type: 'error', error: { type, message: 'boom' } })
		expect(out.headers).toBeUndefined()
	})

	it('should keep a 4xx status other than 400 for invalid requests', () => {
		expect(anthropicMessages.encodeError(new GatewayError('invalid_request', 'x', { status: 422 })).status).toBe(422)
	})

	it('should send retry-after in whole seconds and the request id when given', () => {
		const out = anthropicMessages.encodeError(new GatewayError('rate_limit', 'slow', { retryAfter: 1.2 }), 'req_123')
		// `request-id` as Anthropic names it, which the SDK reads into APIError.requestID.
		expect(out.headers).toEqual({ 'retry-after': '2', 'request-id': 'req_123' })
		expect(out.body).toMatchObject({ request_id: 'req_123' })
		expect(anthropicMessages.encodeError(new GatewayError('rate_limit', 'slow')).headers).toBeUndefined()
	})
})

describe('anthropicMessages.encodeStreamError', () => {
	it('should produce an event: error frame (a bare data: error is invisible to Anthropic SDKs; mlflow/mlflow#25897)', () => {
		const frame = anthropicMessages.encodeStreamError(new GatewayError('overloaded', 'Overloaded'))
		expect(frame).toEqual({ event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' })
	})
})

describe('anthropic error type mapping', () => {
	it('should map Anthropic error types back to gateway kinds', () => {
		expect(errorKindOf('overloaded_error')).toBe('overloaded')
		expect(errorKindOf('billing_error')).toBe('insufficient_quota')
		expect(errorKindOf('request_too_large')).toBe('payload_too_large')
		expect(errorKindOf('something_new')).toBe('api_error')
	})

	it('should turn an upstream error object into a retryable upstream GatewayError when it is transient', () => {
		const e = upstreamError({ type: 'overloaded_error', message: 'Overloaded' })
		expect([e.kind, e.status, e.code, e.retryable, e.message]).toEqual(['overloaded', 503, 'overloaded_error', true, 'Overloaded'])
		expect([upstreamError({ type: 'api_error', message: 'x' }).kind, upstreamError({ type: 'api_error', message: 'x' }).status]).toEqual(['upstream', 502])
		const bad = upstreamError({ type: 'invalid_request_error', message: 'bad' })
		expect(bad.retryable).toBe(false)
		expect(upstreamError(undefined).message).toBe('upstream error')
	})
})
