/**
 * The canonical MCP parts and blocks in every codec (issue 8): Anthropic decodes and encodes `mcp_tool_use` /
 * `mcp_tool_result` (whole and streamed), chat completions carries them in `mcp_calls`, and Gemini and Responses
 * leave them out explicitly.
 */
import { describe, expect, it } from 'bun:test'
import type { StreamEvent } from '../../../src/core/events'
import type { ChatResponse } from '../../../src/core/ir'
import type { SseFrame } from '../../../src/core/sse'
import { anthropicMessages } from '../../../src/protocols/anthropic-messages'
import { gemini } from '../../../src/protocols/gemini'
import { openaiChat } from '../../../src/protocols/openai-chat'
import { openaiResponses } from '../../../src/protocols/openai-responses'

const RESPONSE: ChatResponse = {
	id: 'msg_01X',
	model: 'm',
	content: [
		{ type: 'text', text: 'Checking.' },
		{ type: 'mcp_tool_use', id: 'mcptoolu_1', serverName: 'wx', name: 'get_weather', input: { city: 'Paris' } },
		{ type: 'mcp_tool_result', toolUseId: 'mcptoolu_1', isError: true, content: [{ type: 'text', text: 'down' }] },
		{ type: 'text', text: 'Sorry.' },
	],
	stopReason: 'end_turn',
	usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
}

const EVENTS: StreamEvent[] = [
	{ type: 'start', id: 'msg_01X', model: 'm' },
	{ type: 'block_start', index: 0, block: { kind: 'mcp_tool_use', id: 'mcptoolu_1', name: 'get_weather', serverName: 'wx' } },
	{ type: 'json_delta', index: 0, json: '{"city":' },
	{ type: 'json_delta', index: 0, json: '"Paris"}' },
	{ type: 'block_stop', index: 0 },
	{ type: 'block_start', index: 1, block: { kind: 'mcp_tool_result', toolUseId: 'mcptoolu_1', isError: false, content: [{ type: 'text', text: 'Sunny' }] } },
	{ type: 'block_stop', index: 1 },
	{ type: 'block_start', index: 2, block: { kind: 'text' } },
	{ type: 'text_delta', index: 2, text: 'Sunny.' },
	{ type: 'block_stop', index: 2 },
	{ type: 'usage', usage: { input: 10, output: 5 } },
	{ type: 'finish', reason: 'end_turn' },
]

async function* from<T>(items: T[]): AsyncGenerator<T> {
	yield* items
}

async function all<T>(gen: AsyncIterable<T>): Promise<T[]> {
	const out: T[] = []
	for await (const x of gen) out.push(x)
	return out
}

const data = (frames: SseFrame[]) => frames.map((f) => (f.data === '[DONE]' ? f.data : JSON.parse(f.data)))

describe('anthropic-messages MCP blocks', () => {
	it('should encode MCP parts as mcp_tool_use and mcp_tool_result blocks, without turning the stop into tool_use', () => {
		const body = anthropicMessages.encodeResponse(RESPONSE, { model: 'm' })
		expect(body.content).toEqual([
			{ type: 'text', text: 'Checking.' },
			{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'get_weather', server_name: 'wx', input: { city: 'Paris' } },
			{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: true, content: [{ type: 'text', text: 'down' }] },
			{ type: 'text', text: 'Sorry.' },
		] as never)
		expect(body.stop_reason).toBe('end_turn')
	})

	it('should decode the blocks of an upstream body back into the same parts (string content too)', () => {
		const body = anthropicMessages.encodeResponse(RESPONSE, { model: 'm' })
		expect(anthropicMessages.decodeResponse(body).content).toEqual(RESPONSE.content)
		const stringy = { ...body, content: [{ type: 'mcp_tool_result', tool_use_id: 'x', is_error: false, content: 'plain' }] }
		expect(anthropicMessages.decodeResponse(stringy as never).content).toEqual([{ type: 'mcp_tool_result', toolUseId: 'x', isError: false, content: [{ type: 'text', text: 'plain' }] }])
	})

	it('should stream mcp_tool_use from input {} with input_json_delta, and mcp_tool_result whole at its start', async () => {
		const frames = await all(anthropicMessages.encodeStream(from(EVENTS), { model: 'm' }))
		const starts = data(frames).filter((d) => d.type === 'content_block_start')
		expect(starts.map((d) => d.content_block)).toEqual([
			{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'get_weather', server_name: 'wx', input: {} },
			{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'Sunny' }] },
			{ type: 'text', text: '' },
		])
		expect(data(frames).filter((d) => d.type === 'content_block_delta' && d.index === 0).map((d) => d.delta)).toEqual([
			{ type: 'input_json_delta', partial_json: '{"city":' },
			{ type: 'input_json_delta', partial_json: '"Paris"}' },
		])
		expect(data(frames).find((d) => d.type === 'message_delta').delta.stop_reason).toBe('end_turn')
		// And back: the stream decodes to the same blocks.
		const back = (await all(anthropicMessages.decodeStream(from(frames)))).filter((e) => e.type === 'block_start')
		expect(back.map((e) => (e.type === 'block_start' ? e.block.kind : ''))).toEqual(['mcp_tool_use', 'mcp_tool_result', 'text'])
	})
})

describe('openai-chat mcp_calls', () => {
	it('should carry the calls in message.mcp_calls, not in tool_calls', () => {
		const body = openaiChat.encodeResponse(RESPONSE, { model: 'm' })
		const message = body.choices[0]!.message as Record<string, unknown>
		expect(message.tool_calls).toBeUndefined()
		expect(message.content).toBe('Checking.Sorry.')
		expect(message.mcp_calls).toEqual([{ id: 'mcptoolu_1', type: 'mcp_call', server_name: 'wx', name: 'get_weather', arguments: '{"city":"Paris"}', output: null, error: 'down' }])
		expect(body.choices[0]!.finish_reason).toBe('stop')
	})

	it('should stream mcp_calls deltas like tool_calls: introduced once, then arguments, then the outcome', async () => {
		const chunks = data(await all(openaiChat.encodeStream(from(EVENTS), { model: 'm' })))
		const deltas = chunks.filter((c) => c !== '[DONE]' && c.choices[0]?.delta.mcp_calls).map((c) => c.choices[0].delta.mcp_calls)
		expect(deltas).toEqual([
			[{ index: 0, id: 'mcptoolu_1', type: 'mcp_call', server_name: 'wx', name: 'get_weather', arguments: '' }],
			[{ index: 0, arguments: '{"city":' }],
			[{ index: 0, arguments: '"Paris"}' }],
			[{ index: 0, output: 'Sunny', error: null }],
		])
		expect(chunks.some((c) => c !== '[DONE]' && c.choices[0]?.delta.tool_calls)).toBe(false)
	})
})

describe('protocols without MCP blocks', () => {
	it('should leave MCP parts out of Gemini answers', async () => {
		expect(gemini.encodeResponse(RESPONSE, { model: 'm' }).candidates![0]!.content!.parts).toEqual([{ text: 'Checking.' }, { text: 'Sorry.' }])
		const chunks = data(await all(gemini.encodeStream(from(EVENTS), { model: 'm' })))
		expect(JSON.stringify(chunks)).not.toContain('get_weather')
		expect(JSON.stringify(chunks)).toContain('Sunny.')
	})

	it('should leave MCP parts out of Responses answers', async () => {
		expect(openaiResponses.encodeResponse(RESPONSE, { model: 'm' }).output.map((o) => o.type)).toEqual(['message'])
		const frames = data(await all(openaiResponses.encodeStream(from(EVENTS), { model: 'm' })))
		const done = frames.find((f) => f.type === 'response.completed')
		expect(done.response.output.map((o: { type: string }) => o.type)).toEqual(['message'])
	})
})
