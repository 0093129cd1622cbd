/**
 * Anthropic's automatic prompt caching (https://platform.claude.com/docs/en/build-with-claude/prompt-caching): a
 * request with a top-level `cache_control` caches everything up to its last cacheable block. The first request with a
 * prefix reports it as `cache_creation_input_tokens`; a later one that starts with a cached prefix (the conversation
 * grown by a turn) reports that prefix as `cache_read_input_tokens` and writes the rest; `input_tokens` then counts
 * only what follows the breakpoint. The prefix is the conversation's texts in order (system, then each message's), as
 * the mock counts them; kept per mock, for as long as it runs (no TTL, and no minimum length: Anthropic caches nothing
 * below 1,024 to 4,096 tokens, by model, which test prompts never reach). Without the field, the `#cache` and
 * `#write-cache` tags decide, as before.
 * @module
 */

import { asObj, type Obj } from '../shared/json'
import type { Plan } from '../shared/scenario'
import { countWords } from '../shared/text'

/** The cached prefixes one mock keeps, each the texts in order. */
export type PromptCacheStore = string[][]

const startsWith = (texts: string[], prefix: string[]) => prefix.length <= texts.length && prefix.every((t, i) => texts[i] === t)

/** `p` with its cache reads and writes as automatic caching of `inputTexts` gives them, when `b` asks for it. */
export function cachedPlan(b: Obj, inputTexts: string[], p: Plan, store: PromptCacheStore): Plan {
	const cc = asObj(b.cache_control)
	if (!cc) return p
	const tokens = (texts: string[]) => texts.reduce((n, t) => n + countWords(t), 0)
	const hit = store.filter((prefix) => startsWith(inputTexts, prefix)).sort((a, z) => z.length - a.length)[0] ?? []
	const cached = tokens(hit)
	const cacheWrite = tokens(inputTexts) - cached
	if (cacheWrite > 0) store.push([...inputTexts])
	const { cacheWrite: _w, cacheWriteLong: _h, ...usage } = p.usage
	return { ...p, usage: { ...usage, cached, ...(cacheWrite > 0 && { cacheWrite }), ...(cacheWrite > 0 && cc.ttl === '1h' && { cacheWriteLong: cacheWrite }) } }
}
