/**
 * Prompt caching for OpenAI clients on Claude. OpenAI caches a repeated prefix on its own (`prompt_cache_key` only
 * routes requests to the same cache); Claude caches only what a request marks, so a coding agent replaying its whole
 * conversation every turn would pay the full input price each time. A request of an OpenAI protocol is asked to cache its
 * whole prompt (ChatRequest.cacheAll) as the channel's `settings.auto_cache` says:
 * `prompt_cache_key` (default: when the client sent one), `always`, `never`. `prompt_cache_retention: "24h"` (OpenAI's
 * extended retention) becomes Claude's longest TTL, one hour. Only codecs that cache by marker read `cacheAll` (Anthropic's,
 * and Bedrock Converse's for the families with cache points: Nova, without a TTL), and leave a body that marks
 * anything itself as it is (the client's breakpoints, wherever they came from: one place decides). The relay and the
 * gateway's MCP loop (mcp/round.ts, each round) ask it.
 * @module
 */
import type { CacheControl, ChatRequest } from '../core/ir'
import type { ProtocolName } from '../protocols/codec'
import type { Channel } from '../routing/catalog'

const OPENAI_CLIENTS: ReadonlySet<ProtocolName> = new Set(['openai-chat', 'openai-responses'])

/** `ir` asking to cache its whole prompt when `client`'s request should on channel `ch`, else `ir` unchanged. */
export function withAutoCache(ir: ChatRequest, client: ProtocolName, ch: Pick<Channel, 'settings'>): ChatRequest {
	const mode = ch.settings.auto_cache ?? 'prompt_cache_key'
	if (mode === 'never' || !OPENAI_CLIENTS.has(client)) return ir
	if (mode === 'prompt_cache_key' && !ir.promptCache?.key) return ir
	const cache: CacheControl = ir.promptCache?.retention === '24h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' }
	return { ...ir, cacheAll: cache }
}
