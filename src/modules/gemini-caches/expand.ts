/**
 * A `generateContent` / `streamGenerateContent` request naming `cachedContent` (ai.google.dev/api/caching): the cache's
 * contents go in front of the request's own, and its system instruction, tools and tool config become the request's.
 * Done on Gemini's wire form, before decoding, so every vendor gets the same request: Gemini channels the body
 * verbatim (Gemini 2.5+'s implicit caching discounts the repeated prefix by itself), OpenAI's prompt caching likewise,
 * and Claude a `cache_control` breakpoint at the end of the cached prefix (`markCacheEnd`), without which Anthropic
 * caches nothing. The cache is not created at Google: that would bind it to one channel and its key, and to Gemini.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ChatRequest, Part } from '../../core/ir'
import { decodeContents } from '../../protocols/gemini/turns'
import type { Services } from '../../services'
import { type CachedParts, cacheIdOf, ownedCache } from './store'

type Obj = Record<string, unknown>

/** Where the cached prefix ends in the decoded request: its last message and how many of that message's parts are the cache's. */
export type CacheEnd = { messages: number; parts: number; system: boolean; tools: boolean }

/** The request's `cachedContent` (either spelling): a field read, so a request without one pays nothing more. */
export const cacheNameOf = (body: Obj): unknown => body.cachedContent ?? body.cached_content

/** What a request naming a cache may not set itself (Google: "move those values to CachedContent"). */
const OWN = ['systemInstruction', 'system_instruction', 'tools', 'toolConfig', 'tool_config']

/**
 * The request with the account's cache put in front of it, and where the cache ends. 404 for a cache not the
 * account's (or expired), 400 for one made for another model or for a request setting what the cache holds.
 * @example await expandCache(svc, 7, 'claude-m', { cachedContent: 'cachedContents/abc', contents: [{ role: 'user', parts: [{ text: 'Q' }] }] })
 * // { body: { contents: [<cached…>, { role: 'user', parts: [{ text: 'Q' }] }], systemInstruction: <cached> }, end: { messages: 1, parts: 1, system: true, tools: false } }
 */
export async function expandCache(svc: Services, accountId: number, model: string, body: Obj, name: unknown): Promise<{ body: Obj; end: CacheEnd }> {
	if (typeof name !== 'string') throw badRequest('cachedContent must be a string: the name of a cache, `cachedContents/{id}`', 'cachedContent')
	const row = await ownedCache(svc, cacheIdOf(name), accountId)
	if (OWN.some((k) => body[k] !== undefined && body[k] !== null))
		throw badRequest('CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.\n\nProposed fix: move those values to CachedContent from GenerateContent request.', 'cachedContent')
	if (row.model !== model) throw badRequest(`Model used by GenerateContent request (models/${model}) and CachedContent (models/${row.model}) has to be the same.`, 'cachedContent')
	const cached = row.content as CachedParts
	const { cachedContent: _, cached_content: __, ...rest } = body
	const own = Array.isArray(rest.contents) ? rest.contents : []
	const out: Obj = { ...rest, contents: [...(cached.contents ?? []), ...own] }
	if (cached.systemInstruction !== undefined) out.systemInstruction = cached.systemInstruction
	if (cached.tools !== undefined) out.tools = cached.tools
	if (cached.toolConfig !== undefined) out.toolConfig = cached.toolConfig
	// The cached contents decode as they did when the cache was made (they were checked then); a run of one role
	// continues into the request's first content of that role, so the end is counted in parts of that message.
	const messages = cached.contents?.length ? decodeContents(cached.contents) : []
	const end = { messages: messages.length, parts: messages.at(-1)?.content.length ?? 0, system: cached.systemInstruction !== undefined, tools: !!cached.tools?.length }
	return { body: out, end }
}

/** Anthropic's default breakpoint: 5 minutes, refreshed by every read (docs.anthropic.com/en/docs/build-with-claude/prompt-caching). */
const EPHEMERAL = { type: 'ephemeral' } as const

const cacheable = (p: Part): p is Extract<Part, { cacheControl?: unknown }> =>
	(p.type === 'text' && p.text.trim() !== '') || p.type === 'image' || p.type === 'file' || p.type === 'tool_call' || p.type === 'tool_result'

/**
 * Marks the last block of the cached prefix for prompt caching (`cache_control` on Claude; the other encoders send no
 * such field). Anthropic caches tools, system and messages in that order up to a breakpoint, so one at the end of the
 * cached contents covers the cached system instruction and tools too; a cache of no contents is marked on the last
 * system part, else the last tool.
 */
export function markCacheEnd(ir: ChatRequest, end: CacheEnd): void {
	const msg = end.messages > 0 ? ir.messages[end.messages - 1] : undefined
	if (msg) {
		for (let i = Math.min(end.parts, msg.content.length) - 1; i >= 0; i--) {
			const p = msg.content[i]!
			if (cacheable(p)) {
				p.cacheControl ??= EPHEMERAL
				return
			}
		}
	}
	const system = end.system ? ir.system?.at(-1) : undefined
	if (system) {
		system.cacheControl ??= EPHEMERAL
		return
	}
	const tool = end.tools ? ir.tools?.at(-1) : undefined
	if (tool) tool.cacheControl ??= EPHEMERAL
}
