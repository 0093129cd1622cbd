import { describe, expect, it } from 'bun:test'
import { type ErrorKind, GatewayError } from '../../../../src/core/errors'
import { encodeError, encodeStreamError } from '../../../../src/protocols/gemini/error'

describe('gemini encodeError', () => {
	it('should render {error:{code,message,status}} with the HTTP status of each kind', () => {
		const cases: Array<[ErrorKind, number, string]> = [
			['invalid_request', 400, 'INVALID_ARGUMENT'],
			// Not a key refusal (those have a code of their own, below): the kind's status.
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

	it("should refuse a key as Google's Gemini API does, with ErrorInfo reasons its clients read, never 401", () => {
		const service = { domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }
		// Google's answer, verbatim: the message twice, in the error and localized.
		const google = (message: string, reason: string) => ({
			error: {
				code: 400,
				message,
				status: 'INVALID_ARGUMENT',
				details: [
					{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, ...service },
					{ '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
				],
			},
		})
		const out = encodeError(new GatewayError('authentication', 'Invalid API key', { code: 'invalid_api_key' }))
		expect(out.status).toBe(400)
		expect(out.body).toEqual(google('API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'))
		const expired = encodeError(new GatewayError('authentication', 'API key expired at 2020-01-01T00:00:00.000Z', { code: 'api_key_expired' }))
		expect(expired.status).toBe(400)
		expect(expired.body).toEqual(google('API key expired. Please renew the API key.', 'API_KEY_EXPIRED'))
		for (const [code, message] of [
			['api_key_disabled', 'API key is disabled'],
			['account_disabled', 'The account of this API key is disabled'],
		] as const) {
			const out = encodeError(new GatewayError('authentication', message, { code }))
			expect(out.status).toBe(403)
			const details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'CONSUMER_SUSPENDED', ...service }]
			expect(out.body).toEqual({ error: { code: 403, message, status: 'PERMISSION_DENIED', details } })
		}
		const missing = encodeError(new GatewayError('authentication', 'Missing API key: send x-goog-api-key: sk-…', { code: 'missing_api_key' }))
		expect(missing.status).toBe(403)
		expect(missing.body).toEqual({ error: { code: 403, message: 'Missing API key: send x-goog-api-key: sk-…', status: 'PERMISSION_DENIED' } })
		// The same in a stream's frame.
		expect(JSON.parse(encodeStreamError(new GatewayError('authentication', 'x', { code: 'invalid_api_key' })).data).error.details[0].reason).toBe('API_KEY_INVALID')
	})

	it('should render a stream error as a bare data frame', () => {
		const frame = encodeStreamError(new GatewayError('upstream', 'cut'))
		expect(frame.event).toBeUndefined()
		expect(JSON.parse(frame.data)).toEqual({ error: { code: 502, message: 'cut', status: 'INTERNAL' } })
	})
})
