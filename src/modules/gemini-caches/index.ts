/**
 * Gemini's explicit context caching (ai.google.dev/api/caching) for every model, as @google/genai calls it
 * (`ai.caches.create/get/list/update/delete`; under `/v1beta` and `/v1`): the gateway keeps each cache itself
 * (store.ts) and puts it in front of the requests that name it (expand.ts), whichever vendor serves the model. Creating
 * one counts its tokens for the model (not billed, as `countTokens`); the requests using it are billed as any request,
 * cache reads at the cache-read price when the vendor reports them. No storage is charged: no vendor stores it.
 * @module
 */
import { Elysia, t } from 'elysia'
import type { AuthToken } from '../../auth/api-key'
import { badRequest } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { resolveModel } from '../../relay/budget'
import { GeminiErrorBody } from '../../protocols/gemini'
import type { GeminiRequest } from '../../protocols/gemini/model'
import { decodeRequest } from '../../protocols/gemini/request'
import type { Services } from '../../services'
import { countTokens } from '../count-tokens/counter'
import { pinFiles } from '../gemini-files/refs'
import { CachedContent, CachedContentCreate, CachedContentList, CachedContentListQuery, CachedContentUpdate } from './model'
import { cacheIdOf, cacheView, dropCache, insertCache, newCacheId, ownedCache, pageCaches, setExpiry, type CachedParts } from './store'

const errors = { 400: GeminiErrorBody, 401: GeminiErrorBody, 403: GeminiErrorBody, 404: GeminiErrorBody, 429: GeminiErrorBody, 503: GeminiErrorBody }

/** Google's default time to live (ai.google.dev/gemini-api/docs/caching: "If not set, the TTL defaults to 1 hour"). */
const DEFAULT_TTL_MS = 3_600_000

/** A protobuf Duration in JSON: whole seconds, up to nine decimals, `s`. */
const DURATION = /^(\d{1,12})(?:\.(\d{1,9}))?s$/

/**
 * The expiry a create or update asks for: `ttl` from now or `expireTime`, one of them (`fallback` when neither), at most
 * `maxMs` from now (MAX_GEMINI_CACHE_TTL_SECONDS). Past it is a 400 naming the limit rather than a shorter life: the
 * client asked for a life it would not get, and would find out only when its cache answered 404 before it expected.
 */
function expiryOf(b: { ttl?: string; expireTime?: string }, fallback: number | undefined, maxMs: number, now = Date.now()): Date {
	if (b.ttl !== undefined && b.expireTime !== undefined) throw badRequest('Set one of ttl and expireTime, not both', 'ttl')
	let at: Date
	if (b.ttl !== undefined) {
		const m = DURATION.exec(b.ttl)
		const ms = m ? Number(m[1]) * 1000 + Math.floor(Number(`0.${m[2] ?? '0'}`) * 1000) : NaN
		at = new Date(now + ms)
		if (!m || !(ms > 0) || Number.isNaN(at.getTime())) throw badRequest(`Invalid ttl ${JSON.stringify(b.ttl)}: a positive duration in seconds, such as "300s" or "3.5s"`, 'ttl')
	} else if (b.expireTime !== undefined) {
		at = new Date(b.expireTime)
		if (Number.isNaN(at.getTime())) throw badRequest(`Invalid expireTime ${JSON.stringify(b.expireTime)}: an RFC 3339 timestamp`, 'expireTime')
		if (at.getTime() <= now) throw badRequest('expireTime must be in the future', 'expireTime')
	} else {
		if (fallback === undefined) throw badRequest('Set ttl or expireTime: only the expiration of a CachedContent can be updated', 'ttl')
		return new Date(now + Math.min(fallback, maxMs))
	}
	if (at.getTime() - now > maxMs) {
		const field = b.ttl !== undefined ? 'ttl' : 'expireTime'
		throw badRequest(`${field} too long: a CachedContent lives at most ${maxMs / 1000}s here (until ${new Date(now + maxMs).toISOString()}); ask for that or less, and update its expiration later to keep it longer`, field)
	}
	return at
}

type Call = { svc: Services; token: AuthToken; requestId: string; request: Request }

/** `caches.create`: checked as a request would be, counted for its model (which the key must be able to use), kept. */
async function createCache(c: Call, body: typeof CachedContentCreate.static) {
	const model = body.model.replace(/^models\//, '')
	if (!model) throw badRequest('model is required: `models/{model}`', 'model')
	const expiresAt = expiryOf(body, DEFAULT_TTL_MS, c.svc.env.geminiCaches.maxTtlMs)
	// Refused as every request using it would be (a model the key may not use, unserved, or unpriced), before anything is counted or kept.
	resolveModel(c.svc, c.token, model)
	const contents = body.contents ?? []
	const system = body.systemInstruction
	if (!contents.length && !system) throw badRequest('A CachedContent needs contents or a systemInstruction to cache', 'contents')
	// Counted as the request it will lead: with no contents, the system instruction's text stands in as one (a request
	// needs contents), counted the same.
	const inner: Record<string, unknown> = contents.length ? { contents, ...(system && { systemInstruction: system }) } : { contents: [{ role: 'user', parts: system!.parts }] }
	if (body.tools) inner.tools = body.tools
	if (body.toolConfig) inner.toolConfig = body.toolConfig
	// Uploaded files it names must be the account's; the request using the cache goes to the channel holding them.
	const files = await pinFiles(c.svc, c.token.accountId, inner)
	const ir = { ...decodeRequest(files.body as GeminiRequest), model }
	const counted = await countTokens({
		svc: c.svc,
		token: c.token,
		requestId: c.requestId,
		model,
		ir,
		native: { protocol: 'gemini', body: { generateContentRequest: files.body } },
		inbound: c.request.headers,
		signal: c.request.signal,
		channelId: files.channelId,
	})
	const content: CachedParts = {
		...(contents.length && { contents }),
		...(system && { systemInstruction: system }),
		...(body.tools && { tools: body.tools }),
		...(body.toolConfig && { toolConfig: body.toolConfig }),
	}
	const row = await insertCache(c.svc, { id: newCacheId(), accountId: c.token.accountId, model, displayName: body.displayName ?? null, content, tokens: counted.tokens, expiresAt })
	return cacheView(row)
}

/** `caches.list`: the account's unexpired caches, newest first. */
async function listCaches(svc: Services, accountId: number, query: typeof CachedContentListQuery.static) {
	const size = Math.max(1, Math.min(Number(query.pageSize ?? 100) || 100, 1000))
	const rows = await pageCaches(svc, accountId, size, query.pageToken || undefined)
	const cachedContents = rows.slice(0, size).map(cacheView)
	return (rows.length > size ? { cachedContents, nextPageToken: rows[size - 1]!.id } : { cachedContents }) as typeof CachedContentList.static
}

/** What a PATCH may not change (Google: the contents are immutable; only the expiration is updated). */
const IMMUTABLE = ['model', 'contents', 'systemInstruction', 'system_instruction', 'tools', 'toolConfig', 'tool_config', 'displayName', 'display_name']

export const geminiCachesModule = (svc: Services) => {
	// A create asks a vendor to count and writes a row, an update or delete writes: counted toward the key's requests
	// per minute as a submit is (a key's limit would otherwise not bound them); gets and lists, which read, are not.
	const app = new Elysia({ detail: { tags: ['Gemini'] } }).use(modelAuth(svc, { gemini: true, counted: 'submits' }))
	for (const version of ['/v1beta', '/v1']) {
		const hide = version === '/v1'
		app.post(`${version}/cachedContents`, ({ body, token, requestId, request }) => createCache({ svc, token, requestId, request }, body), {
			body: CachedContentCreate,
			response: { 200: CachedContent, ...errors },
			detail: {
				hide,
				summary: 'Create a context cache',
				description:
					"Gemini's CachedContent for any model the key may use (`model`, `contents`, `systemInstruction`, `tools`, `toolConfig`, `ttl` or `expireTime` (default 1 hour, at most MAX_GEMINI_CACHE_TTL_SECONDS: 400 past it), `displayName`). Kept by the gateway, at most MAX_GEMINI_CACHES live caches and MAX_GEMINI_CACHE_BYTES stored per account (429 RESOURCE_EXHAUSTED past either); `usageMetadata.totalTokenCount` is its token count for the model (counted as `countTokens` counts, not billed). Name it in `generateContent`'s `cachedContent` to put it in front of the request's contents, on any vendor; Claude gets a prompt-caching breakpoint at its end. No storage charge. Also under `/v1`.",
			},
		})
		app.get(`${version}/cachedContents`, ({ query, token }) => listCaches(svc, token.accountId, query), {
			query: CachedContentListQuery,
			response: { 200: CachedContentList, ...errors },
			detail: { hide, summary: 'List context caches', description: "The account's unexpired caches, newest first, `pageSize` 1–1000 (default 100), their metadata (not the contents)." },
		})
		app.get(`${version}/cachedContents/:id`, async ({ params, token }) => cacheView(await ownedCache(svc, cacheIdOf(params.id), token.accountId, false)), {
			params: t.Object({ id: t.String() }),
			response: { 200: CachedContent, ...errors },
			detail: { hide, summary: 'Get a context cache', description: "Its metadata; another account's cache, or an expired one, is 404." },
		})
		app.patch(
			`${version}/cachedContents/:id`,
			async ({ params, body, token }) => {
				const changed = IMMUTABLE.find((k) => (body as Record<string, unknown>)[k] !== undefined)
				if (changed) throw badRequest(`Only ttl or expireTime of a CachedContent can be updated, not ${changed}`, changed)
				return cacheView(await setExpiry(svc, cacheIdOf(params.id), token.accountId, expiryOf(body, undefined, svc.env.geminiCaches.maxTtlMs)))
			},
			{
				params: t.Object({ id: t.String() }),
				query: t.Object({ updateMask: t.Optional(t.String()) }, { additionalProperties: true }),
				body: CachedContentUpdate,
				response: { 200: CachedContent, ...errors },
				detail: { hide, summary: 'Update a context cache', description: 'A new `ttl` (from now) or `expireTime`, at most MAX_GEMINI_CACHE_TTL_SECONDS from now; nothing else of a cache changes.' },
			},
		)
		app.delete(
			`${version}/cachedContents/:id`,
			async ({ params, token }) => {
				await dropCache(svc, cacheIdOf(params.id), token.accountId)
				return {}
			},
			{ params: t.Object({ id: t.String() }), response: { 200: t.Object({}), ...errors }, detail: { hide, summary: 'Delete a context cache' } },
		)
	}
	return app
}
