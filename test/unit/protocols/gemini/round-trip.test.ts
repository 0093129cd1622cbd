import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import { gemini } from '../../../../src/protocols/gemini'
import type { GeminiRequest } from '../../../../src/protocols/gemini/model'

describe('gemini codec round trip', () => {
	it('should re-encode a decoded Gemini request to the same body', () => {
		// Built untyped: the wire schema is open (built-in tools, seed) but its static type lists only known fields.
		const raw = {
			contents: [
				{ role: 'user', parts: [{ text: 'Weather in Paris?' }, { inlineData: { mimeType: 'image/png', data: 'iVBO' } }] },
				{
					role: 'model',
					parts: [{ text: 'Checking.', thoughtSignature: 'c2lnMQ==' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnMg==' }],
				},
				{ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
				{ role: 'model', parts: [{ text: 'It is 21C.' }] },
				{ role: 'user', parts: [{ text: 'Thanks' }] },
			],
			systemInstruction: { parts: [{ text: 'Be brief.' }] },
			tools: [
				{ functionDeclarations: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] },
				{ googleSearch: {} },
			],
			toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } },
			generationConfig: { maxOutputTokens: 256, temperature: 0.3, stopSequences: ['END'], seed: 9, thinkingConfig: { thinkingLevel: 'LOW' } },
			safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
		}
		const body = raw as GeminiRequest
		const req = gemini.decodeRequest(structuredClone(body))
		const out = gemini.encodeRequest(req, 'gemini-3-flash')
		// The text signature is carried as a signature-only thinking part and returns to the same part.
		expect(out).toEqual(body)
	})

	it('should decode what it encodes (IR → Gemini → IR)', () => {
		const req: ChatRequest = {
			model: '',
			stream: false,
			system: [{ type: 'text', text: 'sys' }],
			messages: [
				{ role: 'user', content: [{ type: 'text', text: 'q' }] },
				{
					role: 'assistant',
					content: [
						// The decoder's normal form of a signed text part: the text, then a signature-only thinking part.
						{ type: 'text', text: 'a' },
						{ type: 'thinking', text: '', signature: tagSignature('gemini-text', 'VA==') },
						{ type: 'tool_call', id: 'call_1_0_f', name: 'f', input: { x: 1 }, signature: 'Rg==' },
					],
				},
				{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1_0_f', name: 'f', content: [{ type: 'text', text: 'ok' }] }] },
			],
			maxTokens: 10,
			toolChoice: { type: 'required' },
			tools: [{ name: 'f', parameters: { type: 'object', properties: { x: { type: 'integer' } } } }],
		}
		const back = gemini.decodeRequest(gemini.encodeRequest(req, 'm'))
		expect(back.messages).toEqual(req.messages)
		expect(back.system).toEqual(req.system)
		expect(back.maxTokens).toBe(10)
		expect(back.toolChoice).toEqual({ type: 'required' })
		expect(back.tools).toEqual(req.tools)
	})
})
