/**
 * What an Anthropic request carries that the canonical model cannot, kept in `ChatRequest.extra`:
 *
 * - `__protocol: 'anthropic-messages'` marks the bag; `encodeRequest` re-emits the rest only when it sees it,
 *   so Anthropic-only fields never leak into another vendor's request.
 * - Unknown top-level fields (`service_tier`, `container`, `mcp_servers`, `context_management`, `output_config`,
 *   `cache_control`, `metadata` minus `user_id`, …) are stored verbatim under their own names.
 * - `__blocks`: content blocks with no canonical part (document, search_result, server_tool_use, image with a
 *   `file` source, …) with their position: `[message, block]` or `[message, block, inner]` inside a tool_result,
 *   where `message` is the index in `ChatRequest.messages`.
 * - `__tools`: server tools (`{type:'web_search_20250305', …}`) and deferred custom tools no `tool_reference` has
 *   loaded yet (`defer_loading: true`), with their index in the original `tools` list.
 * - `__toolFields`: unknown fields of custom tools (`defer_loading`, `input_examples`, …), by tool name.
 * - `__thinking`: the original `thinking` object when it says more than enabled+budget or disabled
 *   (`adaptive`, `display`, `between_tools`).
 * @module
 */
import type { ChatRequest } from '../../core/ir'
import type { Json } from './check'

export const PROTOCOL = 'anthropic-messages' as const

export type StoredBlock = { path: number[]; block: Json }

export type AnthropicExtra = {
	__protocol: typeof PROTOCOL
	__blocks?: StoredBlock[]
	__tools?: Array<{ index: number; tool: Json }>
	__toolFields?: Record<string, Json>
	__thinking?: Json
	[field: string]: unknown
}

/** The bag, when the request was decoded from this protocol. */
export function ownExtra(req: ChatRequest): AnthropicExtra | undefined {
	const e = req.extra
	return e && e.__protocol === PROTOCOL ? (e as AnthropicExtra) : undefined
}

/** Top-level fields to re-emit verbatim (everything not reserved with a `__` prefix). */
export function passthroughFields(extra: AnthropicExtra): Json {
	const out: Json = {}
	for (const [k, v] of Object.entries(extra)) if (!k.startsWith('__')) out[k] = v
	return out
}

/** Blocks stored for one message at one depth, ascending by position (the order they were recorded in). */
export const storedAt = (extra: AnthropicExtra | undefined, prefix: number[]): Array<{ at: number; block: Json }> =>
	(extra?.__blocks ?? [])
		.filter((s) => s.path.length === prefix.length + 1 && prefix.every((p, i) => s.path[i] === p))
		.map((s) => ({ at: s.path[prefix.length], block: s.block }))

/**
 * Puts stored blocks back at their original positions. `items` must hold one slot per canonical part (including
 * parts the encoder will drop) so the positions recorded at decode time still line up; filter afterwards.
 */
export function reinsert<T>(items: T[], stored: Array<{ at: number; block: T }>): T[] {
	const out = items.slice()
	for (const s of stored) out.splice(Math.min(s.at, out.length), 0, s.block)
	return out
}

export const notNull = <T>(x: T | null): x is T => x !== null
