/**
 * OpenAI's prompt-cache hint, as both its protocols (chat completions, Responses) word it: `prompt_cache_key` (requests
 * sharing a prefix should share a cache) and `prompt_cache_retention` (`in_memory`, or `24h` for extended retention).
 * https://platform.openai.com/docs/guides/prompt-caching
 * @module
 */
import { badRequest } from '../core/errors'
import type { ChatRequest } from '../core/ir'

/** Sets `req.promptCache` from a client body; the fields stay where the decoder keeps them (`extra`) for OpenAI upstreams. */
export function decodePromptCacheHint(b: Record<string, unknown>, req: ChatRequest): void {
	const key = b.prompt_cache_key
	const retention = b.prompt_cache_retention
	if (key !== undefined && key !== null && typeof key !== 'string') throw badRequest('prompt_cache_key must be a string', 'prompt_cache_key')
	if (retention !== undefined && retention !== null && typeof retention !== 'string') throw badRequest('prompt_cache_retention must be a string', 'prompt_cache_retention')
	if (typeof key === 'string' && key !== '') (req.promptCache ??= {}).key = key
	if (typeof retention === 'string') (req.promptCache ??= {}).retention = retention
}
