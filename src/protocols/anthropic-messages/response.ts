/**
 * Non-streaming `Message` bodies ⇄ canonical responses (https://docs.anthropic.com/en/api/messages).
 * @module
 */
import type { EncodeContext } from '../codec'
import type { ChatResponse, Usage } from '../../core/ir'
import { UNSIGNED_THINKING_TAG } from '../../core/signatures'
import { unpackToolCallId } from '../../core/tool-ids'
import { newId } from '../../lib/ids'
import { isObject, type Json } from './check'
import { wireToolId } from './content-encode'
import { decodeMcpBlock, encodeMcpToolResult, encodeMcpToolUse } from './mcp-blocks'
import type { AnthropicResponse, AnthropicResponseBlock } from './model'
import { decodeCitation, decodeResults, encodeCitation, encodeSearchBlocks, queriesOf, WEB_SEARCH_NAME } from './web-search'
import { decodeStopReason, decodeUsage, encodeStopReason, encodeUsage, refusalDetails, refusalExplanation, withToolUse } from './usage'

/** Anthropic ids start with `msg_`; anything else (an OpenAI `chatcmpl-…`) gets a fresh one so clients see one format. */
export const messageId = (id: string | undefined): string => (id && id.startsWith('msg_') ? id : newId('msg_'))

/**
 * Upstream body → canonical response. A web search (server_tool_use + web_search_tool_result) is a canonical search
 * part, its citations the text's; other server-tool blocks (code execution, web fetch…) have no canonical form and are
 * left out (MCP connector blocks have one); same-protocol traffic is relayed as bytes and keeps them all.
 */
export function decodeResponse(body: AnthropicResponse): ChatResponse {
	const b: unknown = body
	const o = isObject(b) ? b : {}
	const content: ChatResponse['content'] = []
	const searches = new Map<string, string[]>() // server_tool_use id → its queries, until its results come
	for (const block of Array.isArray(o.content) ? o.content : []) {
		if (!isObject(block)) continue
		if (block.type === 'text' && typeof block.text === 'string') {
			const citations = (Array.isArray(block.citations) ? block.citations : []).map(decodeCitation).filter((c) => c !== undefined)
			content.push(citations.length ? { type: 'text', text: block.text, citations } : { type: 'text', text: block.text })
		} else if (block.type === 'server_tool_use' && block.name === WEB_SEARCH_NAME) searches.set(String(block.id), queriesOf(block.input))
		else if (block.type === 'web_search_tool_result' && searches.has(String(block.tool_use_id)))
			content.push({ type: 'web_search', id: String(block.tool_use_id), queries: searches.get(String(block.tool_use_id))!, sources: decodeResults(block.content) })
		else if (block.type === 'thinking') {
			const text = typeof block.thinking === 'string' ? block.thinking : ''
			const sig = typeof block.signature === 'string' && block.signature ? block.signature : undefined
			content.push(sig ? { type: 'thinking', text, signature: sig } : { type: 'thinking', text })
		} else if (block.type === 'redacted_thinking' && typeof block.data === 'string')
			content.push({ type: 'redacted_thinking', data: block.data })
		else if (block.type === 'tool_use') {
			const { id, signature } = unpackToolCallId(typeof block.id === 'string' ? block.id : '')
			const input = isObject(block.input) ? block.input : {}
			const name = typeof block.name === 'string' ? block.name : ''
			content.push(signature ? { type: 'tool_call', id, name, input, signature } : { type: 'tool_call', id, name, input })
		} else {
			const mcp = decodeMcpBlock(block)
			if (mcp) content.push(mcp)
		}
	}
	const sawTool = content.some((p) => p.type === 'tool_call')
	const res: ChatResponse = {
		id: typeof o.id === 'string' ? o.id : '',
		model: typeof o.model === 'string' ? o.model : '',
		content,
		stopReason: decodeStopReason(o.stop_reason, sawTool),
		usage: decodeUsage(o.usage),
	}
	if (typeof o.stop_sequence === 'string') res.stopSequence = o.stop_sequence
	const explanation = refusalExplanation(o.stop_details)
	if (explanation) res.refusal = explanation
	return res
}

/**
 * Canonical response → client `Message`. Tool-call ids carry any Gemini signature (core/tool-ids.ts); thinking no
 * vendor signed carries `UNSIGNED_THINKING_TAG` (core/signatures.ts). MCP parts
 * (the gateway's MCP loop, src/mcp) become `mcp_tool_use` / `mcp_tool_result` blocks; the response schema
 * (model.ts) does not list those, hence the widened element type.
 */
export function encodeResponse(res: ChatResponse, ctx: EncodeContext): AnthropicResponse {
	const content: Array<AnthropicResponseBlock | Json> = []
	for (const p of res.content) {
		if (p.type === 'text') {
			if (p.text !== '') content.push(p.citations?.length ? { type: 'text', text: p.text, citations: p.citations.map(encodeCitation) } : { type: 'text', text: p.text })
		} else if (p.type === 'web_search') content.push(...encodeSearchBlocks(p))
		else if (p.type === 'thinking') content.push({ type: 'thinking', thinking: p.text, signature: p.signature || UNSIGNED_THINKING_TAG })
		else if (p.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: p.data })
		else if (p.type === 'tool_call') content.push({ type: 'tool_use', id: wireToolId(p.id, p.signature), name: p.name, input: p.input })
		else if (p.type === 'mcp_tool_use') content.push(encodeMcpToolUse(p, p.input))
		else if (p.type === 'mcp_tool_result') content.push(encodeMcpToolResult(p))
	}
	const sawTool = content.some((b) => b.type === 'tool_use')
	const stop = sawTool ? withToolUse(res.stopReason) : res.stopReason
	const details = refusalDetails(stop)
	return {
		id: messageId(res.id),
		type: 'message',
		role: 'assistant',
		model: ctx.model,
		content: content as AnthropicResponseBlock[],
		stop_reason: encodeStopReason(stop),
		stop_sequence: stop === 'stop_sequence' ? (res.stopSequence ?? null) : null,
		...(details && { stop_details: details }),
		usage: encodeUsage(res.usage),
	}
}

/** Usage of an upstream `Message` body, without a full decode (same-protocol fast path billing). */
export function usageOf(body: AnthropicResponse): Usage | undefined {
	const b: unknown = body
	return isObject(b) && isObject(b.usage) ? decodeUsage(b.usage) : undefined
}
