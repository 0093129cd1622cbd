import { describe, expect, it } from 'bun:test'
import { invalidSteer, requiredInput, steerItems, successorSettings } from '../../../src/modules/responses/steer'

describe('response.steer helpers', () => {
	it('should take a string or user messages of input parts, and nothing else', () => {
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: 'faster' })).toBeUndefined()
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x' }, { type: 'input_image', image_url: 'https://x/y.png' }] }] })).toBeUndefined()
		expect(invalidSteer({ type: 'response.steer', input: 'faster' })).toContain('previous_response_id')
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: '' })).toContain('empty')
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: [] })).toContain('non-empty')
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: 'x', stream_id: 'a' })).toContain('stream_id')
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: [{ role: 'assistant', content: 'x' }] })).toContain('user')
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: [{ type: 'function_call_output', role: 'user', call_id: 'c', output: 'x' }] })).toContain('user')
		expect(invalidSteer({ type: 'response.steer', previous_response_id: 'resp_1', input: [{ role: 'user', content: [{ type: 'output_text', text: 'x' }] }] })).toContain('content')
	})

	it('should make items of the input, each a message', () => {
		expect(steerItems('hi')).toEqual([{ type: 'message', role: 'user', content: 'hi' }])
		expect(steerItems([{ role: 'user', content: 'hi' }])).toEqual([{ type: 'message', role: 'user', content: 'hi' }])
	})

	it('should list what a finished response owes: the client tools\' calls and approvals, not its own tools\'', () => {
		expect(
			requiredInput([
				{ type: 'reasoning', id: 'rs_1', summary: [] },
				{ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
				{ type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: 'x' },
				{ type: 'tool_search_call', call_id: 'call_3', execution: 'server' },
				{ type: 'mcp_approval_request', id: 'mcpr_1', name: 'x', server_label: 'y' },
				{ type: 'web_search_call', id: 'ws_1', status: 'completed' },
			]),
		).toEqual([
			{ type: 'function_call_output', call_id: 'call_1', name: 'get_weather' },
			{ type: 'custom_tool_call_output', call_id: 'call_2' },
			{ type: 'mcp_approval_response', approval_request_id: 'mcpr_1' },
		])
		expect(requiredInput([{ type: 'message', role: 'assistant', content: [] }])).toEqual([])
	})

	it('should give a successor the steered request\'s settings, not its input or what it continued', () => {
		expect(successorSettings({ model: 'm', instructions: 'i', store: false, input: 'x', previous_response_id: 'resp_0' })).toEqual({ model: 'm', instructions: 'i', store: false })
	})
})
