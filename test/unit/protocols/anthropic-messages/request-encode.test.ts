import { describe, expect, it } from 'bun:test'
import type { ChatRequest, Message } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'

type Body = Record<string, any>
const encode = (req: ChatRequest, model = 'claude-up'): Body => anthropicMessages.encodeRequest(req, model) as Body
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const base: ChatRequest = { model: 'gpt-4o', messages: [user('Hi')], stream: false }
const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }]

describe('anthropicMessages.encodeRequest', () => {
	it('should always send max_tokens, defaulting to 4096, and use the upstream model name', () => {
		const body = encode(base)
		expect(body.model).toBe('claude-up')
		expect(body.max_tokens).toBe(4096)
		expect(encode({ ...base, maxTokens: 300 }).max_tokens).toBe(300)
		expect(body.stream).toBeUndefined()
		expect(encode({ ...base, stream: true }).stream).toBe(true)
	})

	it('should send the system prompt top level, as a string or as blocks when cached', () => {
		expect(encode({ ...base, system: [{ type: 'text', text: 'Be brief.' }] }).system).toBe('Be brief.')
		expect(encode({ ...base, system: [{ type: 'text', text: 'Rules', cacheControl: { type: 'ephemeral' } }] }).system).toEqual([
			{ type: 'text', text: 'Rules', cache_control: { type: 'ephemeral' } },
		])
	})

	it('should merge consecutive same-role messages and put tool results first in their user turn', () => {
		const body = encode({
			...base,
			messages: [
				user('a'),
				user('b'),
				{ role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'f', input: {} }] },
				{ role: 'assistant', content: [{ type: 'tool_call', id: 'c2', name: 'f', input: {} }] },
				{
					role: 'user',
					content: [
						{ type: 'text', text: 'here' },
						{ type: 'tool_result', toolCallId: 'c1', content: [] },
					],
				},
				{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'c2', content: [{ type: 'text', text: 'ok' }] }] },
			],
		})
		expect(body.messages).toEqual([
			{
				role: 'user',
				content: [
					{ type: 'text', text: 'a' },
					{ type: 'text', text: 'b' },
				],
			},
			{
				role: 'assistant',
				content: [
					{ type: 'tool_use', id: 'c1', name: 'f', input: {} },
					{ type: 'tool_use', id: 'c2', name: 'f', input: {} },
				],
			},
			{
				role: 'user',
				content: [
					{ type: 'tool_result', tool_use_id: 'c1' },
					{ type: 'tool_result', tool_use_id: 'c2', content: [{ type: 'text', text: 'ok' }] },
					{ type: 'text', text: 'here' },
				],
			},
		])
	})

	it('should drop empty text blocks and messages left empty', () => {
		const body = encode({ ...base, messages: [user('a'), { role: 'assistant', content: [{ type: 'text', text: '' }] }, user('b')] })
		expect(body.messages).toEqual([
			{
				role: 'user',
				content: [
					{ type: 'text', text: 'a' },
					{ type: 'text', text: 'b' },
				],
			},
		])
	})

	it('should clamp temperature to 1 and map top_p, top_k, stop and user', () => {
		const body = encode({ ...base, temperature: 1.7, topK: 5, stop: ['END', '  '], user: 'u-1' })
		expect(body.temperature).toBe(1)
		expect(body.top_k).toBe(5)
		expect(body.stop_sequences).toEqual(['END'])
		expect(body.metadata).toEqual({ user_id: 'u-1' })
		expect(encode({ ...base, topP: 0.5 }).top_p).toBe(0.5)
	})

	it('should not send top_p next to temperature (current models refuse both)', () => {
		const body = encode({ ...base, temperature: 0.2, topP: 0.9 })
		expect(body.temperature).toBe(0.2)
		expect(body.top_p).toBeUndefined()
	})

	it('should map tool choices and parallel_tool_calls:false', () => {
		expect(encode({ ...base, tools, toolChoice: { type: 'required' } }).tool_choice).toEqual({ type: 'any' })
		expect(encode({ ...base, tools, toolChoice: { type: 'none' } }).tool_choice).toEqual({ type: 'none' })
		expect(encode({ ...base, tools, toolChoice: { type: 'tool', name: 'get_weather' }, parallelToolCalls: false }).tool_choice).toEqual({
			type: 'tool',
			name: 'get_weather',
			disable_parallel_tool_use: true,
		})
		expect(encode({ ...base, tools, parallelToolCalls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
		expect(encode({ ...base, toolChoice: { type: 'required' } }).tool_choice).toBeUndefined()
	})

	it('should send tools with input_schema and cache control, and drop OpenAI strict', () => {
		const body = encode({
			...base,
			tools: [
				{ ...tools[0], description: 'd', strict: true, cacheControl: { type: 'ephemeral' } },
				{ name: 'noargs', parameters: {} },
			],
		})
		expect(body.tools).toEqual([
			{ name: 'get_weather', description: 'd', input_schema: tools[0].parameters, cache_control: { type: 'ephemeral' } },
			{ name: 'noargs', input_schema: { type: 'object' } },
		])
	})

	it('should turn an effort into a thinking budget and drop temperature and top_k with thinking', () => {
		const body = encode({ ...base, maxTokens: 8192, temperature: 0.5, topK: 3, topP: 0.5, reasoning: { enabled: true, effort: 'high' } })
		expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 })
		expect(body.max_tokens).toBe(8192)
		expect(body.temperature).toBeUndefined()
		expect(body.top_k).toBeUndefined()
		expect(body.top_p).toBe(0.95)
	})

	it('should keep budget_tokens at least 1024 and below max_tokens, never raising the cap', () => {
		expect(encode({ ...base, maxTokens: 8000, reasoning: { enabled: true, budgetTokens: 100 } }).thinking).toEqual({
			type: 'enabled',
			budget_tokens: 1024,
		})
		const lowered = encode({ ...base, maxTokens: 3000, reasoning: { enabled: true, budgetTokens: 5000 } })
		expect(lowered.thinking.budget_tokens).toBe(1500)
		expect(lowered.max_tokens).toBe(3000)
		// A cap too small for the 1024 minimum turns thinking off: the caller's cap is a total (core/reasoning.ts).
		const small = encode({ ...base, maxTokens: 500, reasoning: { enabled: true, effort: 'low' } })
		expect(small.thinking).toEqual({ type: 'disabled' })
		expect(small.max_tokens).toBe(500)
		const defaulted = encode({ ...base, reasoning: { enabled: true } })
		expect(defaulted.thinking.budget_tokens).toBeLessThan(defaulted.max_tokens)
	})

	it('should send thinking disabled when the caller turned reasoning off', () => {
		expect(encode({ ...base, reasoning: { enabled: false } }).thinking).toEqual({ type: 'disabled' })
	})

	it('should fall back to auto tool choice when thinking is on', () => {
		const body = encode({
			...base,
			tools,
			toolChoice: { type: 'tool', name: 'get_weather' },
			reasoning: { enabled: true, budgetTokens: 2000 },
		})
		expect(body.tool_choice).toEqual({ type: 'auto' })
	})

	it("should replay signed thinking verbatim and drop unsigned reasoning and other vendors' redacted reasoning", () => {
		const body = encode({
			...base,
			messages: [
				user('q'),
				{
					role: 'assistant',
					content: [
						{ type: 'thinking', text: 'deepseek reasoning' },
						{ type: 'thinking', text: 'claude reasoning', signature: 'sig-1' },
						{ type: 'redacted_thinking', data: 'enc' },
						{ type: 'redacted_thinking', data: tagSignature('converse', 'Q09OVkVSU0U=') },
						{ type: 'text', text: 'answer' },
					],
				},
				user('more'),
			],
		})
		// Converse's redacted reasoning (origin-tagged) is no Anthropic ciphertext: left out like another vendor's thinking.
		expect(body.messages[1].content).toEqual([
			{ type: 'thinking', thinking: 'claude reasoning', signature: 'sig-1' },
			{ type: 'redacted_thinking', data: 'enc' },
			{ type: 'text', text: 'answer' },
		])
	})

	it('should cache the whole prompt asked for (cacheAll): top level, or on the last block that can carry it, never beside own breakpoints', () => {
		const cacheAll = { type: 'ephemeral' as const, ttl: '1h' }
		expect(encode({ ...base, cacheAll }).cache_control).toEqual(cacheAll)
		const noRequestLevel = (req: ChatRequest) => anthropicMessages.encodeRequest(req, 'claude-up', { requestCacheControl: false }) as Body
		const prefill: ChatRequest = { ...base, cacheAll, messages: [user('q'), { role: 'assistant', content: [{ type: 'text', text: 'so' }, { type: 'thinking', text: 't', signature: 'sig-1' }] }] }
		const body = noRequestLevel(prefill)
		expect(body.cache_control).toBeUndefined()
		// A thinking block cannot carry cache_control: the block before it does.
		expect(body.messages[1].content).toEqual([{ type: 'text', text: 'so', cache_control: cacheAll }, { type: 'thinking', thinking: 't', signature: 'sig-1' }])
		// A breakpoint of the request's own (here on a tool) leaves it as it is.
		const own = { ...base, cacheAll, tools: [{ ...tools[0]!, cacheControl: { type: 'ephemeral' as const } }] }
		expect(encode(own).cache_control).toBeUndefined()
		expect(noRequestLevel(own).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }])
	})

	it('should state a json_schema response format as a system instruction', () => {
		const schema = { type: 'object', properties: { a: { type: 'number' } } }
		const body = encode({ ...base, system: [{ type: 'text', text: 'S' }], responseFormat: { type: 'json_schema', name: 'out', schema } })
		expect(body.system[0]).toEqual({ type: 'text', text: 'S' })
		expect(body.system[1].text).toContain(JSON.stringify(schema))
		expect(encode({ ...base, responseFormat: { type: 'json_object' } }).system).toContain('JSON object')
		expect(encode({ ...base, responseFormat: { type: 'text' } }).system).toBeUndefined()
	})

	it('should send base64 images as base64 sources, URLs as url sources and parse data URIs', () => {
		const body = encode({
			...base,
			messages: [
				{
					role: 'user',
					content: [
						{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAA' } },
						{ type: 'image', source: { kind: 'url', url: 'https://x.test/a.jpg' }, cacheControl: { type: 'ephemeral' } },
						{ type: 'image', source: { kind: 'url', url: 'data:image/gif;base64,R0lG' } },
					],
				},
			],
		})
		expect(body.messages[0].content).toEqual([
			{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
			{ type: 'image', source: { type: 'url', url: 'https://x.test/a.jpg' }, cache_control: { type: 'ephemeral' } },
			{ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lG' } },
		])
	})

	it('should pack a tool-call signature into tool_use and tool_result ids alike, within the id alphabet', () => {
		const body = encode({
			...base,
			messages: [
				user('q'),
				{ role: 'assistant', content: [{ type: 'tool_call', id: 'fn:1', name: 'f', input: {}, signature: 'a+b/c=' }] },
				{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'fn:1', content: [] }] },
			],
		})
		const id = body.messages[1].content[0].id
		expect(id).toBe('fn_1__ts_a-b_c')
		expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
		expect(body.messages[2].content[0].tool_use_id).toBe(id)
	})

	it('should not leak extra fields from another protocol', () => {
		const body = encode({ ...base, extra: { __protocol: 'openai-chat', logprobs: true, service_tier: 'flex' } })
		expect(body.logprobs).toBeUndefined()
		expect(body.service_tier).toBeUndefined()
	})
})
