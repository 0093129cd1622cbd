import { describe, expect, it } from 'bun:test'
import { continuedIds, createdResponseId } from '../../../src/modules/responses/ownership'

describe('continuedIds', () => {
	it('should read previous_response_id and conversation as a string or {id}', () => {
		expect(continuedIds({ input: 'x' })).toEqual([])
		expect(continuedIds({ previous_response_id: 'resp_1' })).toEqual([{ id: 'resp_1', param: 'previous_response_id' }])
		expect(continuedIds({ conversation: 'conv_1' })).toEqual([{ id: 'conv_1', param: 'conversation' }])
		expect(continuedIds({ previous_response_id: 'resp_1', conversation: { id: 'conv_2' } })).toEqual([
			{ id: 'resp_1', param: 'previous_response_id' },
			{ id: 'conv_2', param: 'conversation' },
		])
		expect(continuedIds({ previous_response_id: null, conversation: { id: 3 } })).toEqual([])
	})
})

describe('createdResponseId', () => {
	it('should take the id of response.created only', () => {
		const created = { event: 'response.created', data: JSON.stringify({ type: 'response.created', response: { id: 'resp_9' } }) }
		expect(createdResponseId(created)).toBe('resp_9')
		expect(createdResponseId({ data: created.data })).toBe('resp_9')
		expect(createdResponseId({ event: 'response.in_progress', data: JSON.stringify({ type: 'response.in_progress', response: { id: 'resp_9' } }) })).toBeUndefined()
		expect(createdResponseId({ data: 'not json' })).toBeUndefined()
	})
})
