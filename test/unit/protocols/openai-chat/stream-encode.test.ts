import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import { encodeStream } from '../../../../src/protocols/openai-chat/stream-encode'
import { agentTurn, collect, from, payloads } from './helpers'

const encode = (events: StreamEvent[], includeUsage = true) => collect(encodeStream(from(events), { model: 'client-model', includeUsage }))

describe('openai-chat encodeStream', () => {
	it('should open with a role chunk and give every chunk the same id, created and client model', async () => {
		const frames = await encode(agentTurn())
		const chunks = payloads(frames)
		expect(chunks[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null })
		expect(chunks[0].id).toMatch(/^chatcmpl-/)
		for (const c of chunks) {
			expect(c.object).toBe('chat.completion.chunk')
			expect(c.id).toBe(chunks[0].id)
			expect(c.created).toBe(chunks[0].created)
			expect(c.model).toBe('client-model')
		}
	})

	it('should open an answer that starts with a tool call with content null, as OpenAI does', async () => {
		const events: StreamEvent[] = [
			{ type: 'start', id: 'msg_1', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'toolu_A', name: 'get_time' } },
			{ type: 'json_delta', index: 0, json: '{}' },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'tool_use' },
		]
		const chunks = payloads(await encode(events))
		expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: null, refusal: null })
		expect(chunks[1].choices[0].delta.tool_calls?.[0]).toMatchObject({ index: 0, id: 'toolu_A' })
		expect(chunks.filter((c) => c.choices[0]?.delta?.role)).toHaveLength(1)
	})

	it('should give a call whose arguments never streamed `{}` when it stops, as OpenAI streams a call without parameters (wire §8)', async () => {
		// Claude streams such a call as `partial_json: ""`: the decoder passes no json_delta on.
		const events: StreamEvent[] = [
			{ type: 'start', id: 'msg_1', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'toolu_A', name: 'ls' } },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'toolu_B', name: 'view' } },
			{ type: 'json_delta', index: 1, json: '{"file_path":"a"}' },
			{ type: 'block_stop', index: 1 },
			{ type: 'finish', reason: 'tool_use' },
		]
		const deltas = payloads(await encode(events))
			.slice(1, -2)
			.map((c) => c.choices[0].delta)
		expect(deltas).toEqual([
			{ tool_calls: [{ index: 0, id: 'toolu_A', type: 'function', function: { name: 'ls', arguments: '' } }] },
			{ tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
			{ tool_calls: [{ index: 1, id: 'toolu_B', type: 'function', function: { name: 'view', arguments: '' } }] },
			{ tool_calls: [{ index: 1, function: { arguments: '{"file_path":"a"}' } }] },
		])
	})

	it('should stream reasoning, text and tool calls with per-call indexes (WIRE-NOTES wire §7)', async () => {
		const deltas = payloads(await encode(agentTurn()))
			.slice(1, -2)
			.map((c) => c.choices[0].delta)
		expect(deltas).toEqual([
			{ reasoning_content: 'Think' },
			{ reasoning_content: 'ing.' },
			{ reasoning_details: [{ type: 'reasoning.text', text: '', signature: 'sig-A' }] },
			{ content: 'Let me ' },
			{ content: 'check.' },
			{ tool_calls: [{ index: 0, id: 'toolu_A', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
			{ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
			{ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
			{ tool_calls: [{ index: 1, id: 'toolu_B__ts_Z2VtaW5p', type: 'function', function: { name: 'get_time', arguments: '' } }] },
			{ tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
		])
	})

	it('should end with a finish chunk, a usage chunk with choices [] and [DONE] (WIRE-NOTES wire §12)', async () => {
		const frames = await encode(agentTurn())
		expect(frames.at(-1)).toEqual({ data: '[DONE]' })
		const chunks = payloads(frames)
		const [finish, usage] = chunks.slice(-2)
		expect(finish.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }])
		expect(finish.usage).toBeNull()
		expect(usage.choices).toEqual([])
		expect(usage.usage).toEqual({
			prompt_tokens: 100,
			completion_tokens: 42,
			total_tokens: 142,
			prompt_tokens_details: { cached_tokens: 90, audio_tokens: 0 },
			completion_tokens_details: { reasoning_tokens: 12, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
		})
		for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull()
	})

	it('should omit the usage chunk and the usage field when the client did not ask (Portkey #691)', async () => {
		const frames = await encode(agentTurn(), false)
		const chunks = payloads(frames)
		expect(chunks.every((c) => !('usage' in c))).toBe(true)
		expect(chunks.at(-1)?.choices[0].finish_reason).toBe('tool_calls')
		expect(frames.at(-1)).toEqual({ data: '[DONE]' })
	})

	it('should map stop reasons to finish_reason', async () => {
		const finishOf = async (reason: 'end_turn' | 'max_tokens' | 'refusal') =>
			payloads(await encode([{ type: 'start', id: 'x', model: 'm' }, { type: 'finish', reason }], false)).at(-1)?.choices[0].finish_reason
		expect(await finishOf('end_turn')).toBe('stop')
		expect(await finishOf('max_tokens')).toBe('length')
		expect(await finishOf('refusal')).toBe('content_filter')
	})

	it('should emit encrypted reasoning as a reasoning_details delta', async () => {
		const chunks = payloads(
			await encode(
				[
					{ type: 'start', id: 'x', model: 'm' },
					{ type: 'block_start', index: 0, block: { kind: 'redacted_thinking', data: 'ENC' } },
					{ type: 'block_stop', index: 0 },
					{ type: 'finish', reason: 'end_turn' },
				],
				false,
			),
		)
		expect(chunks[1].choices[0].delta).toEqual({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'ENC' }] })
	})

	it('should keep a chatcmpl id from upstream and replace other ids', async () => {
		const idOf = async (id: string) => payloads(await encode([{ type: 'start', id, model: 'm' }, { type: 'finish', reason: 'end_turn' }], false))[0].id
		expect(await idOf('chatcmpl-upstream')).toBe('chatcmpl-upstream')
		expect(await idOf('msg_01ABC')).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/)
	})

	it('should emit an error frame and no [DONE] on an error event', async () => {
		const frames = await encode([
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'par' },
			{ type: 'error', error: new GatewayError('overloaded', 'Overloaded', { code: 'overloaded' }) },
			{ type: 'text_delta', index: 0, text: 'never sent' },
		])
		expect(frames).toHaveLength(3)
		expect(JSON.parse(frames[2].data)).toEqual({ error: { message: 'Overloaded', type: 'service_unavailable_error', param: null, code: 'overloaded' } })
	})

	it('should ignore ping events (the relay sends keepalive comments)', async () => {
		const withPing = await encode([{ type: 'ping' }, { type: 'start', id: 'chatcmpl-p', model: 'm' }, { type: 'ping' }, { type: 'finish', reason: 'end_turn' }], false)
		expect(withPing).toHaveLength(3)
	})

	it('should end with an error frame when the events stop without finish or error', async () => {
		const frames = await encode([{ type: 'start', id: 'x', model: 'm' }])
		expect(frames.at(-1)?.data).toContain('"error"')
		expect(frames.some((f) => f.data === '[DONE]')).toBe(false)
	})
})

describe('text and reasoning chunks written as text', () => {
	const awkward = ['Hello', 'quote " backslash \\ newline \n tab \t', 'unicode ✓ 😀 \u2028 \u0000', '{"content":"x"}']
	for (const includeUsage of [true, false])
		it(`should be the bytes JSON.stringify writes for the same chunk (include_usage ${includeUsage})`, async () => {
			const events: StreamEvent[] = [{ type: 'start', id: 'chatcmpl-"odd\\id', model: 'm', created: 1700000000 }]
			events.push({ type: 'block_start', index: 0, block: { kind: 'thinking' } })
			for (const t of awkward) events.push({ type: 'thinking_delta', index: 0, text: t })
			events.push({ type: 'block_stop', index: 0 }, { type: 'block_start', index: 1, block: { kind: 'text' } })
			for (const t of awkward) events.push({ type: 'text_delta', index: 1, text: t })
			events.push({ type: 'block_stop', index: 1 }, { type: 'finish', reason: 'end_turn' })
			const frames = (await encode(events, includeUsage)).filter((f) => f.data !== '[DONE]')
			const deltas = frames.map((f) => JSON.parse(f.data)).filter((c) => c.choices[0]?.delta && ('content' in c.choices[0].delta || 'reasoning_content' in c.choices[0].delta))
			expect(deltas.slice(1).map((c) => c.choices[0].delta)).toEqual([...awkward.map((t) => ({ reasoning_content: t })), ...awkward.map((t) => ({ content: t }))])
			for (const f of frames) {
				const c = JSON.parse(f.data)
				// Same members in the same order as every other chunk, formatted as JSON.stringify formats them.
				expect(f.data).toBe(JSON.stringify(c))
				expect(Object.keys(c)).toEqual(['id', 'object', 'created', 'model', 'choices', ...(includeUsage ? ['usage'] : [])])
				expect(c).toMatchObject({ id: 'chatcmpl-"odd\\id', object: 'chat.completion.chunk', created: 1700000000, model: 'client-model' })
			}
		})
})
