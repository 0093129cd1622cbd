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
})
