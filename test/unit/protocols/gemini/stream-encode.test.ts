import { describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import { GatewayError } from '../../../../src/core/errors'
import type { StreamEvent } from '../../../../src/core/events'
import type { ChatResponse } from '../../../../src/core/ir'
import { tagSignature } from '../../../../src/core/signatures'
import { carryThinking } from '../../../../src/protocols/gemini/carried-thinking'
import { REDACTED_PREFIX } from '../../../../src/protocols/gemini/read'
import { encodeResponse } from '../../../../src/protocols/gemini/response'
import { SKIP_SIGNATURE } from '../../../../src/protocols/gemini/signatures'
import { decodeStream, encodeStream } from '../../../../src/protocols/gemini/stream'
import { collect, fixtureFrames, fromArray, sseResponse } from './helpers'

const ctx = { model: 'my-model', includeThoughts: true }

const textTurn: StreamEvent[] = [
	{ type: 'start', id: 'msg_1', model: 'claude-x', usage: { input: 20, cacheRead: 100 } },
	{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
	{ type: 'thinking_delta', index: 0, text: 'Let me think.' },
	{ type: 'signature_delta', index: 0, signature: 'c2lnLWE=' },
	{ type: 'block_stop', index: 0 },
	{ type: 'block_start', index: 1, block: { kind: 'text' } },
	{ type: 'text_delta', index: 1, text: 'Hello' },
	{ type: 'text_delta', index: 1, text: ' there' },
	{ type: 'block_stop', index: 1 },
	{ type: 'ping' },
	{ type: 'usage', usage: { output: 15, reasoning: 5 } },
	{ type: 'finish', reason: 'end_turn' },
]

const toolTurn: StreamEvent[] = [
	{ type: 'start', id: 'chatcmpl-1', model: 'gpt-x' },
	{ type: 'block_start', index: 0, block: { kind: 'tool_call', id: 'call_a', name: 'get_weather' } },
	{ type: 'json_delta', index: 0, json: '{"city":' },
	{ type: 'json_delta', index: 0, json: '"Paris"}' },
	{ type: 'block_stop', index: 0 },
	{ type: 'block_start', index: 1, block: { kind: 'tool_call', id: 'call_b', name: 'get_time', signature: 'c2lnLWI=' } },
	{ type: 'json_delta', index: 1, json: '' },
	{ type: 'block_stop', index: 1 },
	{ type: 'usage', usage: { input: 40, output: 12, cacheRead: 0, cacheWrite: 0, reasoning: 0 } },
	{ type: 'finish', reason: 'tool_use' },
]

const encode = async (events: StreamEvent[]) => collect(encodeStream(fromArray(events), ctx))

/** The official SDK, reading our frames through a custom fetch. */
const sdkFor = (body: () => Response) => new GoogleGenAI({ apiKey: 'test-key', httpOptions: { fetch: async () => body() } })

describe('gemini encodeStream', () => {
	it('should emit one Gemini chunk per content event and usage with the finishReason chunk', async () => {
		const frames = await encode(textTurn)
		const chunks = frames.map((f) => JSON.parse(f.data))
		expect(frames.every((f) => f.event === undefined)).toBe(true)
		expect(chunks.map((c) => c.candidates[0].content.parts)).toEqual([
			// Claude's signature, with its origin tag (protocols/gemini/signatures.ts), on the last chunk of its thinking.
			[{ text: 'Let me think.', thought: true, thoughtSignature: tagSignature('anthropic', 'c2lnLWE=') }],
			[{ text: 'Hello' }],
			[{ text: ' there' }],
			[{ text: '' }],
		])
		expect(chunks.every((c) => c.responseId === 'msg_1' && c.modelVersion === 'my-model')).toBe(true)
		const last = chunks.at(-1)
		expect(last.candidates[0].finishReason).toBe('STOP')
		expect(last.usageMetadata).toEqual({ promptTokenCount: 120, candidatesTokenCount: 10, thoughtsTokenCount: 5, cachedContentTokenCount: 100, totalTokenCount: 135 })
		expect(chunks.slice(0, -1).some((c) => 'usageMetadata' in c || 'finishReason' in c.candidates[0])).toBe(false)
	})

	it("should put Claude's signature on the last thought piece, never on a thought part of its own (opencode's @ai-sdk/google 3 loses it there)", async () => {
		const frames = await encode([
			{ type: 'start', id: 'msg_2', model: 'my-model' },
			{ type: 'block_start', index: 0, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 0, text: 'Let me' },
			{ type: 'ping' },
			{ type: 'thinking_delta', index: 0, text: ' think.' },
			{ type: 'signature_delta', index: 0, signature: 'c2lnLWE=' },
			{ type: 'block_stop', index: 0 },
			{ type: 'block_start', index: 1, block: { kind: 'thinking' } },
			{ type: 'thinking_delta', index: 1, text: 'Unsigned.' },
			{ type: 'block_stop', index: 1 },
			{ type: 'block_start', index: 2, block: { kind: 'tool_call', id: 'call_a', name: 'read' } },
			{ type: 'json_delta', index: 2, json: '{"filePath":"a.txt"}' },
			{ type: 'block_stop', index: 2 },
			{ type: 'finish', reason: 'tool_use' },
		])
		const parts = frames.map((f) => JSON.parse(f.data).candidates[0].content.parts)
		expect(parts.slice(0, 4)).toEqual([
			[{ text: 'Let me', thought: true }],
			[{ text: ' think.', thought: true, thoughtSignature: tagSignature('anthropic', 'c2lnLWE=') }],
			[{ text: 'Unsigned.', thought: true }],
			// Shown thinking is carried on the call too: Gemini CLI keeps no thought part in its history.
			[
				{
					functionCall: { id: 'call_a', name: 'read', args: { filePath: 'a.txt' } },
					thoughtSignature: carryThinking([
						{ at: 0, part: { type: 'thinking', text: 'Let me think.', signature: 'c2lnLWE=' } },
						{ at: 0, part: { type: 'thinking', text: 'Unsigned.' } },
					]),
				},
			],
		])
	})

	it('should send each tool call whole, once its block closes, and parallel calls in one chunk as Gemini does', async () => {
		const chunks = (await encode(toolTurn)).map((f) => JSON.parse(f.data))
		expect(chunks.map((c) => c.candidates[0].content.parts)).toEqual([
			[
				// The first call of an answer Gemini did not make carries the documented placeholder.
				{ functionCall: { id: 'call_a', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SKIP_SIGNATURE },
				{ functionCall: { id: 'call_b', name: 'get_time', args: {} }, thoughtSignature: 'c2lnLWI=' },
			],
			[{ text: '' }],
		])
	})

	it('should send calls held so far before anything else that follows them', async () => {
		const call = (index: number, id: string): StreamEvent[] => [
			{ type: 'block_start', index, block: { kind: 'tool_call', id, name: 'f' } },
			{ type: 'json_delta', index, json: '{}' },
			{ type: 'block_stop', index },
		]
		const frames = await encode([
			{ type: 'start', id: 'x', model: 'm' },
			...call(0, 'a'),
			{ type: 'block_start', index: 1, block: { kind: 'text' } },
			{ type: 'text_delta', index: 1, text: 'between' },
			{ type: 'block_stop', index: 1 },
			...call(2, 'b'),
			{ type: 'error', error: new GatewayError('overloaded', 'try later') },
		])
		expect(frames.map((f) => JSON.parse(f.data)).map((c) => c.error?.status ?? c.candidates[0].content.parts.map((p: { functionCall?: { id: string }; text?: string }) => p.functionCall?.id ?? p.text))).toEqual([
			['a'],
			['between'],
			['b'],
			'UNAVAILABLE',
		])
	})

	it('should carry redacted thinking as a marked thought signature, and ignore pings', async () => {
		const frames = await encode([
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'ping' },
			{ type: 'block_start', index: 0, block: { kind: 'redacted_thinking', data: 'ZW5j' } },
			{ type: 'block_stop', index: 0 },
			{ type: 'finish', reason: 'end_turn' },
		])
		expect(frames.map((f) => JSON.parse(f.data).candidates[0].content.parts)).toEqual([
			[{ text: '', thought: true, thoughtSignature: `${REDACTED_PREFIX}ZW5j` }],
			[{ text: '' }],
		])
	})

	it('should end with an error frame that Google SDKs recognise', async () => {
		const frames = await encode([
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'error', error: new GatewayError('overloaded', 'try later') },
			{ type: 'finish', reason: 'end_turn' },
		])
		expect(frames).toHaveLength(1)
		expect(JSON.parse(frames[0].data)).toEqual({ error: { code: 503, message: 'try later', status: 'UNAVAILABLE' } })
	})

	it('should be parsed by the official @google/genai SDK: text, thoughts and usage', async () => {
		const frames = await encode(textTurn)
		const ai = sdkFor(() => sseResponse(frames))
		let text = ''
		let thoughts = ''
		let usage: unknown
		let finish: unknown
		for await (const chunk of await ai.models.generateContentStream({ model: 'my-model', contents: 'hi' })) {
			for (const p of chunk.candidates?.[0]?.content?.parts ?? []) {
				if (p.thought) thoughts += p.text ?? ''
				else text += p.text ?? ''
			}
			if (chunk.usageMetadata) usage = chunk.usageMetadata
			if (chunk.candidates?.[0]?.finishReason) finish = chunk.candidates[0].finishReason
		}
		expect(text).toBe('Hello there')
		expect(thoughts).toBe('Let me think.')
		expect(finish).toBe('STOP')
		expect(usage).toMatchObject({ promptTokenCount: 120, candidatesTokenCount: 10, thoughtsTokenCount: 5, totalTokenCount: 135 })
	})

	it('should be parsed by the official @google/genai SDK: function calls with ids and signatures', async () => {
		const frames = await encode(toolTurn)
		const ai = sdkFor(() => sseResponse(frames))
		const calls: unknown[] = []
		const signatures: unknown[] = []
		for await (const chunk of await ai.models.generateContentStream({ model: 'my-model', contents: 'hi' })) {
			calls.push(...(chunk.functionCalls ?? []))
			for (const p of chunk.candidates?.[0]?.content?.parts ?? []) if (p.functionCall) signatures.push(p.thoughtSignature)
		}
		expect(calls).toEqual([
			{ id: 'call_a', name: 'get_weather', args: { city: 'Paris' } },
			{ id: 'call_b', name: 'get_time', args: {} },
		])
		expect(signatures).toEqual([SKIP_SIGNATURE, 'c2lnLWI='])
	})

	it('should make the official SDK throw on the mid-stream error frame', async () => {
		const frames = await encode([
			{ type: 'start', id: 'x', model: 'm' },
			{ type: 'block_start', index: 0, block: { kind: 'text' } },
			{ type: 'text_delta', index: 0, text: 'partial' },
			{ type: 'error', error: new GatewayError('rate_limit', 'slow down') },
		])
		const ai = sdkFor(() => sseResponse(frames))
		let text = ''
		let caught: unknown
		try {
			for await (const chunk of await ai.models.generateContentStream({ model: 'm', contents: 'hi' })) text += chunk.text ?? ''
		} catch (e) {
			caught = e
		}
		expect(text).toBe('partial')
		expect(String(caught)).toContain('slow down')
	})

	it('should be read by the official SDK in non-streaming form too', async () => {
		const res: ChatResponse = {
			id: 'r1',
			model: 'x',
			content: [
				{ type: 'text', text: 'Hi!' },
				{ type: 'tool_call', id: 'c1', name: 'f', input: { q: 1 } },
			],
			stopReason: 'tool_use',
			usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
		}
		const ai = sdkFor(() => Response.json(encodeResponse(res, ctx)))
		const out = await ai.models.generateContent({ model: 'my-model', contents: 'hi' })
		expect(out.candidates?.[0]?.content?.parts?.[0]?.text).toBe('Hi!')
		expect(out.functionCalls).toEqual([{ id: 'c1', name: 'f', args: { q: 1 } }])
		expect(out.usageMetadata?.totalTokenCount).toBe(7)
		expect(out.responseId).toBe('r1')
	})

	it('should reproduce the upstream fixtures through decode → encode → SDK', async () => {
		for (const name of ['text.sse', 'thinking.sse', 'parallel-tools.sse', 'tool-stop-later.sse', 'usage-cache.sse']) {
			const events = await collect(decodeStream(fixtureFrames(name)))
			const frames = await collect(encodeStream(fromArray(events), ctx))
			const ai = sdkFor(() => sseResponse(frames))
			let finish: unknown
			for await (const chunk of await ai.models.generateContentStream({ model: 'm', contents: 'x' }))
				finish = chunk.candidates?.[0]?.finishReason ?? finish
			expect(finish).toBe('STOP')
		}
	})
})
