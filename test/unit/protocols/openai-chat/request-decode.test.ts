import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import { decodeRequest, includeUsageOf } from '../../../../src/protocols/openai-chat/request'

const base = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }

/** Runs decodeRequest and returns the 400 it threw. */
function rejection(body: unknown): GatewayError {
	try {
		decodeRequest(body)
	} catch (e) {
		if (e instanceof GatewayError) return e
		throw new Error(`expected a GatewayError, got ${String(e)}`)
	}
	throw new Error('expected decodeRequest to throw')
}

describe('openai-chat decodeRequest', () => {
	it('should decode model, a user string and stream flags', () => {
		const req = decodeRequest({ ...base, stream: true })
		expect(req).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: true })
	})

	it('should let opts.stream override the body flag', () => {
		expect(decodeRequest({ ...base, stream: true }, { stream: false }).stream).toBe(false)
	})

	it('should hoist system and developer messages into system parts in order', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'system', content: 'A' },
				{ role: 'developer', content: [{ type: 'text', text: 'B' }] },
				{ role: 'user', content: 'Hi' },
			],
		})
		expect(req.system).toEqual([
			{ type: 'text', text: 'A' },
			{ type: 'text', text: 'B' },
		])
		expect(req.messages).toHaveLength(1)
	})

	it('should parse data: image URIs into base64 sources without fetching', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{
					role: 'user',
					content: [
						{ type: 'text', text: 'What is this?' },
						{ type: 'image_url', image_url: { url: 'data:image/PNG;base64,iVBORw0KGgo=', detail: 'high' } },
						{ type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
					],
				},
			],
		})
		expect(req.messages[0].content).toEqual([
			{ type: 'text', text: 'What is this?' },
			{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'high' },
			{ type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
		])
	})

	it('should reject image URLs that are neither http(s) nor base64 data URIs', () => {
		expect(rejection({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }] }).param).toBe(
			'messages[0].content[0].image_url.url',
		)
		expect(rejection({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,abc' } }] }] }).status).toBe(400)
	})

	it('should decode assistant tool calls, parse arguments defensively and unpack signatures', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'user', content: 'Weather?' },
				{
					role: 'assistant',
					content: null,
					tool_calls: [
						{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
						{ id: 'call_2__ts_c2ln-_w', type: 'function', function: { name: 'noop', arguments: '' } },
						{ id: 'call_3', type: 'function', function: { name: 'broken', arguments: '{"city":' } },
					],
				},
			],
		})
		expect(req.messages[1]).toEqual({
			role: 'assistant',
			content: [
				{ type: 'tool_call', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
				{ type: 'tool_call', id: 'call_2', name: 'noop', input: {}, signature: 'c2ln+/w=' },
				{ type: 'tool_call', id: 'call_3', name: 'broken', input: {} },
			],
		})
	})

	it('should merge tool messages and the next user message into one user turn, tool results first', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'user', content: 'Weather in Paris and Tokyo?' },
				{
					role: 'assistant',
					content: 'Checking.',
					tool_calls: [
						{ id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
						{ id: 'call_t__ts_c2ln', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
					],
				},
				{ role: 'tool', tool_call_id: 'call_p', content: 'Sunny' },
				{ role: 'tool', tool_call_id: 'call_t__ts_c2ln', content: [{ type: 'text', text: 'Rain' }] },
				{ role: 'user', content: 'Thanks, and London?' },
			],
		})
		expect(req.messages).toHaveLength(3)
		expect(req.messages[2]).toEqual({
			role: 'user',
			content: [
				{ type: 'tool_result', toolCallId: 'call_p', name: 'get_weather', content: [{ type: 'text', text: 'Sunny' }] },
				{ type: 'tool_result', toolCallId: 'call_t', name: 'get_weather', content: [{ type: 'text', text: 'Rain' }] },
				{ type: 'text', text: 'Thanks, and London?' },
			],
		})
	})

	it('should move tool results ahead of user text that came before them in the merged turn', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
				{ role: 'user', content: 'Before the result' },
				{ role: 'tool', tool_call_id: 'call_a', content: 'Done' },
				{ role: 'user', content: 'After it' },
			],
		})
		expect(req.messages[1].content).toEqual([
			{ type: 'tool_result', toolCallId: 'call_a', name: 'f', content: [{ type: 'text', text: 'Done' }] },
			{ type: 'text', text: 'Before the result' },
			{ type: 'text', text: 'After it' },
		])
	})

	it('should merge consecutive same-role messages', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'user', content: 'a' },
				{ role: 'user', content: 'b' },
				{ role: 'assistant', content: 'c' },
				{ role: 'assistant', content: 'd' },
			],
		})
		expect(req.messages.map((m) => [m.role, m.content.length])).toEqual([
			['user', 2],
			['assistant', 2],
		])
	})

	it('should decode reasoning_content and reasoning_details into thinking parts with signatures', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'user', content: 'q' },
				{
					role: 'assistant',
					content: 'a',
					reasoning_content: 'ignored: details carry the text',
					reasoning_details: [
						{ type: 'reasoning.text', text: 'step 1', signature: 'sig1' },
						{ type: 'reasoning.encrypted', data: 'enc' },
					],
				},
				{ role: 'user', content: 'q2' },
				{ role: 'assistant', content: 'b', reasoning_content: 'deepseek thoughts' },
			],
		})
		expect(req.messages[1].content).toEqual([
			{ type: 'thinking', text: 'step 1', signature: 'sig1' },
			{ type: 'redacted_thinking', data: 'enc' },
			{ type: 'text', text: 'a' },
		])
		expect(req.messages[3].content).toEqual([
			{ type: 'thinking', text: 'deepseek thoughts' },
			{ type: 'text', text: 'b' },
		])
	})

	it('should put a signature-only detail on the text of reasoning_content (WIRE-NOTES wire §14)', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'user', content: 'q' },
				{ role: 'assistant', content: 'a', reasoning_content: 'thought', reasoning_details: [{ type: 'reasoning.text', text: '', signature: 's' }] },
			],
		})
		expect(req.messages[1].content[0]).toEqual({ type: 'thinking', text: 'thought', signature: 's' })
	})

	it('should decode sampling, limits, tools, tool_choice, response_format, reasoning and user', () => {
		const req = decodeRequest({
			...base,
			max_tokens: 100,
			max_completion_tokens: 200,
			temperature: 0.2,
			top_p: 0.9,
			stop: 'END',
			tools: [
				{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object', properties: { a: { type: 'string' } } }, strict: true } },
				{ type: 'function', function: { name: 'g' } },
			],
			tool_choice: { type: 'function', function: { name: 'f' } },
			parallel_tool_calls: false,
			response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
			reasoning_effort: 'low',
			user: 'u-1',
		})
		expect(req.maxTokens).toBe(200)
		expect(req.temperature).toBe(0.2)
		expect(req.topP).toBe(0.9)
		expect(req.stop).toEqual(['END'])
		expect(req.tools).toEqual([
			{ name: 'f', description: 'does f', parameters: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
			{ name: 'g', parameters: { type: 'object', properties: {} } },
		])
		expect(req.toolChoice).toEqual({ type: 'tool', name: 'f' })
		expect(req.parallelToolCalls).toBe(false)
		expect(req.responseFormat).toEqual({ type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true })
		expect(req.reasoning).toEqual({ enabled: true, effort: 'low' })
		expect(req.user).toBe('u-1')
		expect(req.extra).toBeUndefined()
	})

	it('should read a json_object response_format with a schema beside it (Together, instructor-js) as a JSON schema format', () => {
		const schema = { type: 'object', properties: { a: { type: 'string' } } }
		expect(decodeRequest({ ...base, response_format: { type: 'json_object', schema } }).responseFormat).toEqual({ type: 'json_schema', name: 'response', schema })
		expect(decodeRequest({ ...base, response_format: { type: 'json_object', schema: 'x' } }).responseFormat).toEqual({ type: 'json_object' })
	})

	it('should map string tool_choice values', () => {
		for (const c of ['auto', 'none', 'required'] as const) expect(decodeRequest({ ...base, tool_choice: c }).toolChoice).toEqual({ type: c })
	})

	it('should keep fields without a canonical slot in extra, marked with their protocol', () => {
		const req = decodeRequest({ ...base, seed: 7, logprobs: true, metadata: { a: '1' }, service_tier: 'flex', n: 1 })
		expect(req.extra).toEqual({ __protocol: 'openai-chat', metadata: { a: '1' }, service_tier: 'flex', n: 1 })
		// seed and logprobs have canonical slots (Gemini takes them too).
		expect([req.seed, req.logprobs]).toEqual([7, true])
		expect(req.choices).toBeUndefined()
	})

	it('should tell the relay of several choices, keeping n for the body it forwards', () => {
		const req = decodeRequest({ ...base, n: 3 })
		expect(req.choices).toBe(3)
		expect(req.extra).toEqual({ __protocol: 'openai-chat', n: 3 })
	})

	it("should map reasoning_effort 'none', 'xhigh' and 'max' to the nearest canonical value and keep the original in extra", () => {
		const none = decodeRequest({ ...base, reasoning_effort: 'none' })
		// An explicit zero budget: 'none' is no reasoning at all, not the model's default (Gemini 2.5 thinks by default).
		expect(none.reasoning).toEqual({ enabled: false, budgetTokens: 0 })
		expect(none.extra?.reasoning_effort).toBe('none')
		expect(decodeRequest({ ...base, reasoning_effort: 'xhigh' }).reasoning).toEqual({ enabled: true, effort: 'high' })
		const max = decodeRequest({ ...base, reasoning_effort: 'max' })
		expect(max.reasoning).toEqual({ enabled: true, effort: 'high' })
		expect(max.extra?.reasoning_effort).toBe('max')
	})

	it('should report whether the client asked for the usage chunk', () => {
		expect(includeUsageOf({ ...base, stream: true, stream_options: { include_usage: true } })).toBe(true)
		expect(includeUsageOf({ ...base, stream: true })).toBe(false)
		expect(includeUsageOf(null)).toBe(false)
	})
})

describe('openai-chat decodeRequest validation', () => {
	const cases: Array<[string, unknown, string]> = [
		['a non-object body', [], 'body'],
		['a missing model', { messages: base.messages }, 'model'],
		['an empty model', { model: '', messages: base.messages }, 'model'],
		['missing messages', { model: 'm' }, 'messages'],
		['an empty messages array', { model: 'm', messages: [] }, 'messages'],
		['a message that is not an object', { model: 'm', messages: ['hi'] }, 'messages[0]'],
		['an unknown role', { model: 'm', messages: [{ role: 'bot', content: 'x' }] }, 'messages[0].role'],
		['user content of the wrong type', { model: 'm', messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
		['an empty user content array', { model: 'm', messages: [{ role: 'user', content: [] }] }, 'messages[0].content'],
		['an unknown user part type', { model: 'm', messages: [{ role: 'user', content: [{ type: 'video' }] }] }, 'messages[0].content[0].type'],
		['an audio part without data', { model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { format: 'wav' } }] }] }, 'messages[0].content[0].input_audio.data'],
		['an audio part without a format', { model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklG' } }] }] }, 'messages[0].content[0].input_audio.format'],
		['a file part with neither file_data nor file_id', { model: 'm', messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf' } }] }] }, 'messages[0].content[0].file'],
		['a file part whose data URL is not base64', { model: 'm', messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:text/plain,hi' } }] }] }, 'messages[0].content[0].file.file_data'],
		['a text part without text', { model: 'm', messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
		['a tool message without tool_call_id', { model: 'm', messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
		['an assistant message with neither content nor tool_calls', { model: 'm', messages: [{ role: 'assistant' }] }, 'messages[0].content'],
		['a tool call without id', { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f' } }] }] }, 'messages[0].tool_calls[0].id'],
		['a tool call without function', { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function' }] }] }, 'messages[0].tool_calls[0].function'],
		['a tool call that is not an object', { model: 'm', messages: [{ role: 'assistant', tool_calls: ['c'] }] }, 'messages[0].tool_calls[0]'],
		['a tool call without a function name', { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: {} }] }] }, 'messages[1].tool_calls[0].function.name'],
		['an assistant part of another type', { model: 'm', messages: [{ role: 'assistant', content: [{ type: 'image_url' }] }] }, 'messages[0].content[0].type'],
		['a refusal that is not a string', { model: 'm', messages: [{ role: 'assistant', content: 'x', refusal: 5 }] }, 'messages[0].refusal'],
		['reasoning_content that is not a string', { model: 'm', messages: [{ role: 'assistant', content: 'x', reasoning_content: 5 }] }, 'messages[0].reasoning_content'],
		['a tool result part without text', { model: 'm', messages: [{ role: 'tool', tool_call_id: 'c', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
		['a system part that is not an object', { model: 'm', messages: [{ role: 'system', content: [1] }, { role: 'user', content: 'hi' }] }, 'messages[0].content[0]'],
		['a tool of an unknown type', { ...base, tools: [{ type: 'mcp', server_url: 'x' }] }, 'tools[0].type'],
		['a tool call of an unknown type', { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'mcp', mcp: {} }] }] }, 'messages[0].tool_calls[0].type'],
		['allowed_tools with a bad mode', { ...base, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'any', tools: [] } } }, 'tool_choice.allowed_tools.mode'],
		['a tool without a name', { ...base, tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
		['tool parameters that are not an object', { ...base, tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }, 'tools[0].function.parameters'],
		['a bad tool_choice', { ...base, tool_choice: 'any' }, 'tool_choice'],
		['a bad response_format type', { ...base, response_format: { type: 'xml' } }, 'response_format.type'],
		['a json_schema without name', { ...base, response_format: { type: 'json_schema', json_schema: { schema: {} } } }, 'response_format.json_schema.name'],
		['a bad reasoning_effort', { ...base, reasoning_effort: 'extreme' }, 'reasoning_effort'],
		['a non-numeric temperature', { ...base, temperature: 'hot' }, 'temperature'],
		['a zero max_tokens', { ...base, max_tokens: 0 }, 'max_tokens'],
		['a stop list with a number', { ...base, stop: ['a', 1] }, 'stop[1]'],
		['n of 0', { ...base, n: 0 }, 'n'],
		['a fractional n', { ...base, n: 1.5 }, 'n'],
		['n over 128', { ...base, n: 129 }, 'n'],
	]
	for (const [what, body, param] of cases)
		it(`should reject ${what} with a 400 naming ${param}`, () => {
			const err = rejection(body)
			expect(err.status).toBe(400)
			expect(err.kind).toBe('invalid_request')
			expect(err.param).toBe(param)
			expect(err.message).toContain(param)
		})
})

describe('openai-chat decodeRequest: what only OpenAI models take', () => {
	const user = { role: 'user', content: 'hi' }
	const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } })
	it('should mark custom tools, custom tool calls, a forced custom tool and legacy function calling as OpenAI-only, naming each', () => {
		const req = decodeRequest({
			model: 'm',
			messages: [user, { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'f', content: 'out' }, { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'p', input: 'x' } }] }, { role: 'tool', tool_call_id: 'c', content: 'ok' }],
			tools: [fn('a'), { type: 'custom', custom: { name: 'p' } }],
			tool_choice: { type: 'custom', custom: { name: 'p' } },
		})
		expect(req.vendorOnly?.map((v) => [v.protocol, v.path])).toEqual([
			['openai-chat', 'messages[1].function_call'],
			['openai-chat', 'messages[2].role'],
			['openai-chat', 'messages[3].tool_calls[0]'],
			['openai-chat', 'tools[1]'],
			['openai-chat', 'tool_choice'],
		])
		expect(req.tools?.map((t) => t.name)).toEqual(['a'])
		// The function's result still counts as input (the assistant turns hold nothing canonical: the user turns merge).
		expect(req.messages).toHaveLength(1)
		expect(req.messages[0].content).toContainEqual({ type: 'text', text: 'out' })
	})
	it('should turn allowed_tools into its tools and mode', () => {
		const req = decodeRequest({ model: 'm', messages: [user], tools: [fn('a'), fn('b'), fn('c')], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'c' } }, { type: 'function', function: { name: 'a' } }] } } })
		expect([req.tools?.map((t) => t.name), req.toolChoice, req.vendorOnly]).toEqual([['a', 'c'], { type: 'required' }, undefined])
	})
})
