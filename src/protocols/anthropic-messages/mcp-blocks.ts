/**
 * MCP connector blocks ⇄ canonical parts (https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector):
 * `mcp_tool_use {id, name, server_name, input}` and `mcp_tool_result {tool_use_id, is_error, content}`, where
 * `content` is a string or a list of text blocks. In a stream, `mcp_tool_use` starts with `input: {}` and grows by
 * `input_json_delta` like `tool_use`; `mcp_tool_result` arrives whole in `content_block_start`.
 * @module
 */
import type { McpToolResultPart, McpToolUsePart, TextPart } from '../../core/ir'
import { isObject, type Json } from './check'

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** Text of an `mcp_tool_result.content`: a string, or the text blocks of a list. */
export function decodeMcpResultContent(content: unknown): TextPart[] {
	if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : []
	if (!Array.isArray(content)) return []
	return content.filter((b): b is Json => isObject(b) && b.type === 'text' && typeof b.text === 'string').map((b) => ({ type: 'text', text: str(b.text) }))
}

/** An upstream MCP block → canonical part; undefined for any other block. */
export function decodeMcpBlock(b: Json): McpToolUsePart | McpToolResultPart | undefined {
	if (b.type === 'mcp_tool_use')
		return { type: 'mcp_tool_use', id: str(b.id), serverName: str(b.server_name), name: str(b.name), input: isObject(b.input) ? b.input : {} }
	if (b.type === 'mcp_tool_result')
		return { type: 'mcp_tool_result', toolUseId: str(b.tool_use_id), isError: b.is_error === true, content: decodeMcpResultContent(b.content) }
	return undefined
}

/** `mcp_tool_use` as a response block (`input` whole) or as a stream's `content_block_start` (`input: {}`). */
export const encodeMcpToolUse = (p: { id: string; name: string; serverName: string }, input: Record<string, unknown>): Json => ({
	type: 'mcp_tool_use',
	id: p.id,
	name: p.name,
	server_name: p.serverName,
	input,
})

/** `mcp_tool_result` block, the same in a response and in a stream's `content_block_start`. */
export const encodeMcpToolResult = (p: { toolUseId: string; isError: boolean; content: TextPart[] }): Json => ({
	type: 'mcp_tool_result',
	tool_use_id: p.toolUseId,
	is_error: p.isError,
	content: p.content.map((c) => ({ type: 'text', text: c.text })),
})
