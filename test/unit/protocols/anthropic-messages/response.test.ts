import { describe, expect, it } from 'bun:test'
import type { ChatResponse } from '../../../../src/core/ir'
import { UNSIGNED_THINKING_TAG } from '../../../../src/core/signatures'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import type { AnthropicResponse } from '../../../../src/protocols/anthropic-messages/model'
import { fixtureJson } from './helpers'

const ctx = { model: 'claude-client-name' }

describe('anthropicMessages.decodeResponse', () => {
	it('should decode thinking, text, tool_use, stop reason and usage', async () => {
		const res = anthropicMessages.decodeResponse(await fixtureJson<AnthropicResponse>('response-tool-use.json'))
		expect(res).toEqual({
			id: 'msg_01Aq9w938a90dw8q',
			model: 'claude-sonnet-4-5',
			content: [
				{ type: 'thinking', text: 'I need the weather tool.', signature: 'EqQBCgIYAhIMsig==' },
				{ type: 'text', text: "I'll look that up." },
				{
					type: 'tool_call',
					id: 'toolu_01A09q90qw90lq917835lq9',
					name: 'get_weather',
					input: { location: 'San Francisco, CA', unit: 'celsius' },
				},
			],
			stopReason: 'tool_use',
			usage: { input: 2095, output: 503, cacheRead: 1800, cacheWrite: 100, reasoning: 200 },
		})
	})

	it('should read a web search (server_tool_use + web_search_tool_result) as one canonical search part', async () => {
		const res = anthropicMessages.decodeResponse(await fixtureJson<AnthropicResponse>('response-server-tool.json'))
		expect(res.content).toEqual([
			{ type: 'web_search', id: 'srvtoolu_01', queries: ['news'], sources: [] },
			{ type: 'text', text: 'Nothing new.' },
		])
		expect(res.stopReason).toBe('end_turn')
	})

	it('should map stop reasons, keeping the stop sequence', () => {
		const body = (stop_reason: string | null, extra = {}) =>
			({
				id: 'msg_1',
				type: 'message',
				role: 'assistant',
				model: 'm',
				content: [],
				stop_reason,
				stop_sequence: null,
				usage: { input_tokens: 1, output_tokens: 1 },
				...extra,
			}) as AnthropicResponse
		expect(anthropicMessages.decodeResponse(body('max_tokens')).stopReason).toBe('max_tokens')
		expect(anthropicMessages.decodeResponse(body('refusal')).stopReason).toBe('refusal')
		expect(anthropicMessages.decodeResponse(body('pause_turn')).stopReason).toBe('pause_turn')
		expect(anthropicMessages.decodeResponse(body('model_context_window_exceeded')).stopReason).toBe('max_tokens')
		expect(anthropicMessages.decodeResponse(body(null)).stopReason).toBe('end_turn')
		const seq = anthropicMessages.decodeResponse(body('stop_sequence', { stop_sequence: '</x>' }))
		expect([seq.stopReason, seq.stopSequence]).toEqual(['stop_sequence', '</x>'])
	})

	it('should unpack a Gemini signature from a tool_use id', () => {
		const res = anthropicMessages.decodeResponse({
			id: 'msg_1',
			type: 'message',
			role: 'assistant',
			model: 'm',
			content: [{ type: 'tool_use', id: 'fc_1__ts_c2ln', name: 'f', input: {} }],
			stop_reason: 'tool_use',
			stop_sequence: null,
			usage: { input_tokens: 1, output_tokens: 1 },
		})
		expect(res.content[0]).toEqual({ type: 'tool_call', id: 'fc_1', name: 'f', input: {}, signature: 'c2ln' })
	})

	it('should not throw on a malformed body', () => {
		const res = anthropicMessages.decodeResponse({ content: [null, { type: 'tool_use' }] } as unknown as AnthropicResponse)
		expect(res.content).toEqual([{ type: 'tool_call', id: '', name: '', input: {} }])
		expect(res.usage).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 })
	})
})

describe('anthropicMessages.encodeResponse', () => {
	const res: ChatResponse = {
		id: 'chatcmpl-abc',
		model: 'gpt-4o',
		content: [
			{ type: 'thinking', text: 'hmm' },
			{ type: 'text', text: '' },
			{ type: 'text', text: 'Calling.' },
			{ type: 'tool_call', id: 'call_1', name: 'f', input: { a: 1 }, signature: 'c2ln' },
		],
		stopReason: 'end_turn',
		usage: { input: 10, output: 20, cacheRead: 5, cacheWrite: 0, reasoning: 0 },
	}

	it('should produce a Message with a msg_ id, the client model name and tool_use stop reason', () => {
		const body = anthropicMessages.encodeResponse(res, ctx)
		expect(body.id).toMatch(/^msg_[A-Za-z0-9]{24}$/)
		expect(body.type).toBe('message')
		expect(body.role).toBe('assistant')
		expect(body.model).toBe('claude-client-name')
		// Any tool call ⇒ tool_use, even though upstream said stop (WIRE-NOTES wire §6).
		expect(body.stop_reason).toBe('tool_use')
		expect(body.stop_sequence).toBeNull()
		expect(body.content).toEqual([
			{ type: 'thinking', thinking: 'hmm', signature: UNSIGNED_THINKING_TAG },
			{ type: 'text', text: 'Calling.' },
			{ type: 'tool_use', id: 'call_1__ts_c2ln', name: 'f', input: { a: 1 } },
		])
		expect(body.usage).toEqual({
			input_tokens: 10,
			output_tokens: 20,
			cache_creation_input_tokens: 0,
			cache_read_input_tokens: 5,
			cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
			output_tokens_details: { thinking_tokens: 0 },
			service_tier: 'standard',
			speed: 'standard',
		})
	})

	it('should keep an upstream msg_ id and report thinking tokens', () => {
		const body = anthropicMessages.encodeResponse({ ...res, id: 'msg_keep', content: [], usage: { ...res.usage, reasoning: 7 } }, ctx)
		expect(body.id).toBe('msg_keep')
		expect(body.stop_reason).toBe('end_turn')
		expect(body.usage.output_tokens_details).toEqual({ thinking_tokens: 7 })
	})

	it('should map content_filter to refusal and carry a stop sequence', () => {
		expect(anthropicMessages.encodeResponse({ ...res, content: [], stopReason: 'content_filter' }, ctx).stop_reason).toBe('refusal')
		const seq = anthropicMessages.encodeResponse({ ...res, content: [], stopReason: 'stop_sequence', stopSequence: 'END' }, ctx)
		expect([seq.stop_reason, seq.stop_sequence]).toEqual(['stop_sequence', 'END'])
	})

	it('should round-trip: decode(encode(x)) equals x for an Anthropic-shaped response', async () => {
		const original = anthropicMessages.decodeResponse(await fixtureJson<AnthropicResponse>('response-tool-use.json'))
		const back = anthropicMessages.decodeResponse(anthropicMessages.encodeResponse(original, { model: original.model }))
		expect(back).toEqual(original)
	})
})

describe('anthropicMessages.usageOf', () => {
	it('should read usage without a full decode', async () => {
		expect(anthropicMessages.usageOf(await fixtureJson<AnthropicResponse>('response-tool-use.json'))).toEqual({
			input: 2095,
			output: 503,
			cacheRead: 1800,
			cacheWrite: 100,
			reasoning: 200,
		})
		expect(anthropicMessages.usageOf({} as AnthropicResponse)).toBeUndefined()
	})
})
