/**
 * A vendor's 4xx about the request itself reaches the caller with the vendor's `code` and `param`: clients switch on
 * them (an agent compacts its history on `context_length_exceeded`).
 */
import { describe, expect, it } from 'bun:test'
import { errorBody } from '../../../src/protocols/openai-chat/error'
import { upstreamError } from '../../../src/providers/upstream-error'

describe('upstreamError', () => {
	it("should keep OpenAI's code and param on a request error, and the caller's OpenAI shape shows them", () => {
		const said = { error: { message: "This model's maximum context length is 128000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } }
		const e = upstreamError(400, JSON.stringify(said), null)
		expect(e).toMatchObject({ kind: 'invalid_request', status: 400, code: 'context_length_exceeded', param: 'messages', retryable: false })
		expect(errorBody(e).error).toEqual({ message: said.error.message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' })
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
})
