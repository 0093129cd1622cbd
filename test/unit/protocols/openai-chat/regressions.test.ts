/**
 * One test per WIRE-NOTES bug that concerns the OpenAI chat shape, named by the public issue it guards against.
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../../src/core/events'
import { decodeRequest, encodeRequest } from '../../../../src/protocols/openai-chat/request'
import { decodeStream } from '../../../../src/protocols/openai-chat/stream-decode'
import { encodeStream } from '../../../../src/protocols/openai-chat/stream-encode'
import { agentTurn, collect, framesOf, from, payloads } from './helpers'

const chunk = (delta: object, finish: string | null = null) =>
	JSON.stringify({ id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })

const encode = (events: StreamEvent[], includeUsage = false) => collect(encodeStream(from(events), { model: 'm', includeUsage }))

describe('openai-chat regressions', () => {
	it('BerriAI/litellm#34692: a tool call with finish_reason stop ends in tool_use, with no empty text block', async () => {
		const events = await collect(
			decodeStream(
				framesOf([
					chunk({ role: 'assistant', content: '' }),
					chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
					chunk({}, 'stop'),
					'[DONE]',
				]),
			),
		)
		expect(events.filter((e) => e.type === 'block_start')).toHaveLength(1)
		expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_use' })
	})

	it('BerriAI/litellm#34692 (encode side): tool calls under an end_turn stop are reported as tool_calls', async () => {
		const chunks = payloads(await encode(agentTurn()))
		expect(chunks.at(-1)?.choices[0].finish_reason).toBe('tool_calls')
	})

	it('Portkey-AI/gateway#1275: parallel calls get distinct tool indexes 0 and 1, not the block index', async () => {
		const calls = payloads(await encode(agentTurn())).flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
		expect(calls.filter((c) => c.id).map((c) => c.index)).toEqual([0, 1])
		expect(calls.filter((c) => !c.id).every((c) => c.type === undefined && c.function.name === undefined)).toBe(true)
	})

	it('Portkey-AI/gateway#1399: the first delta carries role assistant', async () => {
		const first = payloads(await encode([{ type: 'start', id: 'x', model: 'm' }, { type: 'finish', reason: 'end_turn' }]))[0]
		expect(first.choices[0].delta.role).toBe('assistant')
	})

	it('Portkey-AI/gateway#1142: an upstream error mid-stream is surfaced, not swallowed', async () => {
		const events = await collect(decodeStream(framesOf([chunk({ content: 'a' }), '{"error":{"message":"Bedrock throttled","type":"rate_limit_error"}}'])))
		// A rate limit, in the gateway's words (the vendor's text, which can name its account, kept for the log only).
		expect(events.at(-1)).toMatchObject({ type: 'error', error: { kind: 'rate_limit', detail: 'Bedrock throttled' } })
	})

	it('QuantumNous/new-api PR #2854: reasoning → text → tool blocks close before the next opens, indexes never reused', async () => {
		const events = await collect(
			decodeStream(
				framesOf([
					chunk({ reasoning_content: 'a' }),
					chunk({ content: 'b' }),
					chunk({ reasoning_content: 'c' }),
					chunk({ tool_calls: [{ index: 0, id: 'x', type: 'function', function: { name: 'f', arguments: '' } }] }),
					chunk({}, 'tool_calls'),
					'[DONE]',
				]),
			),
		)
		const lifecycle = events.filter((e) => e.type === 'block_start' || e.type === 'block_stop').map((e) => `${e.type}:${'index' in e ? e.index : ''}`)
		expect(lifecycle).toEqual(['block_start:0', 'block_stop:0', 'block_start:1', 'block_stop:1', 'block_start:2', 'block_stop:2', 'block_start:3', 'block_stop:3'])
	})

	it('QuantumNous/new-api#4543: reasoning_content is sent back to DeepSeek on the assistant tool turn', () => {
		const req = decodeRequest({
			model: 'deepseek-reasoner',
			messages: [
				{ role: 'user', content: 'q' },
				{ role: 'assistant', content: null, reasoning_content: 'why', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
				{ role: 'tool', tool_call_id: 'c1', content: 'r' },
			],
		})
		expect(encodeRequest(req, 'deepseek-reasoner').messages[1]).toMatchObject({ role: 'assistant', reasoning_content: 'why' })
	})

	it('QuantumNous/new-api PR #6998: a thinking signature streamed to an OpenAI client comes back intact in its history', async () => {
		const chunks = payloads(await encode(agentTurn()))
		const details = chunks.flatMap((c) => c.choices[0]?.delta.reasoning_details ?? [])
		const reasoning = chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? '').join('')
		// The client replays what it accumulated: reasoning text plus the details it received.
		const req = decodeRequest({
			model: 'm',
			messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'Let me check.', reasoning_content: reasoning, reasoning_details: details }],
		})
		expect(req.messages[1].content[0]).toEqual({ type: 'thinking', text: 'Thinking.', signature: 'sig-A' })
	})

	it('theopenco/llmgateway#1267: a Gemini thought signature survives an OpenAI client round trip via the tool-call id', async () => {
		const chunks = payloads(await encode(agentTurn()))
		const id = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).find((c) => c.function.name === 'get_time')?.id ?? ''
		const req = decodeRequest({
			model: 'm',
			messages: [
				{ role: 'user', content: 'q' },
				{ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
				{ role: 'tool', tool_call_id: id, content: '12:00' },
			],
		})
		expect(req.messages[1].content[0]).toMatchObject({ type: 'tool_call', id: 'toolu_B', signature: 'Z2VtaW5p' })
		expect(req.messages[2].content[0]).toMatchObject({ type: 'tool_result', toolCallId: 'toolu_B', name: 'get_time' })
	})

	it('Portkey-AI/gateway#691: include_usage is always requested upstream and the usage chunk is stripped for clients that did not ask', async () => {
		expect(encodeRequest(decodeRequest({ model: 'm', messages: [{ role: 'user', content: 'q' }], stream: true }), 'gpt-4o').stream_options).toEqual({ include_usage: true })
		const frames = await encode(agentTurn(), false)
		expect(payloads(frames).some((c) => c.choices.length === 0)).toBe(false)
	})

	it('QuantumNous/new-api#6144: cached tokens reach both the canonical usage (billing) and the client usage', async () => {
		const events = await collect(
			decodeStream(framesOf([chunk({ content: 'x' }, 'stop'), JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 1000, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 900 } } }), '[DONE]'])),
		)
		expect(events.find((e) => e.type === 'usage')).toEqual({ type: 'usage', usage: { input: 100, output: 1, cacheRead: 900, cacheWrite: 0, reasoning: 0 } })
		const out = payloads(await encode(events, true)).at(-1)
		expect(out?.usage).toMatchObject({ prompt_tokens: 1000, prompt_tokens_details: { cached_tokens: 900 } })
	})

	it('open-webui PR #29860: signature-only thinking is kept without repeating its text', async () => {
		const events = await collect(
			decodeStream(framesOf([chunk({ reasoning: 'shown once', reasoning_details: [{ type: 'reasoning.text', text: 'shown once' }] }), chunk({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: 'S' }] }), chunk({}, 'stop'), '[DONE]'])),
		)
		expect(events.filter((e) => e.type === 'thinking_delta')).toHaveLength(1)
		expect(events.find((e) => e.type === 'signature_delta')).toMatchObject({ signature: 'S' })
	})

	it('songquanpeng/one-api#2388 / BerriAI/litellm#12899: image URLs are passed through, never fetched or inlined', () => {
		const req = decodeRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest' } }] }] })
		expect(req.messages[0].content[0]).toEqual({ type: 'image', source: { kind: 'url', url: 'http://169.254.169.254/latest' } })
		expect(encodeRequest(req, 'gpt-4o').messages[0]).toEqual({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest' } }] })
	})
})

describe('openai-chat stream round trip', () => {
	it('should decode its own encoding back to the same blocks, usage and finish', async () => {
		const events = await collect(decodeStream(from(await encode(agentTurn(), true))))
		const original = agentTurn()
		expect(events[0]).toMatchObject({ type: 'start', model: 'm' })
		// Every block event survives, including the signature packed into toolu_B's id on the wire.
		expect(events.slice(1, -2)).toEqual(original.slice(1, -2))
		expect(events.slice(-2)).toEqual([
			{ type: 'usage', usage: { input: 10, output: 42, cacheRead: 90, cacheWrite: 0, reasoning: 12 } },
			{ type: 'finish', reason: 'tool_use' },
		])
	})
})
