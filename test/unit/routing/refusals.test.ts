/**
 * An upstream refusing the gateway's own credentials: 401 and 403 are the channel's failure with a message of the
 * gateway's own (the vendor's words, which can name the account, kept in `detail` for the log and the operator),
 * and the key, whole or masked as vendors print it, never survives redaction.
 */
import { describe, expect, it } from 'bun:test'
import { upstreamStatusError } from '../../../src/core/errors'
import { upstreamError } from '../../../src/providers/upstream-error'
import { redactKey } from '../../../src/routing/attempts'

describe('upstreamStatusError for refusals', () => {
	it('should make a 401 a retryable upstream_auth failure whose message does not repeat the vendor', () => {
		const e = upstreamStatusError(401, 'Incorrect API key provided: sk-proj-AbCd****wXyZ.')
		expect(e).toMatchObject({ kind: 'upstream', status: 502, retryable: true, code: 'upstream_auth', detail: 'Incorrect API key provided: sk-proj-AbCd****wXyZ.' })
		expect(e.message).toBe("the upstream provider refused the gateway's credentials for this model")
	})

	it('should make a 403 a retryable upstream_forbidden failure, not a credentials one', () => {
		const e = upstreamStatusError(403, 'Your organization org-12345 does not have access to this model')
		expect(e).toMatchObject({ kind: 'upstream', status: 502, retryable: true, code: 'upstream_forbidden' })
		expect(e.message).not.toContain('org-12345')
		expect(e.detail).toContain('org-12345')
	})

	it("should read Gemini's 400 API_KEY_INVALID as the channel's key refused", () => {
		const body = { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } }
		expect(upstreamError(400, JSON.stringify(body), null)).toMatchObject({ code: 'upstream_auth', detail: 'API key not valid. Please pass a valid API key.' })
		// An expired key (Google's, or a Switchboard upstream's in Gemini's shape) likewise.
		const expired = { error: { code: 400, message: 'API key expired. Please renew the API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_EXPIRED' }] } }
		expect(upstreamError(400, JSON.stringify(expired), null)).toMatchObject({ code: 'upstream_auth' })
		// Any other 400 stays the request's own fault.
		const other = { error: { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' } }
		expect(upstreamError(400, JSON.stringify(other), null)).toMatchObject({ kind: 'invalid_request', message: 'Invalid JSON payload' })
	})
})

describe('redactKey', () => {
	it('should cut the key whatever its shape, and the masked forms vendors print', () => {
		expect(redactKey('invalid credentials: AIzaLeakyKey-93kd8s7a', 'AIzaLeakyKey-93kd8s7a')).toBe('invalid credentials: ***')
		expect(redactKey('Incorrect API key provided: sk-proj-AbCd************wXyZ. You can find your API key at x.', 'k')).toBe('Incorrect API key provided: ***. You can find your API key at x.')
		expect(redactKey('Incorrect API key provided: wro*****-key.', 'k')).toBe('Incorrect API key provided: ***.')
		expect(redactKey('bad key sk-abcdefghijklmnop', 'k')).toBe('bad key sk-***')
		expect(redactKey('Your organization org-12345 does not have access', 'k')).toBe('Your organization org-12345 does not have access')
	})
})
