import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import { decodeRequest, encodeRequest, unconvertible } from '../../../../src/protocols/openai-responses/request'
import { fixtureJson } from './helpers'

const fails = (body: unknown): GatewayError => {
	try {
		decodeRequest(body)
	} catch (e) {
		return e as GatewayError
	}
	throw new Error('expected a 400')
}

describe('openaiResponses.decodeRequest', () => {
	it('should decode an agent turn: instructions and developer text as system, image, reasoning, calls and outputs', async () => {
		const req = decodeRequest(await fixtureJson('request-agent.json'))
		expect(req.model).toBe('gpt-4.1')
		expect(req.system).toEqual([
			{ type: 'text', text: 'You are terse.' },
			{ type: 'text', text: 'Answer in English.' },
		])
		expect(req.messages.map((m) => [m.role, m.content.map((p) => p.type)])).toEqual([
			['user', ['text', 'image']],
			['assistant', ['thinking', 'tool_call', 'tool_call']],
			['user', ['tool_result', 'tool_result', 'text']],
		])
		const [, assistant, results] = req.messages
		expect(req.messages[0].content[1]).toEqual({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'low' })
		expect(assistant.content[0]).toEqual({ type: 'thinking', text: 'Two cities.', signature: 'c2lnLUE=' })
		expect(assistant.content[2]).toEqual({ type: 'tool_call', id: 'call_Tk9Zx8', name: 'get_weather', input: { city: 'Tokyo' }, signature: 'Z2VtaW5p' })
		expect(results.content[1]).toEqual({ type: 'tool_result', toolCallId: 'call_Tk9Zx8', name: 'get_weather', content: [{ type: 'text', text: '22C rain' }] })
		expect(req.tools).toEqual([
			{ name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true },
		])
		expect(req).toMatchObject({ toolChoice: { type: 'auto' }, parallelToolCalls: true, maxTokens: 500, temperature: 0.2, user: 'u-42', stream: false })
		expect(req.responseFormat).toEqual({ type: 'json_schema', name: 'summary', schema: { type: 'object', properties: { text: { type: 'string' } } }, strict: true })
		expect(req.reasoning).toEqual({ enabled: true, effort: 'medium', includeThoughts: true })
		expect(req.extra).toMatchObject({ __protocol: 'openai-responses', store: false, include: ['reasoning.encrypted_content'], metadata: { trace: 't1' }, text: { verbosity: 'low' } })
	})

	it('should read a string input as one user message', () => {
		expect(decodeRequest({ model: 'm', input: 'Hello' }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }])
	})

	it('should narrow the tools to allowed_tools and keep its mode', () => {
		const req = decodeRequest({
			model: 'm',
			input: 'x',
			tools: ['a', 'b'].map((name) => ({ type: 'function', name, parameters: { type: 'object' } })),
			tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] },
		})
		expect(req.tools?.map((t) => t.name)).toEqual(['b'])
		expect(req.toolChoice).toEqual({ type: 'required' })
	})

	it('should map reasoning effort none to reasoning off and xhigh and max to high', () => {
		expect(decodeRequest({ model: 'm', input: 'x', reasoning: { effort: 'none' } }).reasoning).toEqual({ enabled: false })
		expect(decodeRequest({ model: 'm', input: 'x', reasoning: { effort: 'xhigh' } }).reasoning).toEqual({ enabled: true, effort: 'high' })
		expect(decodeRequest({ model: 'm', input: 'x', reasoning: { effort: 'max' } }).reasoning).toEqual({ enabled: true, effort: 'high' })
		expect(() => decodeRequest({ model: 'm', input: 'x', reasoning: { effort: 'extreme' } })).toThrow('reasoning.effort must be one of none, minimal, low, medium, high, xhigh, max')
	})

	it("should call a message's missing content missing, and say a message takes a string too", () => {
		expect(() => decodeRequest({ model: 'm', input: [{ role: 'user' }] })).toThrow("Missing required parameter: 'input[0].content'.")
		expect(() => decodeRequest({ model: 'm', input: [{ role: 'user', content: 5 }] })).toThrow('input[0].content must be a string or an array of content parts')
	})

	it('should drop replayed OpenAI encrypted reasoning that no other vendor can read', () => {
		const req = decodeRequest({ model: 'm', input: [{ type: 'reasoning', summary: [], encrypted_content: 'gAAAA-openai-blob' }, { role: 'user', content: 'x' }] })
		expect(req.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'x' }] }])
	})

	it('should decode a redacted-thinking item produced by this gateway', () => {
		const req = decodeRequest({ model: 'm', input: [{ type: 'reasoning', summary: [], encrypted_content: 'sbred:ZW5j' }] })
		expect(req.messages[0].content).toEqual([{ type: 'redacted_thinking', data: 'ZW5j' }])
	})

	it('should answer 400 naming the field for malformed input', () => {
		expect(fails({ model: 'm', input: [{ role: 'robot', content: 'x' }] }).param).toBe('input[0].role')
		expect(fails({ model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }).param).toBe('input[0].call_id')
		expect(fails({ model: 'm', input: 'x', text: { format: { type: 'yaml' } } }).param).toBe('text.format.type')
		expect(fails({ model: 'm', input: 'x', reasoning: { effort: 'extreme' } }).status).toBe(400)
	})
})

describe('openaiResponses.unconvertible', () => {
	it('should name each feature that needs OpenAI state or OpenAI-run tools', () => {
		expect(unconvertible({ model: 'm', previous_response_id: 'resp_1' })).toContain('previous_response_id')
		expect(unconvertible({ model: 'm', conversation: 'conv_1' })).toContain('conversation')
		expect(unconvertible({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] })).toContain("input[0] of type 'item_reference'")
		expect(unconvertible({ model: 'm', input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] })).toContain("tools[0] of type 'file_search'")
		// Web search runs at whichever vendor serves the model (core/ir.ts WebSearch); a replayed search record is taken.
		expect(unconvertible({ model: 'm', input: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }], tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } })).toBeUndefined()
		expect(unconvertible({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] })).toContain('input_file')
	})

	it('should take a search the client runs and its records, and name one OpenAI runs', () => {
		const call = { type: 'tool_search_call', call_id: 'call_s1', status: 'completed', arguments: { query: 'cal' } }
		const output = { type: 'tool_search_output', call_id: 'call_s1', status: 'completed', tools: [{ type: 'function', name: 'cal', defer_loading: true }] }
		const client = { model: 'm', input: [{ ...call, execution: 'client' }, { ...output, execution: 'client' }], tools: [{ type: 'tool_search', execution: 'client' }] }
		expect(unconvertible(client)).toBeUndefined()
		expect(unconvertible({ ...client, tools: [{ type: 'tool_search' }] })).toBe("tools[0] of type 'tool_search' with execution 'server' is run by OpenAI: set execution 'client' and run the search yourself for this model")
		expect(unconvertible({ ...client, input: [{ ...call, execution: 'server' }] })).toBe("input[0] of type 'tool_search_call' records a tool search run by OpenAI (execution 'server'), which only OpenAI models take")
		// A loaded tool only OpenAI runs is named where the output loaded it.
		expect(unconvertible({ ...client, input: [{ ...output, execution: 'client', tools: [{ type: 'mcp', server_label: 's' }] }] })).toBe("input[0].tools[0] of type 'mcp' is an OpenAI built-in tool")
	})

	it('should accept what the canonical model carries', async () => {
		expect(unconvertible(await fixtureJson('request-agent.json'))).toBeUndefined()
	})
})

describe('openaiResponses.encodeRequest', () => {
	it('should round-trip a decoded request through its own encoder, but for the thinking it leaves out', async () => {
		const original = await fixtureJson('request-agent.json')
		const sent = encodeRequest(decodeRequest(original), 'gpt-4.1')
		const again = decodeRequest(sent)
		const first = decodeRequest(original)
		// OpenAI takes back only reasoning it encrypted, which decoding already dropped: the rest would be refused
		// ("The encrypted content for item rs_… could not be verified.").
		expect(first.messages.some((m) => m.content.some((p) => p.type === 'thinking'))).toBe(true)
		expect((sent.input as Array<{ type?: string }>).filter((i) => i.type === 'reasoning')).toEqual([])
		const unthought = first.messages.map((m) => ({ ...m, content: m.content.filter((p) => p.type !== 'thinking') }))
		expect({ ...again, system: undefined }).toEqual({ ...first, messages: unthought, system: undefined })
		expect(again.system?.map((p) => p.text).join('\n\n')).toBe('You are terse.\n\nAnswer in English.')
	})

	it('should put reasoning effort, tools and stream in Responses fields', () => {
		const body = encodeRequest(
			{ model: 'x', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [{ name: 'f', parameters: { type: 'object' } }], toolChoice: { type: 'tool', name: 'f' }, reasoning: { enabled: true, budgetTokens: 4096 }, stream: true },
			'up',
		)
		expect(body).toMatchObject({ model: 'up', tool_choice: { type: 'function', name: 'f' }, reasoning: { effort: 'high' }, stream: true })
		expect(body.input).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }])
	})
})
