import { describe, expect, it } from 'bun:test'
import { GatewayError, badRequest, type ErrorKind } from '../../../../src/core/errors'
import { decodeError, encodeError, encodeStreamError, errorKindOf } from '../../../../src/protocols/openai-chat/error'

describe('openai-chat encodeError', () => {
	it('should render OpenAI error bodies with the error status', () => {
		expect(encodeError(badRequest('messages must contain at least one message', 'messages'))).toEqual({
			status: 400,
			body: { error: { message: 'messages must contain at least one message', type: 'invalid_request_error', param: 'messages', code: 'invalid_request_error' } },
		})
	})

	it('should map every kind to an OpenAI type and default code', () => {
		const cases: Array<[ErrorKind, number, string, string | null]> = [
			['authentication', 401, 'authentication_error', 'invalid_api_key'],
			['insufficient_quota', 402, 'insufficient_quota', 'insufficient_quota'],
			['permission', 403, 'permission_error', null],
			['not_found', 404, 'not_found_error', null],
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

describe('openai-chat decodeError', () => {
	it('should classify by status and keep the upstream message and code', () => {
		const e = decodeError(409, { error: { message: 'Conflict on the file', type: 'invalid_request_error', code: 'file_conflict' } })
		expect(e.kind).toBe('invalid_request')
		expect(e.status).toBe(409)
		expect(e.code).toBe('file_conflict')
		expect(e.message).toBe('Conflict on the file')
	})

	it("should make a 429 the gateway's upstream_rate_limited, the vendor's words (its account) in detail", () => {
		const e = decodeError(429, { error: { message: 'You exceeded your current quota for org-12345', type: 'insufficient_quota', code: 'insufficient_quota' } }, 7)
		expect(e).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfter: 7, code: 'upstream_rate_limited', detail: 'You exceeded your current quota for org-12345' })
		expect(e.message).not.toContain('org-12345')
	})

	it('should blame the channel, not the caller, for upstream 401s', () => {
		const e = decodeError(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } })
		expect(e.kind).toBe('upstream')
		expect(e.code).toBe('upstream_auth')
	})

	it("should keep the vendor's words of a 401 or 403 out of the message a caller reads", () => {
		const e = decodeError(403, { error: { message: 'Your organization org-12345 does not have access', type: 'invalid_request_error', code: 'model_not_found' } })
		expect(e).toMatchObject({ kind: 'upstream', code: 'upstream_forbidden', detail: 'Your organization org-12345 does not have access' })
		expect(e.message).not.toContain('org-12345')
	})

	it('should keep the param of a 400 and cope with odd bodies', () => {
		expect(decodeError(400, { error: { message: 'bad', type: 'invalid_request_error', param: 'messages', code: 'invalid_value' } })).toMatchObject({ kind: 'invalid_request', param: 'messages', code: 'invalid_value' })
		expect(decodeError(502, 'Bad Gateway').message).toBe('Bad Gateway')
		expect(decodeError(500, null).message).toBe('upstream returned HTTP 500')
	})

	it('should map OpenAI error types to kinds', () => {
		expect(errorKindOf('invalid_request_error')).toBe('invalid_request')
		expect(errorKindOf('rate_limit_exceeded')).toBe('rate_limit')
		expect(errorKindOf('insufficient_quota')).toBe('insufficient_quota')
		expect(errorKindOf('mystery')).toBeUndefined()
	})
})
