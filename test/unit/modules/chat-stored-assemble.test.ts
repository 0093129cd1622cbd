/**
 * A stored streamed chat completion is the object the whole answer would have been: the same canonical answer encoded
 * as chunks by the OpenAI chat stream encoder and folded back by the assembler equals what `encodeResponse` makes of it
 * (thinking with its signature, redacted thinking, text, parallel tool calls, usage); and an error chunk marks it failed.
 */
import { describe, expect, it } from 'bun:test'
import { GatewayError } from '../../../src/core/errors'
import type { ChatResponse } from '../../../src/core/ir'
import { emptyUsage } from '../../../src/core/ir'
import { responseEvents } from '../../../src/mcp/events'
import { CompletionAssembler } from '../../../src/modules/chat-stored/assemble'
import { openaiChat } from '../../../src/protocols/openai-chat'

const ctx = { model: 'qa-model', includeUsage: true }

async function assembled(res: ChatResponse): Promise<{ asm: CompletionAssembler; frames: string[] }> {
	const asm = new CompletionAssembler()
	const frames: string[] = []
	for await (const f of openaiChat.encodeStream(responseEvents(res), ctx)) {
		frames.push(f.data)
		asm.push(f.data)
	}
	return { asm, frames }
}

const answer = (content: ChatResponse['content'], stopReason: ChatResponse['stopReason']): ChatResponse => ({
	id: 'chatcmpl-abc',
	model: 'up-model',
	created: 1_700_000_000,
	content,
	stopReason,
	usage: { ...emptyUsage(), input: 12, output: 34 },
})

describe('CompletionAssembler', () => {
	it('should fold a streamed answer back into the whole completion', async () => {
		const res = answer(
			[
				{ type: 'thinking', text: 'Let me think. ', signature: 'sig-1' },
				{ type: 'redacted_thinking', data: 'opaque' },
				{ type: 'text', text: 'Calling both.' },
				{ type: 'tool_call', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
				{ type: 'tool_call', id: 'call_2', name: 'get_time', input: {} },
			],
			'tool_use',
		)
		const { asm } = await assembled(res)
		expect(asm.done).toBe(true)
		expect(asm.failed).toBe(false)
		expect(asm.completion()).toEqual(openaiChat.encodeResponse(res, ctx) as never)
	})

	it('should fold a text answer with several text blocks', async () => {
		const res = answer(
			[
				{ type: 'text', text: 'Hello ' },
				{ type: 'text', text: 'world' },
			],
			'end_turn',
		)
		expect((await assembled(res)).asm.completion()).toEqual(openaiChat.encodeResponse(res, ctx) as never)
	})

	it('should keep the choices of several answers apart, in index order', () => {
		const asm = new CompletionAssembler()
		const chunk = (index: number, delta: object, finish: string | null = null) =>
			JSON.stringify({ id: 'chatcmpl-n', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index, delta, logprobs: null, finish_reason: finish }] })
		for (const d of [chunk(1, { role: 'assistant', content: '' }), chunk(0, { role: 'assistant', content: 'a' }), chunk(1, { content: 'b' }), chunk(0, {}, 'stop'), chunk(1, {}, 'length'), '[DONE]'])
			asm.push(d)
		const c = asm.completion() as { choices: Array<{ index: number; message: { content: string }; finish_reason: string }>; usage: unknown }
		expect(c.choices.map((x) => [x.index, x.message.content, x.finish_reason])).toEqual([
			[0, 'a', 'stop'],
			[1, 'b', 'length'],
		])
		expect(c.usage).toBeNull()
	})

	it('should mark a stream that ended with an error chunk as failed', () => {
		const asm = new CompletionAssembler()
		asm.push(JSON.stringify({ id: 'chatcmpl-e', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'par' }, finish_reason: null }] }))
		asm.push(openaiChat.encodeStreamError(new GatewayError('upstream', 'boom')).data)
		expect(asm.failed).toBe(true)
		expect(asm.done).toBe(false)
	})
})
