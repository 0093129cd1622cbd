import { describe, expect, it } from 'bun:test'
import type { ChatRequest } from '../../../../src/core/ir'
import { decodeRequest, encodeRequest } from '../../../../src/protocols/openai-chat/request'

const user = (text: string): ChatRequest['messages'][number] => ({ role: 'user', content: [{ type: 'text', text }] })

describe('openai-chat encodeRequest', () => {
	it('should set the upstream model and join the system prompt into one system message', () => {
		const body = encodeRequest(
			{ model: 'alias', system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }], messages: [user('Hi')], stream: false },
			'gpt-4o-mini',
		)
		expect(body).toEqual({
			model: 'gpt-4o-mini',
			messages: [
				{ role: 'system', content: 'A\n\nB' },
				{ role: 'user', content: 'Hi' },
			],
		})
	})

	it('should always request the usage chunk on streaming requests (WIRE-NOTES #12)', () => {
		const body = encodeRequest({ model: 'm', messages: [user('Hi')], stream: true }, 'gpt-4o')
		expect(body.stream).toBe(true)
		expect(body.stream_options).toEqual({ include_usage: true })
	})

	it('should send max_completion_tokens to o-series and gpt-5 models and max_tokens to others', () => {
		const req: ChatRequest = { model: 'm', messages: [user('Hi')], stream: false, maxTokens: 500 }
		for (const model of ['o1', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'openai/o3']) {
			const body = encodeRequest(req, model)
			expect(body.max_completion_tokens).toBe(500)
			expect(body.max_tokens).toBeUndefined()
		}
		for (const model of ['gpt-4o', 'deepseek-chat', 'gpt-4.1', 'omni-moderation']) {
			const body = encodeRequest(req, model)
			expect(body.max_tokens).toBe(500)
			expect(body.max_completion_tokens).toBeUndefined()
		}
	})

	it('should emit one tool message per result before the rest of the user turn, echoing packed ids', () => {
		const body = encodeRequest(
			{
				model: 'm',
				stream: false,
				messages: [
					user('Weather?'),
					{
						role: 'assistant',
						content: [
							{ type: 'tool_call', id: 'call_a', name: 'w', input: { city: 'Paris' } },
							{ type: 'tool_call', id: 'fc_1', name: 'w', input: { city: 'Rome' }, signature: 'c2ln+/w=' },
						],
					},
					{
						role: 'user',
						content: [
							{ type: 'tool_result', toolCallId: 'call_a', content: [{ type: 'text', text: 'Sunny' }] },
							{
								type: 'tool_result',
								toolCallId: 'fc_1',
								content: [
									{ type: 'text', text: 'Rain' },
									{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
								],
							},
							{ type: 'text', text: 'And tomorrow?' },
						],
					},
				],
			},
			'gpt-4o',
		)
		expect(body.messages).toEqual([
			{ role: 'user', content: 'Weather?' },
			{
				role: 'assistant',
				content: null,
				tool_calls: [
					{ id: 'call_a', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } },
					{ id: 'fc_1__ts_c2ln-_w', type: 'function', function: { name: 'w', arguments: '{"city":"Rome"}' } },
				],
			},
			{ role: 'tool', tool_call_id: 'call_a', content: 'Sunny' },
			{ role: 'tool', tool_call_id: 'fc_1__ts_c2ln-_w', content: 'Rain' },
			{
				role: 'user',
				content: [
					{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
					{ type: 'text', text: 'And tomorrow?' },
				],
			},
		])
	})

	it('should send thinking back as reasoning_content, with reasoning_details when signed (new-api#4543, PR #6998)', () => {
		const body = encodeRequest(
			{
				model: 'm',
				stream: false,
				messages: [
					user('q'),
					{
						role: 'assistant',
						content: [
							{ type: 'thinking', text: 'Let me think.', signature: 'sig' },
							{ type: 'redacted_thinking', data: 'enc' },
							{ type: 'text', text: 'Answer' },
						],
					},
				],
			},
			'deepseek-reasoner',
		)
		expect(body.messages[1]).toEqual({
			role: 'assistant',
			content: 'Answer',
			reasoning_content: 'Let me think.',
			reasoning_details: [
				{ type: 'reasoning.text', text: 'Let me think.', signature: 'sig' },
				{ type: 'reasoning.encrypted', data: 'enc' },
			],
		})
	})

	it("should keep a tool-calling span's reasoning in every later request and leave out a finished plain answer's (DeepSeek thinking mode)", () => {
		const call = (id: string): ChatRequest['messages'][number] => ({ role: 'assistant', content: [{ type: 'thinking', text: `think ${id}` }, { type: 'tool_call', id, name: 'f', input: {} }] })
		const result = (id: string): ChatRequest['messages'][number] => ({ role: 'user', content: [{ type: 'tool_result', toolCallId: id, content: [{ type: 'text', text: 'ok' }] }] })
		const answer = (text: string): ChatRequest['messages'][number] => ({ role: 'assistant', content: [{ type: 'thinking', text: `think ${text}`, signature: 'sig' }, { type: 'text', text }] })
		const body = encodeRequest({ model: 'm', stream: false, messages: [user('q1'), call('c1'), result('c1'), answer('a1'), user('q2'), answer('a2'), user('q3'), call('c3')] }, 'deepseek-v4-flash')
		const assistants = (body.messages as Array<{ role: string; content: unknown; reasoning_content?: string; reasoning_details?: unknown }>).filter((w) => w.role === 'assistant')
		expect(assistants.map((w) => [w.content, w.reasoning_content ?? null, w.reasoning_details !== undefined])).toEqual([
			[null, 'think c1', false],
			['a1', 'think a1', true],
			['a2', null, false],
			[null, 'think c3', false],
		])
	})

	it('should encode tools, tool_choice, parallel_tool_calls, response_format, sampling, stop and user', () => {
		const body = encodeRequest(
			{
				model: 'm',
				messages: [user('Hi')],
				stream: false,
				tools: [
					{ name: 'f', description: 'd', parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: true },
					// Not closed: strict would be refused (400), so it is left off.
					{ name: 'g', parameters: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
				],
				toolChoice: { type: 'tool', name: 'f' },
				parallelToolCalls: false,
				responseFormat: { type: 'json_schema', name: 'o', schema: { type: 'object' }, strict: true },
				temperature: 0.5,
				topP: 0.8,
				topK: 40,
				stop: ['x'],
				user: 'u',
			},
			'gpt-4o',
		)
		expect(body).toMatchObject({
			tools: [
				{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {}, additionalProperties: false }, strict: true } },
				{ type: 'function', function: { name: 'g', parameters: { type: 'object', properties: { a: { type: 'string' } } } } },
			],
			tool_choice: { type: 'function', function: { name: 'f' } },
			parallel_tool_calls: false,
			response_format: { type: 'json_schema', json_schema: { name: 'o', schema: { type: 'object' }, strict: true } },
			temperature: 0.5,
			top_p: 0.8,
			stop: ['x'],
			user: 'u',
		})
		expect('strict' in (body.tools![1] as { function: object }).function).toBe(false)
		// OpenAI rejects unknown parameters such as top_k.
		expect('top_k' in body).toBe(false)
	})

	it("should send a user id past OpenAI's 64 characters as its sha256 (Claude Code's metadata.user_id is 150)", () => {
		const at64 = 'u'.repeat(64)
		const long = JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: '059ef76f-097c-4c16-b1b0-8585226c4beb' })
		const user = (id: string) => encodeRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, user: id }, 'gpt-4o').user
		expect(user(at64)).toBe(at64)
		expect(user(long)).toBe(new Bun.CryptoHasher('sha256').update(long).digest('hex'))
		expect(user(long)).toHaveLength(64)
	})

	it('should drop tool_choice and parallel_tool_calls when there are no tools (OpenAI rejects them alone)', () => {
		const body = encodeRequest({ model: 'm', messages: [user('Hi')], stream: false, toolChoice: { type: 'auto' }, parallelToolCalls: true }, 'gpt-4o')
		expect(body.tool_choice).toBeUndefined()
		expect(body.parallel_tool_calls).toBeUndefined()
	})

	it('should derive reasoning_effort from a thinking budget', () => {
		const enc = (budgetTokens: number) =>
			encodeRequest({ model: 'm', messages: [user('Hi')], stream: false, reasoning: { enabled: true, budgetTokens } }, 'o3').reasoning_effort
		expect(enc(1024)).toBe('low')
		expect(enc(2000)).toBe('medium')
		expect(enc(10000)).toBe('high')
		expect(encodeRequest({ model: 'm', messages: [user('Hi')], stream: false, reasoning: { enabled: false } }, 'o3').reasoning_effort).toBeUndefined()
	})

	it('should re-emit extra only when it came from an OpenAI chat request', () => {
		const own = encodeRequest({ model: 'm', messages: [user('Hi')], stream: false, extra: { __protocol: 'openai-chat', seed: 1, reasoning_effort: 'none' } }, 'gpt-5')
		expect(own.seed).toBe(1)
		expect(own.reasoning_effort).toBe('none')
		expect('__protocol' in own).toBe(false)
		const foreign = encodeRequest({ model: 'm', messages: [user('Hi')], stream: false, extra: { __protocol: 'anthropic-messages', top_k: 5 } }, 'gpt-4o')
		expect('top_k' in foreign).toBe(false)
	})

	it('should round-trip a decoded request through encode and decode', () => {
		const wire = {
			model: 'gpt-4o',
			messages: [
				{ role: 'system', content: 'Be brief.' },
				{ role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } }] },
				{
					role: 'assistant',
					content: 'Calling.',
					reasoning_content: 'hmm',
					reasoning_details: [{ type: 'reasoning.text', text: 'hmm', signature: 'S' }],
					tool_calls: [{ id: 'call_1__ts_YWJj', type: 'function', function: { name: 'f', arguments: '{"a":[1,2]}' } }],
				},
				{ role: 'tool', tool_call_id: 'call_1__ts_YWJj', content: 'done' },
				{ role: 'user', content: 'ok' },
			],
			tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
			tool_choice: 'required',
			max_tokens: 64,
			seed: 3,
			stream: true,
		}
		const once = decodeRequest(wire)
		const twice = decodeRequest(encodeRequest(once, 'gpt-4o'))
		expect(twice).toEqual(once)
		// Byte-level fidelity for OpenAI-shaped history: the wire messages come back as they were sent.
		const messages: unknown = encodeRequest(once, 'gpt-4o').messages
		expect(messages).toEqual(wire.messages)
	})
})
