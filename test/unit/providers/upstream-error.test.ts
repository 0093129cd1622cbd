/**
 * A vendor's 4xx about the request itself reaches the caller with the vendor's `code` and `param`: clients switch on
 * them (an agent compacts its history on `context_length_exceeded`).
 */
import { describe, expect, it } from 'bun:test'
import { encodeError } from '../../../src/protocols/anthropic-messages/error'
import { errorBody } from '../../../src/protocols/openai-chat/error'
import { retryAfterOf, retryDelayOf, upstreamError } from '../../../src/providers/upstream-error'

describe('upstreamError', () => {
	it("should keep OpenAI's code and param on a request error, and the caller's OpenAI shape shows them", () => {
		const said = { error: { message: "This model's maximum context length is 128000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } }
		const e = upstreamError(400, JSON.stringify(said), null)
		expect(e).toMatchObject({ kind: 'invalid_request', status: 400, code: 'context_length_exceeded', param: 'messages', retryable: false })
		expect(errorBody(e).error).toEqual({ message: said.error.message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' })
	})

	it('should word an overlong prompt without counts as Anthropic does, keeping the vendor\'s explanation', () => {
		const said = { error: { message: 'Your input exceeds the context window of this model. Please adjust your input and try again.', type: 'invalid_request_error', code: 'context_length_exceeded' } }
		const e = upstreamError(400, JSON.stringify(said), null)
		expect(e).toMatchObject({ kind: 'invalid_request', code: 'context_length_exceeded', overflow: {} })
		expect((encodeError(e).body as { error: { message: string } }).error.message).toBe(`prompt is too long: ${said.error.message}`)
		// Any other 400 is not one.
		expect(upstreamError(400, JSON.stringify({ error: { message: 'max_tokens is too large', code: 'invalid_value' } }), null).overflow).toBeUndefined()
	})

	it("should keep the vendor's words of a 401 or 403 out of the caller's message, and cope with odd bodies", () => {
		const e = upstreamError(403, JSON.stringify({ error: { message: 'Your organization org-12345 does not have access', type: 'invalid_request_error', code: 'model_not_found' } }), null)
		expect(e).toMatchObject({ kind: 'upstream', code: 'upstream_forbidden', detail: 'Your organization org-12345 does not have access' })
		expect(e.message).not.toContain('org-12345')
		expect(upstreamError(401, JSON.stringify({ error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } }), null)).toMatchObject({ kind: 'upstream', code: 'upstream_auth' })
		expect(upstreamError(409, JSON.stringify({ error: { message: 'Conflict on the file', code: 'file_conflict' } }), null)).toMatchObject({ kind: 'invalid_request', status: 409, code: 'file_conflict', message: 'Conflict on the file' })
		// A 5xx is the upstream's trouble, in the gateway's words; what it said is the operator's (detail).
		expect(upstreamError(502, 'Bad Gateway', null)).toMatchObject({ message: 'the upstream provider failed (HTTP 502)', detail: 'Bad Gateway' })
		expect(upstreamError(500, '', null)).toMatchObject({ message: 'the upstream provider failed (HTTP 500)', detail: 'upstream returned HTTP 500' })
		// A 4xx not worded in JSON (a proxy's page) is not shown; one worded so is, its account ids masked.
		expect(upstreamError(400, '<html><body>400 Bad Request nginx/1.18 at 10.0.0.7</body></html>', null)).toMatchObject({ message: 'the upstream provider answered HTTP 400', status: 400 })
		expect(upstreamError(400, JSON.stringify({ error: { message: 'Invalid model for organization org-Q2x9Zk4LmN8pR7tV1wY3bC5d' } }), null).message).toBe('Invalid model for organization org-***')
	})

	it("should not take Gemini's numeric code, nor a code on the gateway's own failures", () => {
		const gemini = upstreamError(400, JSON.stringify({ error: { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' } }), null)
		expect(gemini.code).toBeUndefined()
		const refused = upstreamError(401, JSON.stringify({ error: { message: 'bad key', code: 'invalid_api_key' } }), null)
		expect(refused.code).toBe('upstream_auth')
	})

	it('should make an overload 503 whichever vendor said it, and leave other 5xx the gateway 502 (QA report item 9)', () => {
		const openai = upstreamError(503, JSON.stringify({ error: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', param: null, code: null } }), '2')
		const anthropic = upstreamError(529, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), null)
		const gemini = upstreamError(503, JSON.stringify({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }), null)
		for (const e of [openai, anthropic, gemini]) expect([e.kind, e.status, e.retryable]).toEqual(['overloaded', 503, true])
		expect(openai.retryAfter).toBe(2)
		// A proxy's 500 around the vendor's overload body is still an overload.
		expect(upstreamError(500, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), null).status).toBe(503)
		for (const status of [500, 502, 504]) expect([upstreamError(status, '{"error":{"message":"boom"}}', null).kind, upstreamError(status, 'x', null).status]).toEqual(['upstream', 502])
	})

	it('should make a 429 upstream_rate_limited in the gateway words, the vendor account in detail (QA operator report item 6)', () => {
		const said = 'Rate limit reached for gpt-4o in organization org-AbC123 on tokens per min (TPM): Limit 30000, Used 29000.'
		const e = upstreamError(429, JSON.stringify({ error: { message: said, type: 'tokens', param: null, code: 'rate_limit_exceeded' } }), new Headers({ 'retry-after': '20' }))
		expect(e).toMatchObject({ kind: 'rate_limit', status: 429, code: 'upstream_rate_limited', retryable: true, retryAfter: 20, detail: said })
		expect(e.message).not.toContain('org-AbC123')
		expect(errorBody(e).error).toMatchObject({ type: 'rate_limit_error', code: 'upstream_rate_limited' })
	})

	it('should take how long to wait from retry-after-ms, retry-after, or Gemini RetryInfo', () => {
		const body = JSON.stringify({ error: { message: 'slow down' } })
		expect(upstreamError(429, body, new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' })).retryAfter).toBe(1.5)
		expect(upstreamError(429, body, new Headers({ 'retry-after': '9' })).retryAfter).toBe(9)
		expect(upstreamError(429, body, '4').retryAfter).toBe(4)
		expect(upstreamError(429, body, new Headers()).retryAfter).toBeUndefined()
		const gemini = JSON.stringify({
			error: {
				code: 429,
				message: 'You exceeded your current quota … consumer: projects/1234',
				status: 'RESOURCE_EXHAUSTED',
				details: [
					{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
					{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' },
				],
			},
		})
		const e = upstreamError(429, gemini, new Headers())
		expect([e.code, e.retryAfter]).toEqual(['upstream_rate_limited', 37])
		expect(e.message).not.toContain('projects/1234')
		// A header, when there is one, wins over the body.
		expect(upstreamError(429, gemini, new Headers({ 'retry-after': '5' })).retryAfter).toBe(5)
	})

	it('should read the header forms and the Duration form of each', () => {
		expect(retryAfterOf(new Headers({ 'retry-after-ms': '250' }))).toBe(0.25)
		expect(retryAfterOf(new Headers({ 'retry-after-ms': 'soon', 'retry-after': '3' }))).toBe(3)
		expect(retryAfterOf(new Headers({ 'retry-after': new Date(Date.now() + 10_000).toUTCString() }))).toBeGreaterThan(8)
		expect(retryDelayOf([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.250s' }])).toBe(0.25)
		expect(retryDelayOf([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: 'soon' }])).toBeUndefined()
		expect(retryDelayOf('nope')).toBeUndefined()
	})
})
