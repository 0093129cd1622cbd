import { describe, expect, it } from 'bun:test'
import { decodeInput } from '../../../../src/protocols/openai-responses/items'
import { readingOrder, unpairedTools } from '../../../../src/protocols/openai-responses/tool-pairing'

const user = (text: string) => ({ role: 'user', content: text })
const message = (input: unknown[]) => unpairedTools({ model: 'm', input })?.message

describe('Responses call/output pairing', () => {
	it('should take a string input, outputs before their calls, and interleaved parallel calls with their packed ids', () => {
		expect(unpairedTools({ model: 'm', input: 'hi' })).toBeUndefined()
		expect(message([user('a'), { type: 'function_call_output', call_id: 'c1', output: 'x' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, user('b')])).toBeUndefined()
		const calls = [
			{ type: 'function_call', call_id: 'toolu_1', name: 'f', arguments: '{}' },
			{ type: 'function_call_output', call_id: 'toolu_1', output: 'x' },
			{ type: 'function_call', call_id: 'sbp_toolu_2', name: 'f', arguments: '{}' },
			{ type: 'function_call_output', call_id: 'sbp_toolu_2', output: 'y' },
		]
		expect(message([user('a'), ...calls, user('b')])).toBeUndefined()
	})
	it('should pair the typed calls with their outputs, a local shell call also with a function output', () => {
		const shell = { type: 'shell_call', call_id: 's1', action: { commands: ['ls'] } }
		expect(message([user('a'), shell, { type: 'shell_call_output', call_id: 's1', output: [] }, user('b')])).toBeUndefined()
		expect(message([user('a'), shell, user('b')])).toBe('No tool output found for shell call s1.')
		const local = { type: 'local_shell_call', call_id: 'l1', action: { type: 'exec', command: ['ls'] } }
		expect(message([user('a'), local, { type: 'function_call_output', call_id: 'l1', output: '{}' }, user('b')])).toBeUndefined()
		expect(message([user('a'), local, user('b')])).toBe('No tool output found for function call l1.')
		// OpenAI's reference names the call a local_shell_call_output answers `id`.
		expect(message([user('a'), local, { type: 'local_shell_call_output', id: 'l1', output: '{}' }, user('b')])).toBeUndefined()
		expect(message([user('a'), { type: 'apply_patch_call_output', call_id: 'p1', status: 'completed' }])).toBe('No tool call found for apply patch call output with call_id p1.')
	})
	it('should leave the calls of the last step, with their reasoning, to the vendor', () => {
		const reasoning = { type: 'reasoning', summary: [] }
		expect(message([user('a'), reasoning, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call', call_id: 'c2', name: 'f', arguments: '{}' }])).toBeUndefined()
		expect(message([user('a'), { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'message', role: 'assistant', content: 'ok' }])).toBe('No tool output found for function call c1.')
	})
	it('should name an output answering no call before a call no output answers, as OpenAI does', () => {
		const input = [user('a'), { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, user('b'), { type: 'custom_tool_call_output', call_id: 'c9', output: 'x' }]
		expect(message(input)).toBe('No tool call found for custom tool call output with call_id c9.')
		expect(unpairedTools({ model: 'm', input })?.param).toBe('input')
	})
})

describe('Responses reading order', () => {
	const call = (id: string) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' })
	const out = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'x' })
	it('should keep an input in order when every output follows its call', () => {
		expect(readingOrder([user('a'), call('c1'), out('c1'), user('b')])).toEqual([0, 1, 2, 3])
	})
	it("should read an output given first after the run of calls holding its call, in the outputs' own order", () => {
		expect(readingOrder([user('a'), out('c2'), out('c1'), call('c1'), call('c2'), user('b')])).toEqual([0, 3, 4, 1, 2, 5])
		// A call ending the input: its output still goes after it.
		expect(readingOrder([user('a'), out('c1'), call('c1')])).toEqual([0, 2, 1])
	})
	it('should convert such an input with each result after its call, naming the client’s own indices in errors', () => {
		const { messages } = decodeInput([user('a'), out('c2'), out('c1'), call('c1'), call('c2'), user('b')])
		expect(messages.map((m) => [m.role, m.content.map((p) => p.type)])).toEqual([
			['user', ['text']],
			['assistant', ['tool_call', 'tool_call']],
			['user', ['tool_result', 'tool_result', 'text']],
		])
		expect(() => decodeInput([user('a'), { type: 'function_call_output', output: 'x' }, call('c1')])).toThrow('input[1].call_id')
	})
})
