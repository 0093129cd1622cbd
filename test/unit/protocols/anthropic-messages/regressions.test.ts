/** One named regression test per WIRE-NOTES bug that concerns the Anthropic protocol. */
import { describe, expect, it } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatRequest, Message } from '../../../../src/core/ir'
import { anthropicMessages } from '../../../../src/protocols/anthropic-messages'
import type { AnthropicRequest } from '../../../../src/protocols/anthropic-messages/model'
import { assertContract, collect, fakeFetch, fixtureFrames, from, payloads, sseResponse } from './helpers'

type Body = Record<string, any>
const ctx = { model: 'claude-client', countInputTokens: () => 321 }
const encodeEvents = (events: StreamEvent[]) => collect(anthropicMessages.encodeStream(from(events), ctx))
const sdkFinal = (events: AsyncIterable<StreamEvent>) =>
	new Anthropic({ apiKey: 'k', maxRetries: 0, fetch: fakeFetch(() => sseResponse(anthropicMessages.encodeStream(events, ctx))) }).messages
		.stream({ model: 'claude-client', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })
		.finalMessage()
const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }], stream: true }

describe('anthropic-messages regressions', () => {
	it('should derive stop_reason tool_use and send no empty text block (BerriAI/litellm#34692)', async () => {
		const events = await collect(anthropicMessages.decodeStream(fixtureFrames('empty-text-tool.sse')))
		assertContract(events)
		expect(events.filter((e) => e.type === 'block_start').map((e) => e.type === 'block_start' && e.block.kind)).toEqual(['tool_call'])
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
		const msg = await sdkFinal(from(events))
		expect(msg.stop_reason).toBe('tool_use')
		expect(msg.content.map((b) => b.type)).toEqual(['tool_use'])
	})

	it('should send whole Gemini-style arguments as one input_json_delta (BerriAI/litellm#25561)', async () => {
		const events: StreamEvent[] = [
			{ type: 'start', id: 'gem-1', model: 'gemini' },
			{ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'fc_0', name: 'search' } },
			{ type: 'json_delta', index: 0, json: '{"q":"weather","n":3}' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'end_turn' },
		]
		const deltas = payloads(await encodeEvents(events)).filter((p) => p.type === 'content_block_delta')
		expect(deltas.map((d) => d.delta)).toEqual([{ type: 'input_json_delta', partial_json: '{"q":"weather","n":3}' }])
		const msg = await sdkFinal(from(events))
		expect(msg.content).toEqual([{ type: 'tool_use', id: 'fc_0', name: 'search', input: { q: 'weather', n: 3 } }] as never)
	})

	it('should emit exactly one well-formed message_start first (maximhq/bifrost#5907, #4556)', async () => {
		const frames = await encodeEvents([
			{ type: 'start', id: 'a', model: 'm' },
			{ type: 'start', id: 'b', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'x' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'end_turn' },
		])
		expect(frames.filter((f) => f.event === 'message_start')).toHaveLength(1)
		expect(frames[0].event).toBe('message_start')
		const msg = payloads(frames)[0].message as Body
		expect(Object.keys(msg).sort()).toEqual(['content', 'id', 'model', 'role', 'stop_reason', 'stop_sequence', 'type', 'usage'])
		// A stream whose producer skipped `start` still opens with message_start.
		const noStart = await encodeEvents([{ type: 'finish', reason: 'end_turn' }])
		expect(noStart.map((f) => f.event)).toEqual(['message_start', 'message_delta', 'message_stop'])
	})

	it('should surface an upstream error as a protocol-correct error event (Portkey-AI/gateway#1142)', async () => {
		const events = await collect(anthropicMessages.decodeStream(fixtureFrames('error-mid.sse')))
		const frames = await collect(anthropicMessages.encodeStream(from(events), ctx))
		expect(frames.at(-1)?.event).toBe('error')
		// The fixture's error is Anthropic's overloaded_error: it stays one (QA report item 9), as Anthropic sends it.
		expect(JSON.parse(frames.at(-1)!.data).error.type).toBe('overloaded_error')
	})

	it('should close each block before the next and never reuse an index (QuantumNous/new-api PR #2854, PR #6394)', async () => {
		// A producer that forgets block_stop between interleaved thinking and parallel tool calls.
		const p = payloads(
			await encodeEvents([
				{ type: 'start', id: 'x', model: 'm' },
				{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
				{ type: 'thinking_delta', index: 0, text: 'a' },
				{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 't1', name: 'f' } },
				{ type: 'block_start', index: 2, block: { kind: 'thinking' } },
				{ type: 'thinking_delta', index: 2, text: 'b' },
				{ type: 'block_start', index: 3, block: { kind: 'tool_call', id: 't2', name: 'f' } },
				{ type: 'block_stop', index: 3 },
				{ type: 'finish', reason: 'tool_use' },
			]),
		)
		const lifecycle = p
			.filter((x) => x.type === 'content_block_start' || x.type === 'content_block_stop')
			.map((x) => `${x.type === 'content_block_start' ? '+' : '-'}${x.index}`)
		expect(lifecycle).toEqual(['+0', '-0', '+1', '-1', '+2', '-2', '+3', '-3'])
	})

	it('should replay thinking signatures losslessly in requests and streams (QuantumNous/new-api#4543, PR #6998)', async () => {
		const body = {
			model: 'm',
			max_tokens: 5000,
			thinking: { type: 'enabled', budget_tokens: 2000 },
			messages: [
				{ role: 'user', content: 'q' },
				{
					role: 'assistant',
					content: [
						{ type: 'thinking', thinking: 'plan', signature: 'SIG==' },
						{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
					],
				},
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
			],
		}
		const out = anthropicMessages.encodeRequest(anthropicMessages.decodeRequest(body as AnthropicRequest), 'claude') as Body
		expect(out.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'plan', signature: 'SIG==' })
		expect(out.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 })
		const msg = await sdkFinal(anthropicMessages.decodeStream(fixtureFrames('thinking.sse')))
		expect(msg.content[0]).toMatchObject({
			type: 'thinking',
			signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+ZsO4Kb2xW6==',
		})
	})

	it('should carry a Gemini thought signature through an Anthropic client in the tool id (theopenco/llmgateway#1267)', async () => {
		const res = anthropicMessages.encodeResponse(
			{
				id: 'g',
				model: 'gemini',
				content: [{ type: 'tool_call', id: 'fc_1', name: 'f', input: {}, signature: 'CiQB+/sigA==' }],
				stopReason: 'end_turn',
				usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
			},
			ctx,
		)
		const id = (res.content[0] as { id: string }).id
		// The client sends the id back on its call and on its result.
		const req = anthropicMessages.decodeRequest({
			model: 'm',
			max_tokens: 100,
			messages: [
				{ role: 'user', content: 'q' },
				{ role: 'assistant', content: [{ type: 'tool_use', id, name: 'f', input: {} }] },
				{ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'r' }] },
			],
		} as AnthropicRequest)
		expect(req.messages[1].content[0]).toEqual({ type: 'tool_call', id: 'fc_1', name: 'f', input: {}, signature: 'CiQB+/sigA==' })
		expect(req.messages[2].content[0]).toMatchObject({ type: 'tool_result', toolCallId: 'fc_1' })
	})

	it('should report cache tokens in message_start instead of 0 (QuantumNous/new-api#6144, BerriAI/litellm#31069)', async () => {
		const events = await collect(anthropicMessages.decodeStream(fixtureFrames('usage-cache.sse')))
		const start = payloads(await collect(anthropicMessages.encodeStream(from(events), ctx)))[0].message as Body
		expect(start.usage).toEqual({
			input_tokens: 12,
			cache_creation_input_tokens: 1500,
			cache_read_input_tokens: 30000,
			cache_creation: { ephemeral_5m_input_tokens: 1500, ephemeral_1h_input_tokens: 0 },
			output_tokens: 1,
			output_tokens_details: { thinking_tokens: 0 },
			service_tier: 'standard',
			speed: 'standard',
		})
	})

	it('should put a real or locally counted input_tokens in message_start, never 0 (vercel/ai#17326)', async () => {
		const frames = await encodeEvents([
			{ type: 'start', id: 'c', model: 'gpt' },
			{ type: 'finish', reason: 'end_turn' },
		])
		expect((payloads(frames)[0].message as Body).usage.input_tokens).toBe(321)
	})

	it('should treat message_delta usage as cumulative (WIRE-NOTES wire §3, PostHog/posthog-python 7.75.4)', async () => {
		const events = await collect(anthropicMessages.decodeStream(fixtureFrames('usage-cache.sse')))
		const last = events.filter((e) => e.type === 'usage').at(-1)
		expect(last).toEqual({ type: 'usage', usage: { input: 12, output: 42, cacheRead: 30000, cacheWrite: 1500 } })
	})

	it('should start an assistant tool-use turn with its thinking block (anomalyco/opencode#6176)', () => {
		const messages: Message[] = [
			base.messages[0],
			{
				role: 'assistant',
				content: [
					{ type: 'text', text: 'Let me call it.' },
					{ type: 'tool_call', id: 't1', name: 'f', input: {} },
					{ type: 'thinking', text: 'reason', signature: 'S' },
				],
			},
			{ role: 'user', content: [{ type: 'tool_result', toolCallId: 't1', content: [] }] },
		]
		const out = anthropicMessages.encodeRequest({ ...base, messages, reasoning: { enabled: true, budgetTokens: 2000 } }, 'c') as Body
		expect(out.messages[1].content.map((b: Body) => b.type)).toEqual(['thinking', 'text', 'tool_use'])
		expect(out.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 })
		// History from another vendor has no thinking block to lead with: thinking is left off rather than refused.
		const foreign = messages.map((m, i) => (i === 1 ? { ...m, content: m.content.filter((p) => p.type !== 'thinking') } : m))
		const off = anthropicMessages.encodeRequest(
			{ ...base, messages: foreign, reasoning: { enabled: true, budgetTokens: 2000 } },
			'c',
		) as Body
		expect(off.thinking).toBeUndefined()
	})

	it('should keep a signature-only thinking block without duplicating text (open-webui/open-webui PR #29860)', async () => {
		const frames = [
			{
				event: 'message_start',
				data: '{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1,"output_tokens":1}}}',
			},
			{
				event: 'content_block_start',
				data: '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}',
			},
			{
				event: 'content_block_delta',
				data: '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"ONLY"}}',
			},
			{ event: 'content_block_stop', data: '{"type":"content_block_stop","index":0}' },
			{ event: 'message_delta', data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}' },
			{ event: 'message_stop', data: '{"type":"message_stop"}' },
		]
		const msg = await sdkFinal(anthropicMessages.decodeStream(from(frames)))
		expect(msg.content).toEqual([{ type: 'thinking', thinking: '', signature: 'ONLY' }] as never)
	})

	it('should pass image URLs through instead of converting them to base64 (BerriAI/litellm#12899)', () => {
		const out = anthropicMessages.encodeRequest(
			{ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://img.test/big.png' } }] }] },
			'c',
		) as Body
		expect(out.messages[0].content[0].source).toEqual({ type: 'url', url: 'https://img.test/big.png' })
	})

	it('should satisfy thinking constraints when converting from OpenAI (can1357/oh-my-pi PR #333, WIRE-NOTES wire §20)', () => {
		const out = anthropicMessages.encodeRequest(
			{
				...base,
				maxTokens: 3000,
				temperature: 1.4,
				tools: [{ name: 'f', parameters: { type: 'object' } }],
				toolChoice: { type: 'required' },
				reasoning: { enabled: true, effort: 'medium' },
			},
			'c',
		) as Body
		expect(out.thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
		expect(out.thinking.budget_tokens).toBeLessThan(out.max_tokens)
		expect(out.tool_choice).toEqual({ type: 'auto' })
		expect(out.temperature).toBeUndefined()
	})

	it('should keep parallel tool_use blocks apart with their own indexes (Portkey-AI/gateway#1275)', async () => {
		const events = await collect(anthropicMessages.decodeStream(fixtureFrames('tool-use-parallel.sse')))
		const byIndex = new Map<number, string>()
		for (const e of events) if (e.type === 'json_delta') byIndex.set(e.index, (byIndex.get(e.index) ?? '') + e.json)
		expect([...byIndex.values()].map((s) => JSON.parse(s))).toEqual([{ location: 'Paris' }, { location: 'Tokyo' }])
	})
})
