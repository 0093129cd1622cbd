/**
 * The MCP loop works on canonical events in both modes, so one code path serves streams and whole answers: a whole
 * upstream answer is replayed as the events a stream of it would have carried, and the loop's events are folded back
 * into one canonical response for a client that did not stream.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import { type ChatResponse, emptyUsage, type Usage } from '../core/ir'

/** A whole canonical response as stream events (start, one block per part, usage, finish). */
export async function* responseEvents(res: ChatResponse): AsyncGenerator<StreamEvent> {
	yield { type: 'start', id: res.id, model: res.model, ...(res.created !== undefined && { created: res.created }) }
	let index = 0
	for (const p of res.content) {
		const i = index++
		switch (p.type) {
			case 'text':
				yield { type: 'block_start', index: i, block: { kind: 'text' } }
				for (const citation of p.citations ?? []) yield { type: 'citation', index: i, citation }
				yield { type: 'text_delta', index: i, text: p.text }
				break
			case 'web_search':
				yield { type: 'block_start', index: i, block: { kind: 'web_search', id: p.id, queries: p.queries, sources: p.sources } }
				break
			case 'thinking':
				yield { type: 'block_start', index: i, block: { kind: 'thinking' } }
				if (p.text) yield { type: 'thinking_delta', index: i, text: p.text }
				if (p.signature) yield { type: 'signature_delta', index: i, signature: p.signature }
				break
			case 'redacted_thinking':
				yield { type: 'block_start', index: i, block: { kind: 'redacted_thinking', data: p.data } }
				break
			case 'tool_call':
				yield { type: 'block_start', index: i, block: { kind: 'tool_call', id: p.id, name: p.name, ...(p.signature && { signature: p.signature }) } }
				yield { type: 'json_delta', index: i, json: JSON.stringify(p.input) }
				break
			case 'mcp_tool_use':
				yield { type: 'block_start', index: i, block: { kind: 'mcp_tool_use', id: p.id, name: p.name, serverName: p.serverName } }
				yield { type: 'json_delta', index: i, json: JSON.stringify(p.input) }
				break
			case 'mcp_tool_result':
				yield { type: 'block_start', index: i, block: { kind: 'mcp_tool_result', toolUseId: p.toolUseId, isError: p.isError, content: p.content } }
				break
		}
		yield { type: 'block_stop', index: i }
	}
	yield { type: 'usage', usage: res.usage }
	yield res.stopSequence !== undefined ? { type: 'finish', reason: res.stopReason, stopSequence: res.stopSequence } : { type: 'finish', reason: res.stopReason }
}

const parseInput = (json: string): Record<string, unknown> => {
	try {
		const v: unknown = JSON.parse(json || '{}')
		return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
	} catch {
		return {} // WIRE-NOTES wire §8: arguments may be invalid JSON
	}
}

/**
 * Folds events into one canonical response.
 * @throws the GatewayError of an `error` event, or when the events end without `finish`
 */
export async function collectResponse(events: AsyncIterable<StreamEvent>, model: string): Promise<ChatResponse> {
	const res: ChatResponse = { id: '', model, content: [], stopReason: 'end_turn', usage: emptyUsage() }
	const json = new Map<number, string>()
	const at = new Map<number, ChatResponse['content'][number]>()
	let finished = false
	for await (const e of events) {
		switch (e.type) {
			case 'start':
				res.id = e.id
				if (e.created !== undefined) res.created = e.created
				break
			case 'block_start': {
				const b = e.block
				const part: ChatResponse['content'][number] =
					b.kind === 'text'
						? { type: 'text', text: '' }
						: b.kind === 'thinking'
							? { type: 'thinking', text: '' }
							: b.kind === 'redacted_thinking'
								? { type: 'redacted_thinking', data: b.data }
								: b.kind === 'tool_call'
									? { type: 'tool_call', id: b.id, name: b.name, input: {}, ...(b.signature && { signature: b.signature }) }
									: b.kind === 'mcp_tool_use'
										? { type: 'mcp_tool_use', id: b.id, name: b.name, serverName: b.serverName, input: {} }
										: b.kind === 'mcp_tool_result'
											? { type: 'mcp_tool_result', toolUseId: b.toolUseId, isError: b.isError, content: b.content }
											: { type: 'web_search', id: b.id, queries: b.queries, sources: b.sources }
				at.set(e.index, part)
				res.content.push(part)
				break
			}
			case 'text_delta': {
				const p = at.get(e.index)
				if (p?.type === 'text') p.text += e.text
				break
			}
			case 'citation': {
				const p = at.get(e.index)
				if (p?.type === 'text') (p.citations ??= []).push(e.citation)
				break
			}
			case 'thinking_delta': {
				const p = at.get(e.index)
				if (p?.type === 'thinking') p.text += e.text
				break
			}
			case 'signature_delta': {
				const p = at.get(e.index)
				if (p?.type === 'thinking' || p?.type === 'tool_call') p.signature = (p.signature ?? '') + e.signature
				break
			}
			case 'json_delta':
				json.set(e.index, (json.get(e.index) ?? '') + e.json)
				break
			case 'block_stop': {
				const p = at.get(e.index)
				if (p?.type === 'tool_call' || p?.type === 'mcp_tool_use') p.input = parseInput(json.get(e.index) ?? '')
				break
			}
			case 'usage':
				res.usage = { ...res.usage, ...(e.usage as Partial<Usage>) }
				break
			case 'finish':
				res.stopReason = e.reason
				if (e.stopSequence !== undefined) res.stopSequence = e.stopSequence
				finished = true
				break
			case 'error':
				throw e.error
		}
	}
	if (!finished) throw new GatewayError('upstream', 'the upstream answer ended unexpectedly', { code: 'upstream_cut' })
	res.content = res.content.filter((p) => p.type !== 'text' || p.text !== '')
	return res
}
