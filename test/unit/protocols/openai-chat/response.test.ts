import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { ChatResponse } from '../../../../src/core/ir'
import { decodeResponse, encodeResponse, usageOf } from '../../../../src/protocols/openai-chat/response'
import { fixtureJson } from './helpers'

describe('openai-chat decodeResponse', () => {
	it('should decode text and subtract cached tokens from input (WIRE-NOTES wire §4)', async () => {
		const res = decodeResponse(await fixtureJson('response-text.json'))
		expect(res).toEqual({
			id: 'chatcmpl-Cy1text',
			model: 'gpt-4o-mini-2024-07-18',
			created: 1767225700,
			content: [{ type: 'text', text: 'Hello there!' }],
			stopReason: 'end_turn',
			usage: { input: 86, output: 300, cacheRead: 1920, cacheWrite: 0, reasoning: 0 },
		})
	})

	it('should decode parallel tool calls, defaulting empty arguments to {}', async () => {
		const res = decodeResponse(await fixtureJson('response-tools.json'))
		expect(res.content).toEqual([
			{ type: 'tool_call', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
			{ type: 'tool_call', id: 'call_b', name: 'get_time', input: {} },
		])
		expect(res.stopReason).toBe('tool_use')
		expect(res.usage).toEqual({ input: 82, output: 17, cacheRead: 0, cacheWrite: 0, reasoning: 0 })
	})

	it('should decode reasoning details in order, keep signatures, and end a tool turn in tool_use even on stop (WIRE-NOTES #1)', async () => {
		const res = decodeResponse(await fixtureJson('response-reasoning.json'))
		expect(res.content).toEqual([
			{ type: 'thinking', text: 'First block.', signature: 'c2lnLTE=' },
			{ type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' },
			{ type: 'thinking', text: 'Second block.', signature: 'c2lnLTI=' },
			{ type: 'text', text: 'Let me check.' },
			{ type: 'tool_call', id: 'toolu_1', name: 'lookup', input: { q: 'x' }, signature: 'Z2VtLXNpZw==' },
		])
		expect(res.stopReason).toBe('tool_use')
		expect(res.usage).toEqual({ input: 350, output: 200, cacheRead: 100, cacheWrite: 50, reasoning: 150 })
	})

	it('should read DeepSeek reasoning_content and prompt_cache_hit_tokens', () => {
		const res = decodeResponse({
			id: 'x',
			model: 'deepseek-reasoner',
			choices: [{ index: 0, message: { role: 'assistant', content: '42', reasoning_content: 'thinking' }, finish_reason: 'length' }],
			usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 },
		})
		expect(res.content).toEqual([
			{ type: 'thinking', text: 'thinking' },
			{ type: 'text', text: '42' },
		])
		expect(res.stopReason).toBe('max_tokens')
		expect(res.usage).toMatchObject({ input: 36, cacheRead: 64 })
	})

	it('should turn a refusal into text with stop reason refusal', () => {
		const res = decodeResponse({ id: 'chatcmpl-r', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help.' }, finish_reason: 'stop' }] })
		expect(res.content).toEqual([{ type: 'text', text: 'I cannot help.' }])
		expect(res.stopReason).toBe('refusal')
	})

	it('should throw an upstream GatewayError for an error body or a non-object', () => {
		expect(() => decodeResponse({ error: { message: 'boom', type: 'server_error' } })).toThrow(GatewayError)
		expect(() => decodeResponse('nope')).toThrow(GatewayError)
	})

	it('should survive odd but harmless shapes without throwing', () => {
		const res = decodeResponse({ choices: [{ message: { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], tool_calls: [{ function: { name: 'f', arguments: { x: 1 } } }] } }] })
		expect(res.content[0]).toEqual({ type: 'text', text: 'ab' })
		expect(res.content[1]).toMatchObject({ type: 'tool_call', name: 'f', input: { x: 1 } })
		expect(res.usage).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 })
	})
})

describe('openai-chat encodeResponse', () => {
	const res: ChatResponse = {
		id: 'msg_01XYZ',
		model: 'claude-sonnet-4-5-20250929',
		created: 1767225800,
		content: [
			{ type: 'thinking', text: 'Plan.', signature: 'sig' },
			{ type: 'text', text: 'Calling.' },
			{ type: 'tool_call', id: 'toolu_1', name: 'f', input: { a: 1 } },
			{ type: 'tool_call', id: 'fc_2', name: 'g', input: {}, signature: 'abc+/w==' },
		],
		stopReason: 'end_turn',
		usage: { input: 10, output: 20, cacheRead: 30, cacheWrite: 40, reasoning: 5 },
	}

	it('should build a chat.completion with the client model, a chatcmpl id and tool_calls', () => {
		const body = encodeResponse(res, { model: 'my-alias' })
		expect(body.id).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/)
		expect(body).toMatchObject({
			object: 'chat.completion',
			created: 1767225800,
			model: 'my-alias',
			choices: [
				{
					index: 0,
					message: {
						role: 'assistant',
						content: 'Calling.',
						refusal: null,
						reasoning_content: 'Plan.',
						reasoning_details: [{ type: 'reasoning.text', text: 'Plan.', signature: 'sig' }],
						tool_calls: [
							{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
							{ id: 'fc_2__ts_abc-_w', type: 'function', function: { name: 'g', arguments: '{}' } },
						],
					},
					logprobs: null,
					finish_reason: 'tool_calls',
				},
			],
		})
	})

	it('should report prompt_tokens including cache reads and writes', () => {
		expect(encodeResponse(res, { model: 'x' }).usage).toEqual({
			prompt_tokens: 80,
			completion_tokens: 20,
			total_tokens: 100,
			prompt_tokens_details: { cached_tokens: 30, audio_tokens: 0, cache_write_tokens: 40 },
			completion_tokens_details: { reasoning_tokens: 5, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
		})
	})

	it('should keep an upstream chatcmpl id and map stop reasons (WIRE-NOTES wire §5)', () => {
		const text = { ...res, id: 'chatcmpl-keep', content: [{ type: 'text' as const, text: 'hi' }] }
		expect(encodeResponse(text, { model: 'x' }).id).toBe('chatcmpl-keep')
		const finish = (stopReason: ChatResponse['stopReason']) => encodeResponse({ ...text, stopReason }, { model: 'x' }).choices[0].finish_reason
		expect(finish('end_turn')).toBe('stop')
		expect(finish('stop_sequence')).toBe('stop')
		expect(finish('pause_turn')).toBe('stop')
		expect(finish('max_tokens')).toBe('length')
		expect(finish('tool_use')).toBe('tool_calls')
		expect(finish('refusal')).toBe('content_filter')
		expect(finish('content_filter')).toBe('content_filter')
	})

	it('should round-trip decode(encode(x)) for a canonical response', () => {
		const back = decodeResponse(encodeResponse(res, { model: res.model }))
		expect(back).toEqual({ ...res, id: back.id, stopReason: 'tool_use' })
	})

	it('should read usage without a full decode', async () => {
		expect(usageOf(await fixtureJson('response-text.json'))).toEqual({ input: 86, output: 300, cacheRead: 1920, cacheWrite: 0, reasoning: 0 })
		expect(usageOf({})).toBeUndefined()
		expect(usageOf(null)).toBeUndefined()
	})
})
