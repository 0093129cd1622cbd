import { describe, expect, it } from 'bun:test'
import { GatewayError, badRequest, type ErrorKind } from '../../../../src/core/errors'
import { encodeError, encodeStreamError, errorKindOf } from '../../../../src/protocols/openai-chat/error'

describe('openai-chat encodeError', () => {
	it('should render OpenAI error bodies with the error status', () => {
		expect(encodeError(badRequest('messages must contain at least one message', 'messages'))).toEqual({
			status: 400,
			body: { error: { message: 'messages must contain at least one message', type: 'invalid_request_error', param: 'messages', code: 'invalid_request_error' } },
		})
	})

	it('should map every kind to an OpenAI type and default code', () => {
		const cases: Array<[ErrorKind, number, string, string | null]> = [
			['authentication', 401, 'invalid_request_error', 'invalid_api_key'],
			['insufficient_quota', 402, 'insufficient_quota', 'insufficient_quota'],
			['permission', 403, 'permission_error', null],
			['not_found', 404, 'invalid_request_error', null],
			['payload_too_large', 413, 'invalid_request_error', null],
			['rate_limit', 429, 'rate_limit_error', 'rate_limit_exceeded'],
			['api_error', 500, 'server_error', null],
			['upstream', 502, 'server_error', null],
			['unavailable', 503, 'service_unavailable_error', null],
			['overloaded', 503, 'service_unavailable_error', null],
			['timeout', 504, 'timeout_error', null],
		]
		for (const [kind, status, type, code] of cases) {
			const out = encodeError(new GatewayError(kind, 'x'))
			expect(out.status).toBe(status)
			expect(out.body).toEqual({ error: { message: 'x', type, param: null, code } })
		}
		expect(encodeError(new GatewayError('not_found', 'no such model', { code: 'model_not_found' })).body).toMatchObject({ error: { code: 'model_not_found' } })
	})

	it('should add retry-after when the error says how long to wait', () => {
		expect(encodeError(new GatewayError('rate_limit', 'slow', { retryAfter: 2.5 })).headers).toEqual({ 'retry-after': '3' })
		expect(encodeError(new GatewayError('rate_limit', 'slow')).headers).toBeUndefined()
	})

	it('should render a stream error as a bare data frame', () => {
		const frame = encodeStreamError(new GatewayError('upstream', 'gone'))
		expect(frame.event).toBeUndefined()
		expect(JSON.parse(frame.data)).toEqual({ error: { message: 'gone', type: 'server_error', param: null, code: null } })
	})
})

describe('openai-chat errorKindOf', () => {
	it('should map OpenAI error types to kinds', () => {
		expect(errorKindOf('invalid_request_error')).toBe('invalid_request')
		expect(errorKindOf('rate_limit_exceeded')).toBe('rate_limit')
		expect(errorKindOf('insufficient_quota')).toBe('insufficient_quota')
		expect(errorKindOf('mystery')).toBeUndefined()
	})
})
