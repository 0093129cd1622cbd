import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import type { StreamEvent } from '../../../src/core/events'
import { type ChatResponse, emptyUsage } from '../../../src/core/ir'
import type { SseFrame } from '../../../src/core/sse'
import type { ChoiceEvent } from '../../../src/protocols/codec'
import { gemini } from '../../../src/protocols/gemini'
import { openaiChat } from '../../../src/protocols/openai-chat'

/** A whole answer's events. */
const answerEvents = (text: string, id = 'msg_1'): StreamEvent[] => [
	{ type: 'start', id, model: 'claude' },
	{ type: 'block_start', index: 0, block: { kind: 'text' } },
	{ type: 'text_delta', index: 0, text },
	{ type: 'block_stop', index: 0 },
	{ type: 'finish', reason: 'end_turn' },
]

const tag = (choice: number, events: StreamEvent[]): ChoiceEvent[] => events.map((event) => ({ choice, event }))

/** Runs choice events through a choices encoder, then ends it. */
function encode(codec: typeof openaiChat | typeof gemini, n: number, events: ChoiceEvent[], includeUsage = false): SseFrame[] {
	const enc = codec.choicesEncoder({ model: 'm', includeUsage }, n)
	const out: SseFrame[] = []
	for (const e of events) enc.push(e, out)
	enc.end(out)
	return out
}

const json = (frames: SseFrame[]) => frames.filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data))

describe('OpenAI choices encoder', () => {
	it('should name each chunk by its choice, under one id, then one usage chunk and one [DONE]', () => {
		const a = tag(0, answerEvents('zero', 'msg_a'))
		const b = tag(1, answerEvents('one', 'msg_b'))
		// Interleaved: both start, then their text and ends alternate.
		const events = [a[0]!, b[0]!, a[1]!, b[1]!, a[2]!, b[2]!, { choice: 0, event: { type: 'usage', usage: { input: 6, output: 4 } } } as ChoiceEvent, ...a.slice(3), ...b.slice(3)]
		const frames = encode(openaiChat, 2, events, true)
		expect(frames.filter((f) => f.data === '[DONE]')).toHaveLength(1)
		expect(frames.at(-1)!.data).toBe('[DONE]')
		const chunks = json(frames)
		expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
		const text = ['', '']
		for (const c of chunks) for (const ch of c.choices) text[ch.index] += ch.delta.content ?? ''
		expect(text).toEqual(['zero', 'one'])
		expect(chunks.flatMap((c) => c.choices.filter((ch: { finish_reason: unknown }) => ch.finish_reason).map((ch: { index: number; finish_reason: string }) => [ch.index, ch.finish_reason]))).toEqual([
			[0, 'stop'],
			[1, 'stop'],
		])
		const usage = chunks.filter((c) => c.usage)
		expect(usage).toHaveLength(1)
		expect(usage[0].usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4 })
	})

	it('should end with an error and no [DONE] when an answer did not finish', () => {
		const frames = encode(openaiChat, 2, [...tag(0, answerEvents('zero')), ...tag(1, answerEvents('one').slice(0, 3))])
		expect(frames.some((f) => f.data === '[DONE]')).toBe(false)
		expect(JSON.parse(frames.at(-1)!.data).error).toBeTruthy()
	})

	it('should end at the first error, ignoring what follows', () => {
		const enc = openaiChat.choicesEncoder({ model: 'm' }, 2)
		const out: SseFrame[] = []
		for (const e of tag(0, answerEvents('zero').slice(0, 3))) enc.push(e, out)
		enc.push({ choice: 1, event: { type: 'start', id: 'x', model: '' } }, out)
		enc.push({ choice: 1, event: { type: 'error', error: new GatewayError('overloaded', 'Overloaded') } }, out)
		expect(enc.done).toBe(true)
		const before = out.length
		for (const e of tag(0, answerEvents('zero').slice(3))) enc.push(e, out)
		enc.end(out)
		expect(out.length).toBe(before)
		expect(JSON.parse(out.at(-1)!.data).error.message).toBe('Overloaded')
	})

	it('should merge whole answers into choices by index with the whole usage', () => {
		const res = (text: string): ChatResponse => ({ id: 'msg_x', model: 'c', content: [{ type: 'text', text }], stopReason: 'end_turn', usage: { ...emptyUsage(), input: 3, output: 2 } })
		const body = openaiChat.encodeChoices(
			[res('a'), res('b'), { ...res('c'), stopReason: 'max_tokens' }],
			{ ...emptyUsage(), input: 9, output: 6 },
			{ model: 'm' },
		)
		expect(body.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
			[0, 'a', 'stop'],
			[1, 'b', 'stop'],
			[2, 'c', 'length'],
		])
		expect(body.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 })
	})
})

describe('Gemini choices encoder', () => {
	it('should give each candidate its index and the last finish chunk the whole usage', () => {
		const events = [...tag(0, answerEvents('zero')), { choice: 1, event: { type: 'usage', usage: { input: 4, output: 3 } } } as ChoiceEvent, ...tag(1, answerEvents('one'))]
		const chunks = json(encode(gemini, 2, events))
		expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1)
		const text = ['', '']
		for (const c of chunks) for (const k of c.candidates) text[k.index] += k.content.parts.map((p: { text?: string }) => p.text ?? '').join('')
		expect(text).toEqual(['zero', 'one'])
		expect(chunks.at(-1).candidates[0]).toMatchObject({ index: 1, finishReason: 'STOP' })
		expect(chunks.at(-1).usageMetadata).toMatchObject({ promptTokenCount: 4, candidatesTokenCount: 3 })
	})
})

describe('reading one of several answers', () => {
	it('should read an OpenAI choice by index, and refuse one the body lacks', () => {
		const body = {
			id: 'chatcmpl-1',
			model: 'gpt',
			choices: [
				{ index: 1, message: { role: 'assistant', content: 'one' }, finish_reason: 'length' },
				{ index: 0, message: { role: 'assistant', content: 'zero' }, finish_reason: 'stop' },
			],
			usage: { prompt_tokens: 2, completion_tokens: 4 },
		}
		expect(openaiChat.decodeResponse(body, 1)).toMatchObject({ content: [{ type: 'text', text: 'one' }], stopReason: 'max_tokens' })
		expect(openaiChat.decodeResponse(body)).toMatchObject({ content: [{ type: 'text', text: 'zero' }], stopReason: 'end_turn' })
		expect(() => openaiChat.decodeResponse(body, 2)).toThrow('no choice 2')
	})

	it('should stream one OpenAI choice, and fail a choice the stream never had', () => {
		const frames: SseFrame[] = [
			{ data: JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { role: 'assistant', content: 'zero' }, finish_reason: null }] }) },
			{ data: JSON.stringify({ id: 'c', choices: [{ index: 1, delta: { role: 'assistant', content: 'one' }, finish_reason: null }] }) },
			{ data: JSON.stringify({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) },
			{ data: JSON.stringify({ id: 'c', choices: [{ index: 1, delta: {}, finish_reason: 'length' }] }) },
			{ data: JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 2, completion_tokens: 2 } }) },
			{ data: '[DONE]' },
		]
		const run = (choice: number) => {
			const d = openaiChat.streamDecoder(choice)
			const out: StreamEvent[] = []
			for (const f of frames) d.push(f, out)
			d.end(out)
			return out
		}
		const one = run(1)
		expect(one.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text)).toEqual(['one'])
		expect(one.at(-1)).toEqual({ type: 'finish', reason: 'max_tokens' })
		expect(one.some((e) => e.type === 'usage')).toBe(true)
		expect(run(2).at(-1)!.type).toBe('error')
	})

	it('should read a Gemini candidate by index (0 when Gemini leaves it out), and refuse one the body lacks', () => {
		const body = {
			candidates: [
				{ content: { role: 'model', parts: [{ text: 'zero' }] }, finishReason: 'STOP' },
				{ content: { role: 'model', parts: [{ text: 'one' }] }, finishReason: 'MAX_TOKENS', index: 1 },
			],
			usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 4 },
		}
		expect(gemini.decodeResponse(body as never, 1)).toMatchObject({ content: [{ type: 'text', text: 'one' }], stopReason: 'max_tokens' })
		expect(gemini.decodeResponse(body as never, 0)).toMatchObject({ content: [{ type: 'text', text: 'zero' }], stopReason: 'end_turn' })
		expect(() => gemini.decodeResponse(body as never, 2)).toThrow('no candidate 2')
		const d = gemini.streamDecoder(2)
		const out: StreamEvent[] = []
		d.push({ data: JSON.stringify(body) }, out)
		d.end(out)
		expect(out.at(-1)!.type).toBe('error')
	})
})
