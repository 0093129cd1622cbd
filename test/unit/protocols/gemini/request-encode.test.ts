import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { ChatRequest, Message } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import { packToolCallId } from '../../../../src/core/tool-ids'
import { encodeRequest, geminiPath } from '../../../../src/protocols/gemini/request'
import { SKIP_SIGNATURE } from '../../../../src/protocols/gemini/turns'

const base = (messages: Message[], more: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'm', messages, stream: false, ...more })
const u = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

describe('gemini encodeRequest', () => {
	it('should map system, roles and settings, and leave the model out of the body', () => {
		const body = encodeRequest(
			base([u('Hi'), { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] }, u('Bye')], {
				system: [{ type: 'text', text: 'Be brief.' }],
				maxTokens: 64,
				temperature: 0.5,
				topP: 0.8,
				topK: 20,
				stop: ['END'],
			}),
			'gemini-2.5-flash',
		)
		expect(body).toEqual({
			contents: [
				{ role: 'user', parts: [{ text: 'Hi' }] },
				{ role: 'model', parts: [{ text: 'Hello' }] },
				{ role: 'user', parts: [{ text: 'Bye' }] },
			],
			systemInstruction: { parts: [{ text: 'Be brief.' }] },
			generationConfig: { maxOutputTokens: 64, temperature: 0.5, topP: 0.8, topK: 20, stopSequences: ['END'] },
		})
		expect('model' in body).toBe(false)
	})

	it('should merge consecutive same-role messages', () => {
		expect(encodeRequest(base([u('a'), u('b')]), 'm').contents).toEqual([{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }])
	})

	it('should send base64 images as inlineData, parse data URIs, and fall back to fileData for web URLs', () => {
		const body = encodeRequest(
			base([
				{
					role: 'user',
					content: [
						{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' } },
						{ type: 'image', source: { kind: 'url', url: 'data:image/jpeg;base64,/9j/4A' } },
						{ type: 'image', source: { kind: 'url', url: 'https://example.com/cat.webp?x=1' } },
						{ type: 'image', source: { kind: 'url', url: 'https://example.com/blob' } },
					],
				},
			]),
			'm',
		)
		expect(body.contents[0].parts).toEqual([
			{ inlineData: { mimeType: 'image/png', data: 'iVBO' } },
			{ inlineData: { mimeType: 'image/jpeg', data: '/9j/4A' } },
			{ fileData: { fileUri: 'https://example.com/cat.webp?x=1', mimeType: 'image/webp' } },
			{ fileData: { fileUri: 'https://example.com/blob' } },
		])
	})

	it('should encode tool calls without ids and tool results as functionResponse objects', () => {
		const body = encodeRequest(
			base([
				u('weather?'),
				{
					role: 'assistant',
					content: [
						{ type: 'tool_call', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' }, signature: 'c2ln' },
						{ type: 'tool_call', id: 'toolu_2', name: 'get_time', input: {} },
					],
				},
				{
					role: 'user',
					content: [
						{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] },
						{ type: 'tool_result', toolCallId: 'toolu_2', content: [{ type: 'text', text: '{"hour":9}' }] },
					],
				},
				{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'toolu_1', name: 'get_weather', isError: true, content: [{ type: 'text', text: 'rate limited' }] }] },
			]),
			'm',
		)
		expect(body.contents[1]).toEqual({
			role: 'model',
			parts: [
				{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
				{ functionCall: { name: 'get_time', args: {} } },
			],
		})
		expect(body.contents[2].parts).toEqual([
			{ functionResponse: { name: 'get_weather', response: { result: 'sunny' } } },
			{ functionResponse: { name: 'get_time', response: { hour: 9 } } },
			{ functionResponse: { name: 'get_weather', response: { error: 'rate limited' } } },
		])
	})

	it('should put tool-result images after the functionResponse as inlineData parts', () => {
		const body = encodeRequest(
			base([
				{ role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'shot', input: {} }] },
				{
					role: 'user',
					content: [
						{
							type: 'tool_result',
							toolCallId: 'c1',
							content: [
								{ type: 'text', text: 'done' },
								{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
							],
						},
					],
				},
			]),
			'm',
		)
		expect(body.contents[1].parts).toEqual([
			{ functionResponse: { name: 'shot', response: { result: 'done' } } },
			{ inlineData: { mimeType: 'image/png', data: 'AAAA' } },
		])
	})

	it('should reject a tool result whose function name cannot be found', () => {
		const req = base([{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'nope', content: [] }] }])
		expect(() => encodeRequest(req, 'm')).toThrow(GatewayError)
	})

	it('should restore a signature packed into a tool-call id by an OpenAI/Anthropic client', () => {
		const id = packToolCallId('call_0', 'QUJD+/==')
		const body = encodeRequest(
			base([
				{ role: 'assistant', content: [{ type: 'tool_call', id, name: 'f', input: {} }] },
				{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_0', content: [{ type: 'text', text: 'ok' }] }] },
			]),
			'm',
		)
		expect(body.contents[0].parts[0].thoughtSignature).toBe('QUJD+/==')
		expect(body.contents[1].parts[0].functionResponse?.name).toBe('f')
	})

	it('should attach thinking signatures to the next part and not send thinking text', () => {
		const body = encodeRequest(
			base([
				u('q'),
				{
					role: 'assistant',
					content: [
						{ type: 'thinking', text: 'secret reasoning', signature: tagSignature('gemini-text', 'VEhJTks=') },
						{ type: 'text', text: 'answer' },
						{ type: 'thinking', text: 'unsigned, dropped' },
						{ type: 'redacted_thinking', data: 'opaque' },
					],
				},
			]),
			'm',
		)
		expect(body.contents[1].parts).toEqual([{ text: 'answer', thoughtSignature: 'VEhJTks=' }])
	})

	it('should put a trailing signature-only thinking part back onto the text it was split from', () => {
		const body = encodeRequest(
			base([u('q'), { role: 'assistant', content: [{ type: 'text', text: 'Paris.' }, { type: 'thinking', text: '', signature: tagSignature('gemini-text', 'VFJM') }] }]),
			'm',
		)
		expect(body.contents[1].parts).toEqual([{ text: 'Paris.', thoughtSignature: 'VFJM' }])
	})

	it('should never move a thinking signature onto a function call, which Gemini validates strictly', () => {
		const body = encodeRequest(
			base([u('q'), { role: 'assistant', content: [{ type: 'thinking', text: 't', signature: tagSignature('gemini-text', 'U0lH') }, { type: 'tool_call', id: 'c', name: 'f', input: {} }] }]),
			'm',
		)
		expect(body.contents[1].parts).toEqual([
			{ text: '', thoughtSignature: 'U0lH' },
			{ functionCall: { name: 'f', args: {} }, thoughtSignature: SKIP_SIGNATURE },
		])
	})

	it('should use the documented placeholder signature for function calls from another model (llmgateway#1267)', () => {
		const body = encodeRequest(
			base([
				u('q'),
				{ role: 'assistant', content: [{ type: 'tool_call', id: 'a', name: 'f', input: {} }, { type: 'tool_call', id: 'b', name: 'g', input: {} }] },
			]),
			'm',
		)
		expect(body.contents[1].parts[0].thoughtSignature).toBe(SKIP_SIGNATURE)
		expect(body.contents[1].parts[1].thoughtSignature).toBeUndefined()
	})

	it('should encode tools with sanitised parameters and omit empty ones', () => {
		const body = encodeRequest(
			base([u('x')], {
				tools: [
					{ name: 'search', description: 'Search', parameters: { type: 'object', properties: { q: { type: ['string', 'null'] } }, additionalProperties: false } },
					{ name: 'now', parameters: { type: 'object', properties: {} } },
				],
				toolChoice: { type: 'tool', name: 'search' },
			}),
			'm',
		)
		expect(body.tools).toEqual([
			{
				functionDeclarations: [
					{ name: 'search', description: 'Search', parameters: { type: 'object', properties: { q: { type: 'string', nullable: true } } } },
					{ name: 'now' },
				],
			},
		])
		expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['search'] } })
	})

	it('should map every tool choice (WIRE-NOTES §10)', () => {
		const tools = [{ name: 'f', parameters: { type: 'object', properties: {} } }]
		const tc = (toolChoice: ChatRequest['toolChoice']) => encodeRequest(base([u('x')], { toolChoice, tools }), 'm').toolConfig
		expect(tc({ type: 'auto' })).toEqual({ functionCallingConfig: { mode: 'AUTO' } })
		expect(tc({ type: 'none' })).toEqual({ functionCallingConfig: { mode: 'NONE' } })
		expect(tc({ type: 'required' })).toEqual({ functionCallingConfig: { mode: 'ANY' } })
	})

	it('should send no toolConfig without tools, which Gemini refuses without function declarations', () => {
		expect(encodeRequest(base([u('x')], { toolChoice: { type: 'auto' } }), 'm').toolConfig).toBeUndefined()
		expect(encodeRequest(base([u('x')], { toolChoice: { type: 'none' }, tools: [] }), 'm').toolConfig).toBeUndefined()
	})

	it('should map response formats to JSON mode', () => {
		const cfg = (responseFormat: ChatRequest['responseFormat']) => encodeRequest(base([u('x')], { responseFormat }), 'm').generationConfig
		expect(cfg({ type: 'json_object' })).toEqual({ responseMimeType: 'application/json' })
		const schema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }
		expect(cfg({ type: 'json_schema', name: 'x', schema })).toEqual({ responseMimeType: 'application/json', responseJsonSchema: schema })
		expect(cfg({ type: 'text' })).toBeUndefined()
	})

	it('should map reasoning to thinkingConfig, deriving the budget from the effort', () => {
		const cfg = (reasoning: ChatRequest['reasoning']) => encodeRequest(base([u('x')], { reasoning }), 'm').generationConfig?.thinkingConfig
		expect(cfg({ enabled: true, effort: 'medium' })).toEqual({ includeThoughts: true, thinkingBudget: 2048 })
		expect(cfg({ enabled: true, budgetTokens: 5000, effort: 'low' })).toEqual({ includeThoughts: true, thinkingBudget: 5000 })
		expect(cfg({ enabled: true })).toEqual({ includeThoughts: true })
		expect(cfg({ enabled: false, budgetTokens: 0 })).toEqual({ thinkingBudget: 0 })
		expect(cfg({ enabled: false })).toBeUndefined()
	})

	it('should ask Gemini 3 models for a thinking level, never with a budget of 0 (https://ai.google.dev/gemini-api/docs/thinking)', () => {
		const cfg = (model: string, reasoning: ChatRequest['reasoning']) => encodeRequest(base([u('x')], { reasoning }), model).generationConfig?.thinkingConfig
		expect(cfg('gemini-3-flash-preview', { enabled: true, effort: 'medium' })).toEqual({ includeThoughts: true, thinkingLevel: 'MEDIUM' })
		expect(cfg('gemini-3.1-pro-preview', { enabled: true, effort: 'minimal' })).toEqual({ includeThoughts: true, thinkingLevel: 'LOW' })
		// Gemini 3 Pro takes low and high only: medium rounds up.
		expect(cfg('gemini-3-pro-preview', { enabled: true, effort: 'medium' })).toEqual({ includeThoughts: true, thinkingLevel: 'HIGH' })
		expect(cfg('gemini-3-pro-preview', { enabled: true, effort: 'high' })).toEqual({ includeThoughts: true, thinkingLevel: 'HIGH' })
		// Thinking off: Gemini 3 Pro cannot turn it off, so the lowest level every Gemini 3 model takes.
		expect(cfg('gemini-3-pro-preview', { enabled: false, budgetTokens: 0 })).toEqual({ thinkingLevel: 'LOW' })
		// A client's own budget is accepted for backwards compatibility; alone, never beside a level.
		expect(cfg('gemini-3-flash-preview', { enabled: true, budgetTokens: 5000, effort: 'low' })).toEqual({ includeThoughts: true, thinkingBudget: 5000 })
		expect(cfg('gemini-3-flash-preview', { enabled: true })).toEqual({ includeThoughts: true })
		// Gemini 2.5 takes no level.
		expect(cfg('gemini-2.5-flash', { enabled: true, effort: 'medium' })).toEqual({ includeThoughts: true, thinkingBudget: 2048 })
		expect(cfg('gemini-2.5-flash', { enabled: false, budgetTokens: 0 })).toEqual({ thinkingBudget: 0 })
	})

	it('should send thinking turned off with no budget named (Anthropic disabled) as the least each model takes', () => {
		const cfg = (model: string) => encodeRequest(base([u('x')], { reasoning: { enabled: false } }), model).generationConfig?.thinkingConfig
		expect(cfg('gemini-3-pro-preview')).toEqual({ thinkingLevel: 'LOW' })
		// 2.5 Pro cannot turn thinking off (a budget of 0 is a 400): its least budget.
		expect(cfg('gemini-2.5-pro')).toEqual({ thinkingBudget: 128 })
		expect(cfg('gemini-2.5-flash')).toEqual({ thinkingBudget: 0 })
		expect(cfg('gemini-2.5-flash-lite')).toEqual({ thinkingBudget: 0 })
		// A model not known to think is sent nothing, as before.
		expect(cfg('gemini-2.0-flash')).toBeUndefined()
	})

	it('should re-emit extra only for requests decoded from Gemini', () => {
		const extra = {
			safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
			generationConfig: { seed: 3 },
			thinkingConfig: { thinkingLevel: 'LOW' },
			tools: [{ googleSearch: {} }],
		}
		const foreign = encodeRequest(base([u('x')], { extra, reasoning: { enabled: true, effort: 'low' } }), 'm')
		expect(foreign.safetySettings).toBeUndefined()
		expect(foreign.generationConfig).toEqual({ thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } })
		const same = encodeRequest(base([u('x')], { extra: { ...extra, __protocol: 'gemini' }, reasoning: { enabled: true, effort: 'low' } }), 'm')
		expect(same.safetySettings).toEqual(extra.safetySettings)
		expect(same.generationConfig as unknown).toEqual({ seed: 3, thinkingConfig: { thinkingLevel: 'LOW' } })
		expect(same.tools as unknown).toEqual([{ googleSearch: {} }])
		expect('__protocol' in same).toBe(false)
	})

	it("should send a Gemini client's thinkingLevel to a model before Gemini 3 as the level's budget (2.5 refuses levels)", () => {
		const extra = { __protocol: 'gemini', thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' } }
		const req = base([u('x')], { extra, reasoning: { enabled: true, effort: 'high', includeThoughts: true } })
		expect(encodeRequest(req, 'gemini-2.5-flash-lite').generationConfig?.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 4096 })
		expect(encodeRequest(req, 'gemini-3-flash-preview').generationConfig?.thinkingConfig).toEqual({ includeThoughts: true, thinkingLevel: 'HIGH' })
	})
})

describe('geminiPath', () => {
	it('should build the generateContent and SSE stream paths', () => {
		expect(geminiPath('gemini-2.5-flash', false)).toBe('/v1beta/models/gemini-2.5-flash:generateContent')
		expect(geminiPath('gemini-2.5-flash', true)).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse')
	})
})
