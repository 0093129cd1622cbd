import { describe, expect, it } from 'bun:test'
import type { Message } from '../../../src/core/ir'
import { openaiToolCallId, packToolCallId } from '../../../src/core/tool-ids'
import { encodeMessages } from '../../../src/protocols/openai-chat/messages'

describe('openaiToolCallId', () => {
	it('should keep an id OpenAI takes and shorten a longer one the same way every time', () => {
		expect(openaiToolCallId('call_abc')).toBe('call_abc')
		const long = packToolCallId('call_1', 'a Gemini thought signature, long enough to pass the limit')
		expect(long.length).toBeGreaterThan(40)
		expect(openaiToolCallId(long).length).toBeLessThanOrEqual(40)
		expect(openaiToolCallId(long)).toBe(openaiToolCallId(long))
		expect(openaiToolCallId(long)).not.toBe(openaiToolCallId(`${long}x`))
	})

	it('should give a converted call and its result the same short id', () => {
		const messages: Message[] = [
			{ role: 'user', content: [{ type: 'text', text: 'go' }] },
			{ role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'f', input: {}, signature: 'x'.repeat(60) }] },
			{ role: 'user', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: 'ok' }] }] },
		]
		const [, assistant, tool] = encodeMessages(undefined, messages) as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>
		const id = assistant!.tool_calls![0]!.id
		expect(id.length).toBeLessThanOrEqual(40)
		expect(tool!.tool_call_id).toBe(id)
	})
})
