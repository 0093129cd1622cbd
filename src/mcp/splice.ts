/**
 * One model round's events, spliced into the answer the client sees: block indexes continue across rounds (a
 * strictly increasing sequence from 0, WIRE-NOTES #5), the round's `start` and `finish` are held back (the answer has
 * one of each), usage is reported as the sum over rounds, and a call of an MCP tool becomes an `mcp_tool_use` block
 * named as the MCP server knows it. What the round produced is also collected for the loop: the assistant turn to
 * replay to the model, the MCP calls to run, the stop reason and the round's own usage (billed on its own).
 * @module
 */
import type { GatewayError } from '../core/errors'
import type { StreamEvent } from '../core/events'
import type { Part, StopReason, Usage } from '../core/ir'
import { packToolCallId } from '../core/tool-ids'
import type { McpRef, ToolNames } from './tools'

/**
 * An MCP call of the round. `id` and `modelName` are the call as the model made it (its tool result must echo
 * both: Gemini pairs a functionResponse with its call by name); `wireId` is the id the client sees.
 */
export type McpCall = McpRef & { id: string; modelName: string; wireId: string; input: Record<string, unknown> }

export type RoundOut = {
	/** The assistant turn as the model produced it (tool names as the model knows them), for the next round. */
	parts: Part[]
	mcpCalls: McpCall[]
	/** Calls of the caller's own tools: the answer goes back to the caller. */
	ownCalls: number
	usage?: Partial<Usage>
	/** Part of `usage` was counted here (a round cut short at a stop sequence: loop.ts). */
	estimated?: boolean
	reason?: StopReason
	stopSequence?: string
	error?: GatewayError
	/** Output text, for counting when the upstream reports no usage. */
	text: string
}

export const newRoundOut = (): RoundOut => ({ parts: [], mcpCalls: [], ownCalls: 0, text: '' })

/** Usage so far: the settled rounds' totals plus the current round's cumulative counts. */
export const addUsage = (a: Usage, b: Partial<Usage> | undefined): Usage => ({
	input: a.input + (b?.input ?? 0),
	output: a.output + (b?.output ?? 0),
	cacheRead: a.cacheRead + (b?.cacheRead ?? 0),
	cacheWrite: a.cacheWrite + (b?.cacheWrite ?? 0),
	reasoning: a.reasoning + (b?.reasoning ?? 0),
})

/** Anthropic's id pattern ^[a-zA-Z0-9_-]+$ for the client's `mcp_tool_use.id`; OpenAI and Gemini accept it too. */
const cleanId = (id: string) => id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'call'

const parseInput = (json: string): Record<string, unknown> => {
	try {
		const v: unknown = JSON.parse(json || '{}')
		return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
	} catch {
		return {}
	}
}

type Open =
	| { kind: 'text'; text: string }
	| { kind: 'thinking'; text: string; signature: string }
	| { kind: 'redacted'; data: string }
	| { kind: 'call'; id: string; name: string; signature?: string; json: string; mcp?: McpRef; wireId: string }
	| { kind: 'other' }

/**
 * @param state the next free block index of the answer (advanced here)
 * @param prior usage of the rounds before this one
 */
export async function* spliceRound(
	events: AsyncIterable<StreamEvent>,
	state: { next: number },
	names: ToolNames,
	out: RoundOut,
	prior: Usage,
): AsyncGenerator<StreamEvent> {
	const index = new Map<number, number>()
	const open = new Map<number, Open>()
	const finishPart = (o: Open) => {
		if (o.kind === 'text' && o.text) out.parts.push({ type: 'text', text: o.text })
		else if (o.kind === 'thinking') out.parts.push(o.signature ? { type: 'thinking', text: o.text, signature: o.signature } : { type: 'thinking', text: o.text })
		else if (o.kind === 'redacted') out.parts.push({ type: 'redacted_thinking', data: o.data })
		else if (o.kind === 'call') {
			const input = parseInput(o.json)
			out.parts.push({ type: 'tool_call', id: o.id, name: o.name, input, ...(o.signature && { signature: o.signature }) })
			if (o.mcp) out.mcpCalls.push({ ...o.mcp, id: o.id, modelName: o.name, wireId: o.wireId, input })
		}
	}
	for await (const e of events) {
		if (e.type === 'start' || e.type === 'usage') {
			if (e.usage) out.usage = { ...out.usage, ...e.usage }
			if (e.usage) yield { type: 'usage', usage: addUsage(prior, out.usage) }
			continue
		}
		if (e.type === 'finish') {
			out.reason = e.reason
			if (e.stopSequence !== undefined) out.stopSequence = e.stopSequence
			continue
		}
		if (e.type === 'error') {
			out.error = e.error
			return
		}
		if (e.type === 'ping') {
			yield e
			continue
		}
		if (e.type === 'block_start') {
			const i = state.next++
			index.set(e.index, i)
			const b = e.block
			if (b.kind === 'tool_call') {
				const mcp = names.resolve(b.name)
				const id = cleanId(b.id)
				const call: Open = { kind: 'call', id, name: b.name, json: '', wireId: packToolCallId(id, b.signature), ...(b.signature && { signature: b.signature }), ...(mcp && { mcp }) }
				open.set(e.index, call)
				if (mcp) yield { type: 'block_start', index: i, block: { kind: 'mcp_tool_use', id: call.wireId, name: mcp.tool, serverName: mcp.server } }
				else {
					out.ownCalls++
					yield { type: 'block_start', index: i, block: b }
				}
				continue
			}
			open.set(e.index, b.kind === 'text' ? { kind: 'text', text: '' } : b.kind === 'thinking' ? { kind: 'thinking', text: '', signature: '' } : b.kind === 'redacted_thinking' ? { kind: 'redacted', data: b.data } : { kind: 'other' })
			yield { type: 'block_start', index: i, block: b }
			continue
		}
		const i = index.get(e.index)
		const o = open.get(e.index)
		if (i === undefined || !o) continue
		if (e.type === 'block_stop') {
			finishPart(o)
			open.delete(e.index)
		} else if (e.type === 'text_delta' && o.kind === 'text') {
			o.text += e.text
			out.text += e.text
		} else if (e.type === 'thinking_delta' && o.kind === 'thinking') {
			o.text += e.text
			out.text += e.text
		} else if (e.type === 'signature_delta' && (o.kind === 'thinking' || o.kind === 'call')) {
			o.signature = (o.signature ?? '') + e.signature
			// A late Gemini signature of an MCP call stays with the replayed call; mcp_tool_use blocks carry none.
			if (o.kind === 'call' && o.mcp) continue
		} else if (e.type === 'json_delta' && o.kind === 'call') {
			o.json += e.json
			out.text += e.json
		}
		yield { ...e, index: i }
	}
}
