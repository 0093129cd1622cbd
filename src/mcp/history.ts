/**
 * The request as the model behind the loop must see it. MCP calls of earlier turns, which an Anthropic client sends
 * back as `mcp_tool_use` / `mcp_tool_result` blocks inside an assistant message (kept verbatim by the codec, see
 * protocols/anthropic-messages/extra.ts), become ordinary tool calls and results: the assistant turn is split at each
 * run of results, `[text, use A, result A, text]` → assistant `[text, call A]`, user `[result A]`, assistant `[text]`,
 * which every vendor accepts (each call answered in the very next user turn, WIRE-NOTES wire §9). A call without its
 * result in the same message, or a result without its call, is dropped (vendors refuse unpaired ones). The MCP fields
 * (`mcp_servers`, toolsets) leave the request so no vendor receives them.
 * @module
 */
import type { ChatRequest, Message, Part } from '../core/ir'
import { unpackToolCallId } from '../core/tool-ids'
import { isObject, type Json } from '../protocols/anthropic-messages/check'
import { type AnthropicExtra, PROTOCOL as ANTHROPIC, reinsert, storedAt } from '../protocols/anthropic-messages/extra'
import { decodeMcpResultContent } from '../protocols/anthropic-messages/mcp-blocks'
import type { ToolNames } from './tools'

type Item = Part | { stored: Json }

const str = (v: unknown) => (typeof v === 'string' ? v : '')
const isMcpBlock = (b: Json) => b.type === 'mcp_tool_use' || b.type === 'mcp_tool_result'

/** One assistant message with MCP blocks → messages in the order the model needs them. */
function splitTurn(items: Item[], names: ToolNames): Message[] {
	const answered = new Set(items.flatMap((x) => ('stored' in x && x.stored.type === 'mcp_tool_result' ? [unpackToolCallId(str(x.stored.tool_use_id)).id] : [])))
	const called = new Map<string, string>()
	const out: Message[] = []
	const push = (role: Message['role'], p: Part) => {
		const last = out[out.length - 1]
		if (last?.role === role) last.content.push(p)
		else out.push({ role, content: [p] })
	}
	for (const x of items) {
		if (!('stored' in x)) {
			push('assistant', x)
			continue
		}
		const b = x.stored
		if (b.type === 'mcp_tool_use') {
			const { id, signature } = unpackToolCallId(str(b.id))
			if (!answered.has(id)) continue
			const name = names.nameOf(str(b.server_name), str(b.name))
			called.set(id, name)
			const input = isObject(b.input) ? b.input : {}
			push('assistant', { type: 'tool_call', id, name, input, ...(signature && { signature }) })
		} else if (b.type === 'mcp_tool_result') {
			const { id } = unpackToolCallId(str(b.tool_use_id))
			const name = called.get(id)
			if (!name) continue
			push('user', { type: 'tool_result', toolCallId: id, name, content: decodeMcpResultContent(b.content), ...(b.is_error === true && { isError: true }) })
		}
		// Other stored blocks have no form at a non-Anthropic vendor; their encoders drop them as well.
	}
	return out
}

/** Removes the MCP fields from `extra`, and the stored blocks whose positions the split made stale. */
function cleanExtra(extra: Record<string, unknown> | undefined, split: boolean): Record<string, unknown> | undefined {
	if (!extra) return extra
	const { mcp_servers: _servers, ...rest } = extra
	if (rest.__protocol !== ANTHROPIC) return rest
	const a = rest as AnthropicExtra
	if (a.__tools) a.__tools = a.__tools.filter((t) => t.tool.type !== 'mcp_toolset')
	if (split) delete a.__blocks
	return a
}

/** The request with earlier MCP calls as tool calls and without MCP fields (the caller's tools stay as they are). */
export function modelView(ir: ChatRequest, names: ToolNames): ChatRequest {
	const extra = ir.extra?.__protocol === ANTHROPIC ? (ir.extra as AnthropicExtra) : undefined
	const messages: Message[] = []
	let split = false
	let afterSplit = false
	ir.messages.forEach((m, mi) => {
		const stored = storedAt(extra, [mi])
		if (m.role !== 'assistant' || !stored.some((s) => isMcpBlock(s.block))) {
			const last = messages[messages.length - 1]
			// Results of a split turn come first in the user turn after it (tool results lead a user turn).
			if (afterSplit && m.role === 'user' && last?.role === 'user') last.content.push(...m.content)
			else messages.push({ ...m, content: m.content.slice() })
			afterSplit = false
			return
		}
		split = afterSplit = true
		const items = reinsert<Item>(m.content, stored.map((s) => ({ at: s.at, block: { stored: s.block } })))
		messages.push(...splitTurn(items, names))
	})
	return { ...ir, messages, extra: cleanExtra(ir.extra, split) }
}
