/** The Converse codec: the request body it builds, the whole answer and the ConverseStream events it reads. */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatRequest } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import type { SseFrame } from '../../../../src/core/sse'
import { bedrockConverse } from '../../../../src/protocols/bedrock-converse'
import { documentName, toolUseId } from '../../../../src/protocols/bedrock-converse/content'
import { converseFamily } from '../../../../src/protocols/bedrock-converse/family'
import { streamDecoder } from '../../../../src/protocols/bedrock-converse/stream'

const req = (over: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, ...over })
const encode = (r: ChatRequest, model = 'us.amazon.nova-pro-v1:0') => bedrockConverse.encodeRequest(r, model) as Record<string, any>
const weather = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }

describe('bedrock-converse encodeRequest', () => {
	it('should put the system, the inference settings and the tools where Converse reads them', () => {
		const body = encode(
			req({ system: [{ type: 'text', text: 'be brief' }], maxTokens: 50, temperature: 0.2, topP: 0.8, stop: ['END'], tools: [{ ...weather, description: 'Weather' }], toolChoice: { type: 'auto' } }),
		)
		expect(body).toEqual({
			messages: [{ role: 'user', content: [{ text: 'hi' }] }],
			system: [{ text: 'be brief' }],
			inferenceConfig: { maxTokens: 50, temperature: 0.2, topP: 0.8, stopSequences: ['END'] },
			toolConfig: { tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: weather.parameters } } }], toolChoice: { auto: {} } },
		})
	})

	it('should leave the tools out for tool_choice none, and the calls the conversation holds go as text (no tool to call)', () => {
		expect(encode(req({ tools: [weather], toolChoice: { type: 'none' } })).toolConfig).toBeUndefined()
		const history: ChatRequest['messages'] = [
			{ role: 'user', content: [{ type: 'text', text: 'weather?' }] },
			{ role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
			{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: 'rain' }], isError: true }] },
		]
		const body = encode(req({ messages: history, tools: [weather], toolChoice: { type: 'none' } }))
		expect(body.toolConfig).toBeUndefined()
		expect(body.messages[1].content).toEqual([{ text: '[called tool get_weather with {"city":"Paris"}]' }])
		expect(body.messages[2].content).toEqual([{ text: '[error of get_weather: rain]' }])
		// With tools on offer, the history stays as Converse's blocks.
		const offered = encode(req({ messages: history, tools: [weather] }))
		expect(offered.messages[2].content).toEqual([{ toolResult: { toolUseId: 'call_1', content: [{ text: 'rain' }], status: 'error' } }])
	})

	it('should merge consecutive turns of one role and leave blank text out', () => {
		const body = encode(
			req({
				messages: [
					{ role: 'user', content: [{ type: 'text', text: 'one' }] },
					{ role: 'user', content: [{ type: 'text', text: ' ' }, { type: 'text', text: 'two' }] },
				],
			}),
		)
		expect(body.messages).toEqual([{ role: 'user', content: [{ text: 'one' }, { text: 'two' }] }])
	})

	it("should send thinking back only when Converse signed it, without the gateway's tag", () => {
		const messages: ChatRequest['messages'] = [
			{ role: 'user', content: [{ type: 'text', text: 'q' }] },
			{
				role: 'assistant',
				content: [
					{ type: 'thinking', text: 'mine', signature: tagSignature('converse', 'SIG') },
					{ type: 'thinking', text: "Claude's", signature: 'anthropic-signature' },
					{ type: 'thinking', text: 'unsigned' },
					{ type: 'text', text: 'answer' },
				],
			},
			{ role: 'user', content: [{ type: 'text', text: 'next' }] },
		]
		expect(encode(req({ messages })).messages[1].content).toEqual([{ reasoningContent: { reasoningText: { text: 'mine', signature: 'SIG' } } }, { text: 'answer' }])
	})

	it("should send redacted reasoning back only when Converse redacted it, and never Anthropic's redacted_thinking", () => {
		const messages: ChatRequest['messages'] = [
			{ role: 'user', content: [{ type: 'text', text: 'q' }] },
			{
				role: 'assistant',
				content: [
					{ type: 'redacted_thinking', data: tagSignature('converse', 'Q09OVkVSU0U=') },
					{ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/anthropic-ciphertext' },
					{ type: 'text', text: 'answer' },
				],
			},
			{ role: 'user', content: [{ type: 'text', text: 'next' }] },
		]
		expect(encode(req({ messages })).messages[1].content).toEqual([{ reasoningContent: { redactedContent: 'Q09OVkVSU0U=' } }, { text: 'answer' }])
	})

	it('should send a tool result that holds nothing, or only spaces, as a non-blank result (Converse refuses blank text there)', () => {
		const call = { role: 'assistant' as const, content: [{ type: 'tool_call' as const, id: 'call_1', name: 'get_weather', input: {} }] }
		for (const content of [[], [{ type: 'text' as const, text: '' }], [{ type: 'text' as const, text: ' \n' }]]) {
			const body = encode(req({ tools: [weather], messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }, call, { role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1', content }] }] }))
			expect(body.messages[2].content).toEqual([{ toolResult: { toolUseId: 'call_1', content: [{ text: '(empty)' }] } }])
		}
	})

	it('should ask each family for reasoning in its own field', () => {
		const thinking = { reasoning: { enabled: true, effort: 'high' as const } }
		expect(encode(req(thinking), 'us.amazon.nova-2-lite-v1:0').additionalModelRequestFields).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' } })
		expect(encode(req({ reasoning: { enabled: true, budgetTokens: 1024 } }), 'openai.gpt-oss-120b-1:0').additionalModelRequestFields).toEqual({ reasoning_effort: 'low' })
		expect(encode(req(thinking), 'meta.llama3-3-70b-instruct-v1:0').additionalModelRequestFields).toBeUndefined()
		expect(encode(req(), 'us.amazon.nova-2-lite-v1:0').additionalModelRequestFields).toBeUndefined()
	})

	it('should tell each family from a model id, a cross-region profile, an ARN, or the foundation model an application profile serves', () => {
		expect(converseFamily('us.amazon.nova-pro-v1:0')).toBe('nova')
		expect(converseFamily('global.amazon.nova-2-lite-v1:0')).toBe('nova2')
		expect(converseFamily('arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-micro-v1:0')).toBe('nova')
		expect(converseFamily('arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2')).toBe('other')
		expect(converseFamily('arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2', 'amazon.nova-lite-v1:0')).toBe('nova')
		expect(converseFamily('us.deepseek.r1-v1:0')).toBe('deepseek-r1')
		expect(converseFamily('mistral.mistral-large-2407-v1:0')).toBe('other')
		expect(converseFamily('mistral.mixtral-8x7b-instruct-v0:1')).toBe('mistral-text')
		expect(converseFamily('qwen.qwen3-32b-v1:0')).toBe('other')
	})

	it('should send documents as bytes with a name Converse takes, and refuse what it cannot carry', () => {
		const pdf = { type: 'file' as const, filename: 'Q3 report.pdf', context: 'from finance', source: { kind: 'base64' as const, mediaType: 'application/pdf', data: 'JVBERi0=' } }
		expect(encode(req({ messages: [{ role: 'user', content: [pdf, { type: 'text', text: 'sum up' }] }] })).messages[0].content).toEqual([
			{ document: { format: 'pdf', name: 'Q3 report-pdf', source: { bytes: 'JVBERi0=' }, context: 'from finance' } },
			{ text: 'sum up' },
		])
		const audio = { type: 'audio' as const, mediaType: 'audio/wav', data: 'UklGRg==' }
		expect(() => encode(req({ messages: [{ role: 'user', content: [audio] }] }))).toThrow('messages[0].content[0]: audio (audio/wav) cannot be sent to this model (Bedrock Converse)')
		const url = { type: 'image' as const, source: { kind: 'url' as const, url: 'https://example.com/a.png' } }
		expect(() => encode(req({ messages: [{ role: 'user', content: [url] }] }))).toThrow('it takes image bytes only')
		expect(() => encode(req({ webSearch: {} }))).toThrow('web search is not available')
	})

	it('should keep tool ids Converse takes and make one for others', () => {
		expect(toolUseId('tooluse_abc-1')).toBe('tooluse_abc-1')
		expect(toolUseId('call_1__ts_c2lnbmF0dXJl')).toBe('call_1')
		const long = toolUseId('x'.repeat(80))
		expect(long).toMatch(/^tooluse_[a-z0-9]+$/)
		expect(toolUseId('x'.repeat(80))).toBe(long)
		expect(documentName('notes: v2.txt')).toBe('notes- v2-txt')
	})
})

describe('bedrock-converse decodeResponse', () => {
	it('should read the content, the stop reason and the usage', () => {
		const r = bedrockConverse.decodeResponse({
			output: {
				message: {
					role: 'assistant',
					content: [
						{ reasoningContent: { reasoningText: { text: 'hmm', signature: 'SIG' } } },
						{ text: 'Paris' },
						{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
					],
				},
			},
			stopReason: 'tool_use',
			usage: { inputTokens: 12, outputTokens: 5, totalTokens: 20, cacheReadInputTokens: 3 },
		})
		expect(r.content).toEqual([
			{ type: 'thinking', text: 'hmm', signature: tagSignature('converse', 'SIG') },
			{ type: 'text', text: 'Paris' },
			{ type: 'tool_call', id: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } },
		])
		expect(r.stopReason).toBe('tool_use')
		expect(r.usage).toEqual({ input: 12, output: 5, cacheRead: 3, cacheWrite: 0, reasoning: 0 })
	})

	for (const [wire, canonical] of [
		['end_turn', 'end_turn'],
		['max_tokens', 'max_tokens'],
		['stop_sequence', 'stop_sequence'],
		['guardrail_intervened', 'content_filter'],
		['content_filtered', 'content_filter'],
		['model_context_window_exceeded', 'max_tokens'],
	] as const)
		it(`should map stopReason ${wire} to ${canonical}`, () => {
			expect(bedrockConverse.decodeResponse({ output: { message: { content: [{ text: 'x' }] } }, stopReason: wire }).stopReason).toBe(canonical)
		})
})

/** Runs frames (`[event, payload]`) through the decoder, then its end. */
function decode(frames: Array<[string, unknown]>, ended = true): StreamEvent[] {
	const d = streamDecoder()
	const out: StreamEvent[] = []
	for (const [event, payload] of frames) d.push({ event, data: JSON.stringify(payload) } as SseFrame, out)
	if (ended) d.end(out)
	return out.map((e) => (e.type === 'start' ? { ...e, id: 'ID' } : e))
}

describe('bedrock-converse stream decoder', () => {
	it('should open text and reasoning blocks on their first delta, a tool call on its start, and hold finish for the usage', () => {
		const events = decode([
			['messageStart', { role: 'assistant', p: 'abc' }],
			['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } }],
			['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'SIG' } } }],
			['contentBlockStop', { contentBlockIndex: 0 }],
			['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Let me ' } }],
			['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'check.' } }],
			['contentBlockStop', { contentBlockIndex: 1 }],
			['contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather' } } }],
			['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } }],
			['contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '"Paris"}' } } }],
			['contentBlockStop', { contentBlockIndex: 2 }],
			['messageStop', { stopReason: 'tool_use' }],
			['metadata', { usage: { inputTokens: 9, outputTokens: 4, totalTokens: 13 }, metrics: { latencyMs: 5 } }],
		])
		expect(events).toEqual([
			{ type: 'start', id: 'ID', model: '' },
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'hmm' },
			{ type: 'signature_delta', index: 0, signature: tagSignature('converse', 'SIG') },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'text' } },
			{ type: 'text_delta', index: 1, text: 'Let me ' },
			{ type: 'text_delta', index: 1, text: 'check.' },
			{ type: 'block_stop', index: 1 },
			{ type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'tooluse_1', name: 'get_weather' } },
			{ type: 'json_delta', index: 2, json: '{"city":' },
			{ type: 'json_delta', index: 2, json: '"Paris"}' },
			{ type: 'block_stop', index: 2 },
			{ type: 'usage', usage: { input: 9, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 0 } },
			{ type: 'finish', reason: 'tool_use' },
		])
	})

	it('should number blocks in the order they open when a model skips contentBlockStop', () => {
		const events = decode([
			['messageStart', { role: 'assistant' }],
			['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'a' } } }],
			['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'b' } }],
			['contentBlockDelta', { contentBlockIndex: 2, delta: { reasoningContent: { redactedContent: 'ZW5j' } } }],
			['messageStop', { stopReason: 'end_turn' }],
		])
		expect(events.map((e) => [e.type, 'index' in e ? e.index : undefined])).toEqual([
			['start', undefined],
			['block_start', 0],
			['thinking_delta', 0],
			['block_stop', 0],
			['block_start', 1],
			['text_delta', 1],
			['block_stop', 1],
			['block_start', 2],
			['block_stop', 2],
			// No metadata before the body ended: the answer is whole, its usage unknown.
			['finish', undefined],
		])
		expect(events[7]).toEqual({ type: 'block_start', index: 2, block: { kind: 'redacted_thinking', data: tagSignature('converse', 'ZW5j') } })
	})

	it('should end with an error on an exception, and on a stream cut before messageStop', () => {
		const thrown = decode([
			['messageStart', { role: 'assistant' }],
			['exception', { exceptionType: 'throttlingException', message: 'Too many tokens' }],
		])
		const last = thrown[thrown.length - 1]!
		expect(last.type === 'error' && [last.error.status, last.error.retryable]).toEqual([429, true])
		const cut = decode([
			['messageStart', { role: 'assistant' }],
			['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'par' } }],
		])
		const end = cut[cut.length - 1]!
		expect(end.type === 'error' && end.error.code).toBe('upstream_cut')
	})
})
