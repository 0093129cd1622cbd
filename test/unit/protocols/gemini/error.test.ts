import { describe, expect, it } from 'bun:test'
import { type ErrorKind, GatewayError } from '../../../../src/core/errors'
import { encodeError, encodeStreamError } from '../../../../src/protocols/gemini/error'

describe('gemini encodeError', () => {
	it('should render {error:{code,message,status}} with the HTTP status of each kind', () => {
		const cases: Array<[ErrorKind, number, string]> = [
			['invalid_request', 400, 'INVALID_ARGUMENT'],
			['authentication', 401, 'UNAUTHENTICATED'],
			['permission', 403, 'PERMISSION_DENIED'],
			['not_found', 404, 'NOT_FOUND'],
			['rate_limit', 429, 'RESOURCE_EXHAUSTED'],
			['api_error', 500, 'INTERNAL'],
			['upstream', 502, 'INTERNAL'],
			['unavailable', 503, 'UNAVAILABLE'],
			['overloaded', 503, 'UNAVAILABLE'],
			['timeout', 504, 'DEADLINE_EXCEEDED'],
		]
		for (const [kind, code, status] of cases) {
			const out = encodeError(new GatewayError(kind, 'boom'))
			expect(out.status).toBe(code)
			expect(out.body).toEqual({ error: { code, message: 'boom', status } })
		}
	})

	it('should keep 402 for insufficient quota, with RESOURCE_EXHAUSTED and billing in the message', () => {
		const out = encodeError(new GatewayError('insufficient_quota', 'Insufficient balance'))
		expect(out.status).toBe(402)
		expect(out.body).toEqual({ error: { code: 402, message: 'Insufficient balance (billing)', status: 'RESOURCE_EXHAUSTED' } })
	})

	it('should send retry-after when known, and the same wait as a google.rpc.RetryInfo in details', () => {
		const out = encodeError(new GatewayError('rate_limit', 'slow', { retryAfter: 2.5 }))
		expect(out.headers).toEqual({ 'retry-after': '3' })
		const details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' }]
		expect(out.body).toEqual({ error: { code: 429, message: 'slow', status: 'RESOURCE_EXHAUSTED', details } })
	})

	it('should render a stream error as a bare data frame', () => {
		const frame = encodeStreamError(new GatewayError('upstream', 'cut'))
		expect(frame.event).toBeUndefined()
		expect(JSON.parse(frame.data)).toEqual({ error: { code: 502, message: 'cut', status: 'INTERNAL' } })
	})
})
