import { describe, expect, it } from 'bun:test'
import { asksEncrypted, forClient } from '../../../src/modules/responses/socket-events'

describe('Responses socket: encrypted reasoning asked for and stripped', () => {
	it('should ask for a store: false response of a model that reasons, by its name, a router\'s name for it, or what the channel sends upstream', () => {
		expect(asksEncrypted({ model: 'o4-mini', store: false })).toBe(true)
		expect(asksEncrypted({ model: 'openai/gpt-5', store: false })).toBe(true)
		expect(asksEncrypted({ model: 'fast-thinker', store: false }, ['o4-mini'])).toBe(true)
		expect(asksEncrypted({ model: 'fast-thinker', store: false }, ['gpt-4o-mini'])).toBe(false)
		// gpt-5-chat does not reason.
		expect(asksEncrypted({ model: 'gpt-5-chat-latest', store: false })).toBe(false)
		expect(asksEncrypted({ model: 'gpt-4o', store: false, reasoning: { effort: 'low' } })).toBe(true)
		expect(asksEncrypted({ model: 'gpt-5.1', store: false, reasoning: { effort: 'none' } })).toBe(false)
		expect(asksEncrypted({ model: 'o4-mini' })).toBe(false)
		expect(asksEncrypted({ model: 'o4-mini', store: false, include: ['reasoning.encrypted_content'] })).toBe(false)
	})

	it('should strip OpenAI\'s encrypted reasoning from every event that carries a reasoning item, and leave other vendors\' marks', () => {
		const rs = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' }
		const response = { id: 'resp_1', object: 'response', status: 'completed', output: [rs, { type: 'message', role: 'assistant', content: [] }] }
		for (const event of [
			{ type: 'response.output_item.added', output_index: 0, item: rs },
			{ type: 'response.output_item.done', output_index: 0, item: rs },
			{ type: 'response.completed', response },
			{ type: 'response.incomplete', response: { ...response, status: 'incomplete' } },
		])
			expect(forClient(JSON.stringify(event), undefined, true)).not.toContain('encrypted_content')
		expect(forClient(JSON.stringify({ type: 'response.output_item.done', item: rs }), undefined, false)).toContain('gAAAA')
	})
})
