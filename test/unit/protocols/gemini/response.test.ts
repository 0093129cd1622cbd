import { describe, expect, it } from 'bun:test'
import type { ChatResponse } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import { carryThinking } from '../../../../src/protocols/gemini/carried-thinking'
import type { GeminiContent, GeminiResponse } from '../../../../src/protocols/gemini/model'
import { REDACTED_PREFIX } from '../../../../src/protocols/gemini/read'
import { decodeRequest } from '../../../../src/protocols/gemini/request'
import { decodeResponse, encodeResponse, usageOf } from '../../../../src/protocols/gemini/response'
import { fixtureJson } from './helpers'

describe('gemini decodeResponse', () => {
	it('should decode text, id, model and usage with cache and thoughts', async () => {
		const res = decodeResponse(await fixtureJson<GeminiResponse>('response-text.json'))
		expect(res).toMatchObject({
			id: 'rtxResp01',
			model: 'gemini-2.5-flash',
			content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
			stopReason: 'end_turn',
		})
		expect(res.usage).toEqual({ input: 16, cacheRead: 1024, cacheWrite: 0, output: 39, reasoning: 30 })
	})

	it('should decode thinking and parallel function calls with stable ids and the signature on the first', async () => {
		const body = await fixtureJson<GeminiResponse>('response-tools.json')
		const res = decodeResponse(body)
		expect(res.content).toEqual([
			{ type: 'thinking', text: 'Comparing two cities.' },
			{ type: 'tool_call', id: 'call_rtlResp01_0_get_weather', name: 'get_weather', input: { city: 'Paris' }, signature: 'UmVzcFRvb2xTaWc=' },
			{ type: 'tool_call', id: 'call_rtlResp01_1_get_weather', name: 'get_weather', input: { city: 'Rome' } },
		])
		expect(res.stopReason).toBe('tool_use')
		expect(decodeResponse(body).content).toEqual(res.content)
	})

	it('should decode a blocked prompt as an empty content_filter response', async () => {
		const res = decodeResponse(await fixtureJson<GeminiResponse>('response-blocked.json'))
		expect(res.content).toEqual([])
		expect(res.stopReason).toBe('content_filter')
		expect(res.usage.input).toBe(15)
	})

	it('should map finish reasons', () => {
		const reason = (finishReason: string) =>
			decodeResponse({ candidates: [{ content: { role: 'model', parts: [{ text: 'x' }] }, finishReason }] }).stopReason
		expect(reason('MAX_TOKENS')).toBe('max_tokens')
		for (const r of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']) expect(reason(r)).toBe('content_filter')
		expect(reason('OTHER')).toBe('end_turn')
		expect(reason('MALFORMED_FUNCTION_CALL')).toBe('end_turn')
	})

	it('should keep max_tokens when a truncated turn had a function call', () => {
		const res = decodeResponse({
			candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'MAX_TOKENS' }],
		})
		expect(res.stopReason).toBe('max_tokens')
	})

	it('should not throw on odd bodies', () => {
		expect(decodeResponse({} as GeminiResponse).content).toEqual([])
		expect(decodeResponse(null as unknown as GeminiResponse).stopReason).toBe('end_turn')
		expect(decodeResponse({ candidates: [{ content: { parts: ['x' as never] } }] }).content).toEqual([])
	})
})

describe('gemini encodeResponse', () => {
	const res: ChatResponse = {
		id: 'msg_1',
		model: 'claude-x',
		content: [
			{ type: 'thinking', text: 'hmm', signature: 'QW50aHJvcGlj' },
			{ type: 'redacted_thinking', data: 'ZW5j' },
			{ type: 'text', text: 'Calling.' },
			{ type: 'tool_call', id: 'toolu_1', name: 'f', input: { a: 1 } },
		],
		stopReason: 'tool_use',
		usage: { input: 10, cacheRead: 90, cacheWrite: 5, output: 30, reasoning: 12 },
	}

	it('should produce a GenerateContentResponse with thought parts, function calls and Gemini usage', () => {
		expect(encodeResponse(res, { model: 'my-alias', includeThoughts: true })).toEqual({
			candidates: [
				{
					content: {
						role: 'model',
						parts: [
							// Claude's signature with its origin tag; its thinking carried on the function call as well.
							{ text: 'hmm', thought: true, thoughtSignature: tagSignature('anthropic', 'QW50aHJvcGlj') },
							{ text: '', thought: true, thoughtSignature: `${REDACTED_PREFIX}ZW5j` },
							{ text: 'Calling.' },
							{
								functionCall: { id: 'toolu_1', name: 'f', args: { a: 1 } },
								thoughtSignature: carryThinking([
									{ at: 0, part: { type: 'thinking', text: 'hmm', signature: 'QW50aHJvcGlj' } },
									{ at: 0, part: { type: 'redacted_thinking', data: 'ZW5j' } },
								]),
							},
						],
					},
					finishReason: 'STOP',
					index: 0,
				},
			],
			usageMetadata: { promptTokenCount: 105, candidatesTokenCount: 18, totalTokenCount: 135, thoughtsTokenCount: 12, cachedContentTokenCount: 90 },
			modelVersion: 'my-alias',
			responseId: 'msg_1',
		})
	})

	it('should round-trip content as the client sends it back, and usage through decodeResponse', () => {
		const answer = encodeResponse(res, { model: 'm' })
		const history = decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'q' }] }, answer.candidates![0]!.content as GeminiContent] })
		// Claude's signature comes back verbatim; the placeholder is no signature.
		expect(history.messages[1]!.content as unknown[]).toEqual(res.content)
		const back = decodeResponse(answer)
		expect(back.stopReason).toBe('tool_use')
		// Gemini has no cache-write field: those tokens come back as plain input.
		expect(back.usage).toEqual({ input: 15, cacheRead: 90, cacheWrite: 0, output: 30, reasoning: 12 })
	})

	it("should give the shown thinking back once, whether the client kept its thought parts or, as Gemini CLI, only the call's signature", () => {
		const parts = encodeResponse(res, { model: 'm', includeThoughts: true }).candidates![0]!.content!.parts!
		for (const kept of [parts, parts.filter((p) => !p.thought)]) {
			const history = decodeRequest({ contents: [{ role: 'user', parts: [{ text: 'q' }] }, { role: 'model', parts: kept }] })
			expect(history.messages[1]!.content as unknown[]).toEqual(res.content)
		}
		// A final answer's thinking is not carried: nothing needs it back.
		const answer = encodeResponse({ ...res, content: res.content.slice(0, 3), stopReason: 'end_turn' }, { model: 'm', includeThoughts: true })
		expect(answer.candidates![0]!.content!.parts!.map((p) => p.thoughtSignature)).toEqual([tagSignature('anthropic', 'QW50aHJvcGlj'), `${REDACTED_PREFIX}ZW5j`, undefined])
	})

	it('should map stop reasons to finishReason', () => {
		const fr = (stopReason: ChatResponse['stopReason']) => encodeResponse({ ...res, stopReason }, { model: 'm' }).candidates?.[0].finishReason
		expect(fr('max_tokens')).toBe('MAX_TOKENS')
		expect(fr('content_filter')).toBe('SAFETY')
		expect(fr('end_turn')).toBe('STOP')
		expect(fr('stop_sequence')).toBe('STOP')
	})
})

describe('gemini usageOf', () => {
	it('should read usageMetadata without a full decode', () => {
		expect(usageOf({ usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 5, thoughtsTokenCount: 7 } })).toEqual({
			input: 40,
			cacheRead: 60,
			cacheWrite: 0,
			output: 12,
			reasoning: 7,
		})
		expect(usageOf({})).toBeUndefined()
	})

	it('should count tool-use prompt tokens as input', () => {
		expect(usageOf({ usageMetadata: { promptTokenCount: 10, toolUsePromptTokenCount: 30, candidatesTokenCount: 1 } })?.input).toBe(40)
	})
})
