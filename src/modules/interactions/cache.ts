/**
 * An interaction naming `cached_content` (https://ai.google.dev/api/interactions-api): a context cache the gateway
 * keeps (modules/gemini-caches), put in front of the interaction as generateContent puts it (gemini-caches/expand.ts)
 * for every vendor: its contents before the conversation, its system instruction, tools and tool config the
 * interaction's, Claude's `cache_control` breakpoint at its end. The name itself goes to no upstream: Google knows none
 * of the gateway's caches, and one it knew would be the operator's, behind the channel's key.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { ChatRequest } from '../../core/ir'
import { decodeRequest as decodeGemini } from '../../protocols/gemini/request'
import type { GeminiRequest } from '../../protocols/gemini/model'
import type { Services } from '../../services'
import { markCacheEnd } from '../gemini-caches/expand'
import { type CachedParts, cacheIdOf, ownedCache } from '../gemini-caches/store'

type Obj = Record<string, unknown>

/** What an interaction naming a cache may not set itself: Google's tool_config is the Interactions API's `generation_config.tool_choice`. */
const conflicts = (body: Obj): boolean =>
	[body.system_instruction, body.tools, (body.generation_config as Obj | undefined)?.tool_choice].some((v) => v !== undefined && v !== null)

/** A stand-in for the contents a cache of only a system instruction or tools lacks: Gemini's decoder needs some; its message is dropped. */
const NO_CONTENTS = [{ role: 'user', parts: [{ text: '.' }] }]

/**
 * The account's cache `name`, decoded for `model`: 404 for a cache not the account's (or expired), 400 for one made for
 * another model or for a request setting what the cache holds, as Google answers (gemini-caches/expand.ts), and for a
 * cache holding what only Gemini's generateContent takes (built-in tools, a tool config of no canonical form).
 */
export async function loadCache(svc: Services, accountId: number, body: Obj, name: unknown): Promise<ChatRequest> {
	if (typeof name !== 'string') throw badRequest('cached_content must be a string: the name of a cache, `cachedContents/{id}`', 'cached_content')
	const row = await ownedCache(svc, cacheIdOf(name), accountId)
	if (conflicts(body))
		throw badRequest(
			'CachedContent can not be used with an interaction setting system_instruction, tools or tool_choice.\n\nProposed fix: move those values to CachedContent from the interaction.',
			'cached_content',
		)
	const model = typeof body.model === 'string' ? body.model.replace(/^models\//, '') : ''
	if (row.model !== model) throw badRequest(`Model used by the interaction (models/${model}) and CachedContent (models/${row.model}) has to be the same.`, 'cached_content')
	const cached = row.content as CachedParts
	const contents = cached.contents?.length ? cached.contents : undefined
	const ir = decodeGemini({ contents: contents ?? NO_CONTENTS, systemInstruction: cached.systemInstruction, tools: cached.tools, toolConfig: cached.toolConfig } as GeminiRequest)
	if (!contents) ir.messages = []
	const only = ir.vendorOnly?.[0]
	if (only || (ir.extra?.tools as unknown[] | undefined)?.length)
		throw badRequest(`cached_content: the cache holds ${only?.what ?? 'a Gemini built-in tool'}, which the gateway serves only through generateContent; name this cache there`, 'cached_content')
	return ir
}

/** `ir` (the interaction decoded, its conversation in place) with the cache in front of it and Claude's breakpoint at the cache's end. */
export function putCacheFirst(ir: ChatRequest, cache: ChatRequest): void {
	ir.messages = [...cache.messages, ...ir.messages]
	if (cache.system?.length) ir.system = cache.system
	if (cache.tools?.length) ir.tools = cache.tools
	if (cache.toolChoice) ir.toolChoice = cache.toolChoice
	const end = { messages: cache.messages.length, parts: cache.messages.at(-1)?.content.length ?? 0, system: !!cache.system?.length, tools: !!cache.tools?.length }
	markCacheEnd(ir, end)
}
