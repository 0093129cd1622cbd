import { describe, expect, it } from 'bun:test'
import { decodeReasoningItem, encodeReasoningItem, withoutForeignReasoning } from '../../../../src/protocols/openai-responses/reasoning'

describe('reasoning items', () => {
	it('should give unsigned thinking an encrypted_content too, which decodes back to unsigned thinking', () => {
		// Stateless clients (store: false) expect it on every reasoning item: the Vercel AI SDK dropped items without.
		const item = encodeReasoningItem({ type: 'thinking', text: 'Gemini thought' }, 'rs_1')
		expect(item.encrypted_content).toBe('sbsig:')
		expect(decodeReasoningItem(item as never, 'input[0]')).toEqual({ type: 'thinking', text: 'Gemini thought' })
	})

	it("should carry a vendor's signature through encrypted_content, and leave empty thinking without one", () => {
		const item = encodeReasoningItem({ type: 'thinking', text: 'Claude thought', signature: 'sig_1' }, 'rs_2')
		expect(decodeReasoningItem(item as never, 'input[0]')).toEqual({ type: 'thinking', text: 'Claude thought', signature: 'sig_1' })
		expect(encodeReasoningItem({ type: 'thinking', text: '' }, 'rs_3').encrypted_content).toBeUndefined()
	})
})

describe('withoutForeignReasoning', () => {
	it("should take out the gateway's reasoning items, which OpenAI cannot decrypt, and keep OpenAI's own", () => {
		const own = { type: 'reasoning', id: 'rs_openai', summary: [], encrypted_content: 'gAAAAB…' }
		const input = [
			{ role: 'user', content: 'hi' },
			encodeReasoningItem({ type: 'thinking', text: 'Claude thought', signature: 'sig_1' }, 'rs_1'),
			encodeReasoningItem({ type: 'thinking', text: 'Gemini thought' }, 'rs_2'),
			own,
			{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
		]
		expect(withoutForeignReasoning(input)).toEqual([input[0], own, input[4]])
		expect(withoutForeignReasoning([input[0], own])).toBeUndefined()
	})
})
