/**
 * The gateway's Gemini context caches (table `gemini_caches`): one row per `cachedContents/{id}`, owned by the account
 * that made it (any other gets 404, as for an unknown name), unusable and unlisted once expired, and purged then.
 * @module
 */
import { and, desc, eq, getTableColumns, gt, lte, sql } from 'drizzle-orm'
import { GatewayError, notFound } from '../../core/errors'
import type { Db } from '../../db/client'
import { geminiCaches } from '../../db/schema'
import type { Services } from '../../services'
import type { CachedContent } from './model'

export type CacheRow = typeof geminiCaches.$inferSelect
/** A cache without its contents: what get, list, update and delete answer, which need not read up to MAX_JSON_BYTES a row. */
export type CacheMeta = Omit<CacheRow, 'content'>

const { content: _, ...META } = getTableColumns(geminiCaches)

/** What a cache holds, in Gemini's wire form (as the client sent it). */
export type CachedParts = { contents?: unknown[]; systemInstruction?: unknown; tools?: unknown[]; toolConfig?: unknown }

/** A cache id: lowercase letters and digits, as Google's are (and as `newCacheId` makes them). */
const CACHE_ID = /^[a-z0-9]{1,64}$/

/** A new cache id: 20 lowercase letters and digits. */
export function newCacheId(): string {
	let id = ''
	for (const b of crypto.getRandomValues(new Uint8Array(20))) id += '0123456789abcdefghijklmnopqrstuvwxyz'[b % 36]
	return id
}

/** `cachedContents/{id}` or `{id}` → the id. */
export const cacheIdOf = (name: string): string => (name.startsWith('cachedContents/') ? name.slice('cachedContents/'.length) : name)

/** Google's words for a cache that is not the caller's, expired or unknown; 404 NOT_FOUND, as for another account's file. */
export const cacheNotFound = (name: string) => notFound(`CachedContent not found (or permission denied): cachedContents/${name}`, 'cached_content_not_found')

/** The account's unexpired cache by its id, with its contents unless `content` is false; 404 in Gemini's shape otherwise. */
export async function ownedCache(svc: Services, id: string, accountId: number): Promise<CacheRow>
export async function ownedCache(svc: Services, id: string, accountId: number, content: false): Promise<CacheMeta>
export async function ownedCache(svc: Services, id: string, accountId: number, content = true): Promise<CacheMeta> {
	const [row] = CACHE_ID.test(id)
		? await svc.db.orm
				.select(content ? getTableColumns(geminiCaches) : META)
				.from(geminiCaches)
				.where(and(eq(geminiCaches.id, id), eq(geminiCaches.accountId, accountId), gt(geminiCaches.expiresAt, sql`now()`)))
				.limit(1)
		: []
	if (!row) throw cacheNotFound(id)
	return row
}

/** The first key of the advisory lock a create holds on its account (the second is the account id); any constant of its own. */
const CREATE_LOCK = 0x6763

/** Google's answer to a quota passed: 429 RESOURCE_EXHAUSTED. */
const exhausted = (message: string) => new GatewayError('rate_limit', message, { code: 'cache_quota_exceeded', param: 'cachedContent' })

/**
 * Stores a new cache when the account stays within its bounds (env `geminiCaches`): fewer than `maxPerAccount` live
 * caches before it, and the stored bytes of them all, this one's included, at most `maxBytesPerAccount`. Bytes are
 * as the database stores them (`pg_column_size`, after its compression; read from the TOAST pointer, without reading
 * the contents); the account's expired caches are deleted first. The account's creates take turns on an advisory lock, so two racing past the count cannot both pass
 * (each would see its count without the other's uncommitted row); a cache past the bytes is rolled back.
 */
export async function insertCache(svc: Services, row: typeof geminiCaches.$inferInsert): Promise<CacheMeta> {
	const { maxPerAccount, maxBytesPerAccount } = svc.env.geminiCaches
	return svc.db.orm.transaction(async (tx) => {
		await tx.execute(sql`SELECT pg_advisory_xact_lock(${CREATE_LOCK}, ${row.accountId})`)
		// The account's expired caches go now, not at the next purge: still stored, they would let caches of a short
		// ttl pile up past the bounds, which count the live ones.
		await tx.delete(geminiCaches).where(and(eq(geminiCaches.accountId, row.accountId), lte(geminiCaches.expiresAt, sql`now()`)))
		const [held] = await tx
			.select({ caches: sql<number>`count(*)::int`, bytes: sql<number>`coalesce(sum(pg_column_size(${geminiCaches.content})), 0)::int8` })
			.from(geminiCaches)
			.where(eq(geminiCaches.accountId, row.accountId))
		const { caches = 0, bytes = 0 } = held ?? {}
		if (caches >= maxPerAccount)
			throw exhausted(`Quota exceeded: this account holds ${caches} context caches, the most it may (${maxPerAccount}); delete one (caches.delete) or let one expire`)
		const [made] = await tx
			.insert(geminiCaches)
			.values(row)
			.returning({ ...META, bytes: sql<number>`pg_column_size(${geminiCaches.content})::int8` })
		const { bytes: size, ...cache } = made!
		if (bytes + size > maxBytesPerAccount)
			throw exhausted(
				`Quota exceeded: this cache (${size} bytes stored) would take this account's context caches to ${bytes + size} bytes, past the most they may hold (${maxBytesPerAccount} bytes); delete caches (caches.delete) or let them expire`,
			)
		return cache
	})
}

/** A new expiry for the account's unexpired cache; 404 when there is none. */
export async function setExpiry(svc: Services, id: string, accountId: number, expiresAt: Date): Promise<CacheMeta> {
	const [row] = CACHE_ID.test(id)
		? await svc.db.orm
				.update(geminiCaches)
				.set({ expiresAt, updatedAt: sql`now()` })
				.where(and(eq(geminiCaches.id, id), eq(geminiCaches.accountId, accountId), gt(geminiCaches.expiresAt, sql`now()`)))
				.returning(META)
		: []
	if (!row) throw cacheNotFound(id)
	return row
}

export async function dropCache(svc: Services, id: string, accountId: number): Promise<void> {
	const gone = CACHE_ID.test(id)
		? await svc.db.orm
				.delete(geminiCaches)
				.where(and(eq(geminiCaches.id, id), eq(geminiCaches.accountId, accountId), gt(geminiCaches.expiresAt, sql`now()`)))
				.returning({ id: geminiCaches.id })
		: []
	if (!gone.length) throw cacheNotFound(id)
}

/** A page of the account's unexpired caches, newest first, after the cache `after` (the page token); one more than asked, to tell a next page. */
export async function pageCaches(svc: Services, accountId: number, limit: number, after?: string): Promise<CacheMeta[]> {
	const cursor = after
		? sql`(${geminiCaches.createdAt}, ${geminiCaches.id}) < (SELECT c.created_at, c.id FROM gemini_caches c WHERE c.id = ${after} AND c.account_id = ${accountId})`
		: undefined
	return svc.db.orm
		.select(META)
		.from(geminiCaches)
		.where(and(eq(geminiCaches.accountId, accountId), gt(geminiCaches.expiresAt, sql`now()`), cursor))
		.orderBy(desc(geminiCaches.createdAt), desc(geminiCaches.id))
		.limit(limit + 1)
}

/** Deletes the caches expired by `now`; returns how many went. Run with the other purges (server.ts); any instance may. */
export async function purgeGeminiCaches(db: Db, now = new Date()): Promise<number> {
	const gone = await db.orm.delete(geminiCaches).where(lte(geminiCaches.expiresAt, now)).returning({ id: geminiCaches.id })
	return gone.length
}

/**
 * Google's CachedContent as `get`, `list`, `create` and `update` answer it: the metadata, never the contents
 * (ai.google.dev/api/caching#CachedContent: they are input only).
 */
export function cacheView(row: CacheMeta): typeof CachedContent.static {
	return {
		name: `cachedContents/${row.id}`,
		model: `models/${row.model}`,
		...(row.displayName !== null && { displayName: row.displayName }),
		usageMetadata: { totalTokenCount: row.tokens },
		createTime: row.createdAt.toISOString(),
		updateTime: row.updatedAt.toISOString(),
		expireTime: row.expiresAt.toISOString(),
	}
}
