import { describe, expect, it } from 'bun:test'
import { inputItems, itemView, toStore } from '../../../src/modules/conversations/items'

describe('conversation items', () => {
	it('should keep a Responses input in the full form a conversation lists', () => {
		expect(inputItems('hi')).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }])
		expect(
			inputItems([
				{ role: 'assistant', content: 'before' },
				{ type: 'item_reference', id: 'msg_1' },
				{ type: 'function_call_output', call_id: 'c1', output: 'ok' },
			]),
		).toEqual([
			{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'before', annotations: [] }] },
			{ type: 'function_call_output', call_id: 'c1', output: 'ok' },
		])
		expect(inputItems(undefined)).toEqual([])
	})

	it("should give an item without an id one of the gateway's, kept beside the item rather than in it", () => {
		const [given, made] = toStore([{ type: 'message', id: 'msg_client', role: 'user', content: [] }, { type: 'function_call_output', call_id: 'c', output: '' }])
		expect(given).toEqual({ itemId: 'msg_client', item: { type: 'message', id: 'msg_client', role: 'user', content: [] } })
		expect(made!.itemId).toMatch(/^fco_[A-Za-z0-9]{40}$/)
		expect(made!.item).toEqual({ type: 'function_call_output', call_id: 'c', output: '' })
	})

	it('should list an item with its id, a message status, and encrypted reasoning only when included', () => {
		expect(itemView({ itemId: 'msg_x', item: { type: 'message', role: 'user', content: [] } })).toEqual({ id: 'msg_x', type: 'message', role: 'user', content: [], status: 'completed' })
		const rs = { itemId: 'rs_1', item: { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'enc' } }
		expect(itemView(rs)).toEqual({ id: 'rs_1', type: 'reasoning', summary: [] })
		expect(itemView(rs, ['reasoning.encrypted_content'])).toEqual({ id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'enc' })
	})
})
