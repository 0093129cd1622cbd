/**
 * Reading the files Claude's code execution wrote and its container out of an answer: whole, and frame by frame as a
 * stream is relayed (each found once, only frames that can name one parsed).
 */
import { describe, expect, it } from 'bun:test'
import type { SseFrame } from '../../../../src/core/sse'
import { CodeOutputScanner, codeOutputsOf, namedContainer, offersCodeExecution } from '../../../../src/protocols/anthropic-messages/code-outputs'

const f = (data: Record<string, unknown>): SseFrame => ({ event: String(data.type), data: JSON.stringify(data) })
const bashResult = (...ids: string[]) => ({
	type: 'bash_code_execution_tool_result',
	tool_use_id: 'srvtoolu_1',
	content: { type: 'bash_code_execution_result', stdout: '', stderr: '', return_code: 0, content: ids.map((file_id) => ({ type: 'bash_code_execution_output', file_id })) },
})

describe('code execution outputs', () => {
	it('should tell a request offering the tool by its tools', () => {
		expect(offersCodeExecution({ tools: [{ type: 'web_search_20250305', name: 'web_search' }, { type: 'code_execution_20250825', name: 'code_execution' }] })).toBe(true)
		expect(offersCodeExecution({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).toBe(false)
		expect(offersCodeExecution({ tools: [{ type: 'code_execution_20250522', name: 'code_execution' }] })).toBe(true)
		expect(offersCodeExecution({ tools: [{ name: 'f', input_schema: {} }, null] })).toBe(false)
		// A body that only mentions the tool's name is not offering it.
		expect(offersCodeExecution({ messages: [{ role: 'user', content: 'what is code_execution_20250825?' }] })).toBe(false)
	})

	it('should read a named container in either form', () => {
		expect(namedContainer('container_1')).toBe('container_1')
		expect(namedContainer({ id: 'container_2', skills: [] })).toBe('container_2')
		expect(namedContainer({ skills: [{ type: 'anthropic', skill_id: 'pptx' }] })).toBeUndefined()
		expect(namedContainer(null)).toBeUndefined()
	})

	it('should read the files and container of a whole answer, skipping errors and other blocks', () => {
		const message = {
			content: [
				{ type: 'text', text: 'file_id' },
				bashResult('file_a', 'file_b'),
				{ type: 'code_execution_tool_result', tool_use_id: 'x', content: { type: 'code_execution_result', content: [{ type: 'code_execution_output', file_id: 'file_c' }] } },
				{ type: 'bash_code_execution_tool_result', tool_use_id: 'y', content: { type: 'bash_code_execution_tool_result_error', error_code: 'unavailable' } },
				{ type: 'tool_use', id: 't', name: 'f', input: { content: { content: [{ type: 'bash_code_execution_output', file_id: 'file_fake' }] } } },
			],
			container: { id: 'container_1', expires_at: '2026-01-01T00:00:00Z', skills: null },
		}
		expect(codeOutputsOf(message)).toEqual({ files: ['file_a', 'file_b', 'file_c'], container: { id: 'container_1', expires_at: '2026-01-01T00:00:00Z' } })
		expect(codeOutputsOf({ content: [], container: null })).toEqual({ files: [] })
	})

	it('should hand over what a stream named as it comes, each once', () => {
		const s = new CodeOutputScanner()
		s.onFrame(f({ type: 'message_start', message: { id: 'msg_1', container: null, content: [] } }))
		s.onFrame(f({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'bash_code_execution', input: {} } }))
		expect(s.take()).toBeUndefined()
		s.onFrame(f({ type: 'content_block_start', index: 1, content_block: bashResult('file_a') }))
		expect(s.take()).toEqual({ files: ['file_a'] })
		expect(s.take()).toBeUndefined()
		s.onFrame(f({ type: 'content_block_start', index: 2, content_block: bashResult('file_a', 'file_b') }))
		s.onFrame(f({ type: 'message_delta', delta: { stop_reason: 'end_turn', container: { id: 'container_1', expires_at: 'T' } }, usage: {} }))
		expect(s.take()).toEqual({ files: ['file_b'], container: { id: 'container_1', expires_at: 'T' } })
		s.onFrame(f({ type: 'message_delta', delta: { container: { id: 'container_1' } }, usage: {} }))
		s.onFrame({ event: 'content_block_start', data: '{"content_block":{"type":"bash_code_execution_tool_result", broken' })
		expect(s.take()).toBeUndefined()
	})
})
