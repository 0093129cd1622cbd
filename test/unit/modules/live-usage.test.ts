/** Live's `usageMetadata` read into the canonical usage, and close reasons kept within what a close frame carries. */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import { closeReason, liveClose } from '../../../src/modules/live/close'
import { addUsage, audioTokens, liveUsage } from '../../../src/modules/live/usage'

describe('liveUsage', () => {
	it('should read the response counts as output, cached prompt tokens as cache reads, and audio of both sides apart', () => {
		const u = liveUsage({
			promptTokenCount: 100,
			cachedContentTokenCount: 40,
			responseTokenCount: 50,
			thoughtsTokenCount: 7,
			promptTokensDetails: [
				{ modality: 'TEXT', tokenCount: 70 },
				{ modality: 'AUDIO', tokenCount: 30 },
			],
			cacheTokensDetails: [{ modality: 'TEXT', tokenCount: 40 }],
			responseTokensDetails: [{ modality: 'AUDIO', tokenCount: 45 }],
		})
		expect(u).toEqual({ input: 60, cacheRead: 40, cacheWrite: 0, output: 57, reasoning: 7, audioInput: 30, audioOutput: 45 })
		expect(liveUsage(undefined)).toBeUndefined()
	})

	it('should add two generations of a turn field by field', () => {
		const a = liveUsage({ promptTokenCount: 25, responseTokenCount: 8 })!
		const b = liveUsage({ promptTokenCount: 30, responseTokenCount: 12, responseTokensDetails: [{ modality: 'AUDIO', tokenCount: 10 }] })!
		expect(addUsage(a, b)).toEqual({ input: 55, cacheRead: 0, cacheWrite: 0, output: 20, reasoning: 0, audioInput: 0, audioOutput: 10, imageOutput: 0 })
	})

	it('should count PCM16 audio at 32 tokens a second, at the rate its mime type names', () => {
		// One second of 24 kHz PCM16 is 48,000 bytes: 64,000 base64 characters.
		expect(audioTokens(64_000, 'audio/pcm;rate=24000', 16_000)).toBe(32)
		expect(audioTokens(64_000, 'audio/pcm', 16_000)).toBe(48)
		expect(audioTokens(0, 'audio/pcm', 16_000)).toBe(0)
	})
})

describe('liveClose', () => {
	it('should keep a close reason within 123 bytes, cut on a character boundary', () => {
		const reason = closeReason('é'.repeat(100))
		expect(new TextEncoder().encode(reason).length).toBeLessThanOrEqual(123)
		expect(reason.endsWith('…')).toBe(true)
		expect(closeReason('short')).toBe('short')
	})

	it('should close 1007 for a bad key, 1008 for a model refused, 1011 when no upstream could be reached', () => {
		expect(liveClose(new GatewayError('authentication', 'Invalid API key'), '', 'v1')).toEqual({ code: 1007, reason: 'Invalid API key' })
		expect(liveClose(new GatewayError('not_found', 'x'), 'gemini-x', 'v1beta').code).toBe(1008)
		expect(liveClose(new GatewayError('invalid_request', 'not on gemini', { param: 'model' }), 'm', 'v1')).toEqual({ code: 1008, reason: 'not on gemini' })
		expect(liveClose(new GatewayError('upstream', 'refused'), 'm', 'v1').code).toBe(1011)
	})

	it("should refuse a key as Google does: an unknown or expired one 1007 in Google's words, a disabled one 1008", () => {
		const refused = (code: string, message: string) => liveClose(new GatewayError('authentication', message, { code }), '', 'v1beta')
		expect(refused('invalid_api_key', 'Invalid API key')).toEqual({ code: 1007, reason: 'API key not valid. Please pass a valid API key.' })
		expect(refused('api_key_expired', 'API key expired at 2020-01-01T00:00:00.000Z')).toEqual({ code: 1007, reason: 'API key expired. Please renew the API key.' })
		expect(refused('api_key_disabled', 'API key is disabled')).toEqual({ code: 1008, reason: 'API key is disabled' })
		expect(refused('account_disabled', 'The account of this API key is disabled')).toEqual({ code: 1008, reason: 'The account of this API key is disabled' })
		expect(refused('missing_api_key', 'Missing API key: send x-goog-api-key')).toEqual({ code: 1008, reason: 'Missing API key: send x-goog-api-key' })
	})
})
