import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import { tagSignature } from '../../../../src/core/signatures'
import type { GeminiRequest } from '../../../../src/protocols/gemini/model'
import { decodeRequest } from '../../../../src/protocols/gemini/request'
import { REDACTED_PREFIX } from '../../../../src/protocols/gemini/read'

const user = (text: string) => ({ role: 'user' as const, parts: [{ text }] })
const decode = (body: unknown, stream = false) => decodeRequest(body as GeminiRequest, { stream })

function rejects(body: unknown, param: string | RegExp): void {
	try {
		decode(body)
	} catch (e) {
		expect(e).toBeInstanceOf(GatewayError)
		const err = e as GatewayError
		expect(err.kind).toBe('invalid_request')
		expect(err.status).toBe(400)
		if (typeof param === 'string') expect(err.param).toBe(param)
		else expect(err.message).toMatch(param)
		return
	}
	throw new Error('expected a 400')
}

describe('gemini decodeRequest', () => {
	it('should decode text turns, system instruction and the model from the body', () => {
		const req = decode(
			{
				model: 'models/gemini-2.5-flash',
				systemInstruction: { parts: [{ text: 'Be brief.' }] },
				contents: [user('Hi'), { role: 'model', parts: [{ text: 'Hello!' }] }, { parts: [{ text: 'Bye' }] }],
			},
			true,
		)
		expect(req.model).toBe('gemini-2.5-flash')
		expect(req.stream).toBe(true)
		expect(req.system).toEqual([{ type: 'text', text: 'Be brief.' }])
		expect(req.messages).toEqual([
			{ role: 'user', content: [{ type: 'text', text: 'Hi' }] },
			{ role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] },
			{ role: 'user', content: [{ type: 'text', text: 'Bye' }] },
		])
		expect(req.extra?.__protocol).toBe('gemini')
	})

	it("should accept the legacy 'function' role as a user turn", () => {
		const req = decode({
			contents: [
				{ role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] },
				{ role: 'function', parts: [{ functionResponse: { name: 'f', response: { result: 'ok' } } }] },
			],
		})
		expect(req.messages[1]).toEqual({
			role: 'user',
			content: [{ type: 'tool_result', toolCallId: 'call_0_0_f', name: 'f', content: [{ type: 'text', text: 'ok' }] }],
		})
	})

	it("should default the model to '' when the body has none (it is in the URL)", () => {
		expect(decode({ contents: [user('x')] }).model).toBe('')
	})

	it('should accept the snake_case spellings of proto JSON', () => {
		const req = decode({
			system_instruction: { parts: [{ text: 'sys' }] },
			contents: [{ role: 'user', parts: [{ inline_data: { mime_type: 'image/png', data: 'iVBO' } }] }],
			generation_config: { max_output_tokens: 50, stop_sequences: ['END'], thinking_config: { thinking_budget: 512 } },
			tool_config: { function_calling_config: { mode: 'NONE' } },
		})
		expect(req.system).toEqual([{ type: 'text', text: 'sys' }])
		expect(req.messages[0].content).toEqual([{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' } }])
		expect(req.maxTokens).toBe(50)
		expect(req.stop).toEqual(['END'])
		expect(req.reasoning).toEqual({ enabled: true, budgetTokens: 512 })
		expect(req.toolChoice).toEqual({ type: 'none' })
	})

	it('should decode fileData with a web image URL as an image url source', () => {
		const req = decode({ contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } }] }] })
		expect(req.messages[0].content).toEqual([{ type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } }])
	})

	it('should decode a gs:// or Files API fileData as a Gemini file reference, not a URL other vendors could fetch', () => {
		const req = decode({
			contents: [
				{
					role: 'user',
					parts: [
						{ fileData: { mimeType: 'image/jpeg', fileUri: 'gs://b/cat.jpg' } },
						{ fileData: { mimeType: 'application/pdf', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
					],
				},
			],
		})
		expect(req.messages[0].content).toEqual([
			{ type: 'file', source: { kind: 'uri', uri: 'gs://b/cat.jpg', mediaType: 'image/jpeg' }, path: 'contents[0].parts[0]' },
			{ type: 'file', source: { kind: 'uri', uri: 'https://generativelanguage.googleapis.com/v1beta/files/abc', mediaType: 'application/pdf' }, path: 'contents[0].parts[1]' },
		])
	})

	it('should map generation settings and keep the rest in extra.generationConfig', () => {
		const req = decode({
			contents: [user('x')],
			generationConfig: { temperature: 0.2, topP: 0.9, topK: 40, maxOutputTokens: 100, candidateCount: 1, seed: 7, responseModalities: ['TEXT'] },
		})
		expect([req.temperature, req.topP, req.topK, req.maxTokens, req.seed]).toEqual([0.2, 0.9, 40, 100, 7])
		expect(req.extra?.generationConfig).toEqual({ candidateCount: 1, responseModalities: ['TEXT'] })
	})

	it('should decode JSON mode with responseSchema converted to JSON Schema', () => {
		const req = decode({
			contents: [user('x')],
			generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { a: { type: 'STRING' } } } },
		})
		expect(req.responseFormat).toEqual({ type: 'json_schema', name: 'response', schema: { type: 'object', properties: { a: { type: 'string' } } }, enforced: true })
		expect(decode({ contents: [user('x')], generationConfig: { responseMimeType: 'application/json' } }).responseFormat).toEqual({ type: 'json_object' })
	})

	it('should decode thinkingConfig: budget 0 disables, thinkingLevel becomes an effort, the original is kept', () => {
		expect(decode({ contents: [user('x')], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }).reasoning).toEqual({
			enabled: false,
			budgetTokens: 0,
		})
		const req = decode({ contents: [user('x')], generationConfig: { thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true } } })
		expect(req.reasoning).toEqual({ enabled: true, effort: 'high', includeThoughts: true })
		expect(req.extra?.thinkingConfig).toEqual({ thinkingLevel: 'HIGH', includeThoughts: true })
	})

	it('should decode function declarations, converting Gemini schemas and preferring parametersJsonSchema', () => {
		const req = decode({
			contents: [user('x')],
			tools: [
				{
					functionDeclarations: [
						{ name: 'a', description: 'A', parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } }, required: ['q'] } },
						{ name: 'b', parametersJsonSchema: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false } },
						{ name: 'c' },
					],
				},
				{ googleSearch: {} },
			],
		})
		expect(req.tools).toEqual([
			{ name: 'a', description: 'A', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
			{ name: 'b', parameters: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false } },
			{ name: 'c', parameters: { type: 'object', properties: {} } },
		])
		expect(req.extra?.tools).toEqual([{ googleSearch: {} }])
	})

	it('should decode functionCallingConfig modes into tool choices', () => {
		const choice = (functionCallingConfig: object) => decode({ contents: [user('x')], toolConfig: { functionCallingConfig } }).toolChoice
		expect(choice({ mode: 'AUTO' })).toEqual({ type: 'auto' })
		expect(choice({ mode: 'NONE' })).toEqual({ type: 'none' })
		expect(choice({ mode: 'ANY' })).toEqual({ type: 'required' })
		expect(choice({ mode: 'ANY', allowedFunctionNames: ['f'] })).toEqual({ type: 'tool', name: 'f' })
		expect(choice({ mode: 'VALIDATED' })).toEqual({ type: 'auto' })
	})

	it('should narrow the tools to allowedFunctionNames, and refuse names matching no declaration', () => {
		const tools = [{ functionDeclarations: ['a', 'b', 'c'].map((name) => ({ name })) }]
		const names = (functionCallingConfig: object) => decode({ contents: [user('x')], tools, toolConfig: { functionCallingConfig } }).tools?.map((t) => t.name)
		expect(names({ mode: 'ANY', allowedFunctionNames: ['c', 'a'] })).toEqual(['a', 'c'])
		expect(names({ mode: 'VALIDATED', allowedFunctionNames: ['b'] })).toEqual(['b'])
		expect(names({ mode: 'NONE', allowedFunctionNames: ['b'] })).toEqual(['a', 'b', 'c'])
		expect(names({ mode: 'ANY', allowedFunctionNames: [] })).toEqual(['a', 'b', 'c'])
		expect(() => names({ mode: 'ANY', allowedFunctionNames: ['z'] })).toThrow('allowedFunctionNames names none of the functionDeclarations')
		expect(() => names({ mode: 'ANY', allowedFunctionNames: 'a' })).toThrow('must be an array of function names')
	})

	it('should keep safetySettings and cachedContent in extra', () => {
		const req = decode({
			contents: [user('x')],
			safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
			cachedContent: 'cachedContents/abc',
		})
		expect(req.extra?.safetySettings).toEqual([{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }])
		expect(req.extra?.cachedContent).toBe('cachedContents/abc')
	})

	it('should synthesise stable tool-call ids and match function responses by name in order', () => {
		const body = {
			contents: [
				user('weather in Paris and Rome?'),
				{
					role: 'model',
					parts: [
						{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
						{ functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
					],
				},
				{
					role: 'user',
					parts: [
						{ functionResponse: { name: 'get_weather', response: { result: '20C' } } },
						{ functionResponse: { name: 'get_weather', response: { temp: 25 } } },
					],
				},
			],
		}
		const a = decode(body)
		expect(a.messages[1].content).toEqual([
			{ type: 'tool_call', id: 'call_1_0_get_weather', name: 'get_weather', input: { city: 'Paris' }, signature: 'c2ln' },
			{ type: 'tool_call', id: 'call_1_1_get_weather', name: 'get_weather', input: { city: 'Rome' } },
		])
		expect(a.messages[2].content).toEqual([
			{ type: 'tool_result', toolCallId: 'call_1_0_get_weather', name: 'get_weather', content: [{ type: 'text', text: '20C' }] },
			{ type: 'tool_result', toolCallId: 'call_1_1_get_weather', name: 'get_weather', content: [{ type: 'text', text: '{"temp":25}' }] },
		])
		expect(decode(body).messages).toEqual(a.messages)
	})

	it('should use Gemini call ids when present and match responses by id', () => {
		const req = decode({
			contents: [
				{ role: 'model', parts: [{ functionCall: { id: 'x1', name: 'f', args: {} } }, { functionCall: { id: 'x2', name: 'f', args: {} } }] },
				{ role: 'user', parts: [{ functionResponse: { id: 'x2', name: 'f', response: { error: 'boom' } } }] },
			],
		})
		expect(req.messages[1].content).toEqual([
			{ type: 'tool_result', toolCallId: 'x2', name: 'f', content: [{ type: 'text', text: 'boom' }], isError: true },
		])
	})

	it("should merge consecutive thought parts into one thinking part and move a text signature onto it, as Gemini's", () => {
		const req = decode({
			contents: [
				user('q'),
				{
					role: 'model',
					parts: [{ text: 'a', thought: true }, { text: 'b', thought: true }, { text: 'answer', thoughtSignature: 'U0lH' }],
				},
			],
		})
		expect(req.messages[1].content).toEqual([
			{ type: 'thinking', text: 'ab', signature: tagSignature('gemini-text', 'U0lH') },
			{ type: 'text', text: 'answer' },
		])
	})

	it('should decode a redacted-thinking marker back into redacted thinking', () => {
		const req = decode({
			contents: [user('q'), { role: 'model', parts: [{ text: '', thought: true, thoughtSignature: `${REDACTED_PREFIX}ZGF0YQ==` }, { text: 'ok' }] }],
		})
		expect(req.messages[1].content[0]).toEqual({ type: 'redacted_thinking', data: 'ZGF0YQ==' })
	})

	it('should reject what Gemini rejects with a 400 naming the field', () => {
		rejects({}, 'contents')
		rejects({ contents: [] }, 'contents')
		rejects('nope', /JSON object/)
		rejects({ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'contents[0].role')
		rejects({ contents: [{ role: 'user', parts: [] }] }, 'contents[0].parts')
		rejects({ contents: [{ role: 'user', parts: ['x'] }] }, 'contents[0].parts[0]')
		rejects({ contents: [{ role: 'model', parts: [{ functionCall: { args: {} } }] }] }, 'contents[0].parts[0]')
		rejects({ contents: [{ role: 'model', parts: [{ functionCall: { name: 'f', args: [] } }] }] }, 'contents[0].parts[0]')
		rejects({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }] }, 'contents[0].parts[0].functionResponse')
		rejects({ contents: [{ role: 'user', parts: [{ functionResponse: { response: {} } }] }] }, 'contents[0].parts[0].functionResponse.name')
		rejects({ contents: [{ role: 'user', parts: [{ functionCall: { name: 'f' } }] }] }, 'contents[0].parts[0]')
		rejects({ contents: [{ role: 'user', parts: [{ videoMetadata: {} }] }] }, 'contents[0].parts[0]')
		rejects({ contents: [user('x')], generationConfig: { temperature: 'hot' } }, 'generationConfig.temperature')
		rejects({ contents: [user('x')], generationConfig: { stopSequences: 'END' } }, 'generationConfig.stopSequences')
		rejects({ contents: [user('x')], tools: [{ functionDeclarations: [{ description: 'no name' }] }] }, 'tools[0].functionDeclarations[0].name')
		rejects({ contents: [user('x')], systemInstruction: { parts: [{ inlineData: {} }] } }, 'systemInstruction.parts[0]')
	})

	it('should render code-execution parts as text rather than reject them', () => {
		const req = decode({
			contents: [
				user('q'),
				{ role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1' } }] },
			],
		})
		expect(req.messages[1].content).toEqual([{ type: 'text', text: '\n```python\nprint(1)\n```\n\n```output\n1\n```\n' }])
	})
})
