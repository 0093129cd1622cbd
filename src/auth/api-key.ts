/**
 * API keys: `sk-` + 48 characters from the CSPRNG. Stored as sha256 (indexed lookup) plus an AES-GCM copy for reveal.
 * Lookups are served from an in-process cache once warm (no database round trip per request); changes invalidate
 * the entry here at once and, through the bus, on every instance.
 * @module
 */
import { eq } from 'drizzle-orm'
import { GatewayError } from '../core/errors'
import type { Db } from '../db/client'
import { accounts, apiTokens } from '../db/schema'
import { randomString } from '../lib/ids'
import { type Cipher, sha256Hex } from '../lib/secrets'
import { ackedTopic } from '../lib/acked-topic'
import { keyRefusal } from './key-refusal'
import { type Bus, hearsOthers } from '../lib/bus'

export const KEY_PREFIX = 'sk-'

/** What a request needs to know about its key; cached. */
export type AuthToken = {
	id: number
	/** A prefix of the key's hash: names the key in shared stores (Redis) without colliding across databases. */
	keyId: string
	accountId: number
	name: string
	status: string
	/** The account's status: a disabled account's keys are refused as its own are (POST /api/accounts/:id/disable). */
	accountStatus: string
	expiresAt: number | null
	spendLimit: number | null
	allowedModels: string[] | null
	rpmLimit: number | null
	tpmLimit: number | null
}

export const generateKey = (): string => KEY_PREFIX + randomString(48)

export const keyHint = (key: string): string => `${key.slice(0, 7)}…${key.slice(-4)}`

/** A key of our shape: anything else is refused without hashing it or asking the database. */
const wellFormed = (key: string) => key.startsWith(KEY_PREFIX) && key.length >= 35 && key.length <= 128

const POSITIVE_TTL_MS = 60_000
/**
 * How long a valid key is trusted while revocations made on other instances cannot reach this one: the bus (Redis, or
 * PostgreSQL LISTEN) is not subscribed (down or reconnecting), or there is none on a PostgreSQL that other instances
 * may share. The cache then only bounds how stale it may be.
 */
const DETACHED_TTL_MS = 5_000
/**
 * How long past its freshness a valid key's entry still answers while one lookup refreshes it, so a busy key's
 * requests do not wait for the database. Past that the request waits for the lookup: a key revoked unheard and then
 * left idle (a long while, a call to a free model that no lease refuses) must not be answered once more.
 */
const STALE_GRACE_MS = 1_000
/** The longest an invalidation waits for the other instances to say they dropped the keys. */
const INVALIDATE_WAIT_MS = 2_000
// Short, so a key created on another instance without a shared bus works within a couple of seconds.
const NEGATIVE_TTL_MS = 2_000

export type KeyCache = {
	/** Resolves a presented key; throws 401 GatewayErrors. */
	authenticate(key: string | undefined): Promise<AuthToken>
	/**
	 * The key's record when the cache holds it fresh and usable (active, unexpired): the common case, answered without
	 * an await. Undefined for anything else, which `authenticate` then resolves or refuses.
	 */
	cached(key: string | undefined): AuthToken | undefined
	/**
	 * Drops keys from this and (through the bus) every instance's cache; resolves once every instance Redis reaches
	 * has dropped them (at most INVALIDATE_WAIT_MS), so the change that called it holds on any instance's next request.
	 */
	invalidate(...keyHashes: string[]): Promise<void>
	/** For tests and metrics. */
	size(): number
}

/**
 * What a key's owner may spend changed: its status, limit or expiry, or its account's status. The ledger then gives
 * back this instance's lease of it (a slice sized by what the key was), which could otherwise be spent for as long
 * as requests keep it busy.
 */
export type KeyTermsChanged = (scope: { accountId: number; tokenId?: number }) => void

const termsOf = (t: AuthToken | null) => (t ? [t.status, t.accountStatus, t.spendLimit, t.expiresAt].join('|') : 'gone')

export function createKeyCache(db: Db, bus: Bus, now: () => number = Date.now, termsChanged?: KeyTermsChanged): KeyCache {
	const cache = new Map<string, { token: AuthToken | null; at: number; until: number }>()
	/**
	 * Whether a key disabled, deleted or changed on another instance would be heard here at once (lib/bus.ts): while
	 * it is not (the Redis or PostgreSQL bus down), a revoked key would otherwise work here for a cached minute.
	 */
	const hears = hearsOthers(bus, db.kind)
	/** Until when an entry may be used as it is (after, it is refreshed). */
	const freshUntil = (hit: { at: number; until: number }) => (hears() ? hit.until : Math.min(hit.until, hit.at + DETACHED_TTL_MS))
	const fresh = (hit: { at: number; until: number }, t: number) => freshUntil(hit) >= t
	/**
	 * One lookup per key at a time: when an entry expires under load (every minute for a busy key) or a burst brings a
	 * key nobody has used yet, the requests in flight share one query rather than each sending its own (1,000 streams
	 * opened at once had queued 1,000 lookups on the pool, ~0.6 s before the first chunk).
	 */
	const loading = new Map<string, Promise<AuthToken | null>>()
	const forget = (hash: string) => {
		cache.delete(hash)
		loading.delete(hash)
	}
	// After the bus was down, any key may have been revoked or changed meanwhile: everything is looked up again.
	const invalidations = ackedTopic(
		bus,
		'token-invalidate',
		(hashes) => {
			for (const hash of hashes.split(',')) forget(hash)
		},
		() => {
			cache.clear()
			loading.clear()
		},
		INVALIDATE_WAIT_MS,
	)

	function refresh(hash: string): Promise<AuthToken | null> {
		const running = loading.get(hash)
		if (running) return running
		const p: Promise<AuthToken | null> = load(hash).then(
			(token) => {
				// Not when the key was invalidated meanwhile: what this query read may be what changed.
				if (loading.get(hash) === p) {
					// Changed on another instance, which could not tell this one (no Redis, or Redis down): the lookup
					// that refreshes a stale entry is how this instance learns of it. (An invalidation drops the entry.)
					const before = cache.get(hash)?.token
					if (before && termsOf(before) !== termsOf(token))
						termsChanged?.(before.accountStatus !== token?.accountStatus ? { accountId: before.accountId } : { accountId: before.accountId, tokenId: before.id })
					if (cache.size > 100_000) cache.clear() // bound memory against key-spraying
					const t = now()
					cache.set(hash, { token, at: t, until: t + (token ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) })
					loading.delete(hash)
				}
				return token
			},
			(e: unknown) => {
				if (loading.get(hash) === p) loading.delete(hash)
				throw e
			},
		)
		loading.set(hash, p)
		return p
	}

	async function load(hash: string): Promise<AuthToken | null> {
		const [found] = await db.orm
			.select({ token: apiTokens, accountStatus: accounts.status })
			.from(apiTokens)
			.innerJoin(accounts, eq(accounts.id, apiTokens.accountId))
			.where(eq(apiTokens.keyHash, hash))
			.limit(1)
		if (!found) return null
		const row = found.token
		return {
			id: row.id,
			keyId: hash.slice(0, 24),
			accountId: row.accountId,
			name: row.name,
			status: row.status,
			accountStatus: found.accountStatus,
			expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
			spendLimit: row.spendLimit,
			allowedModels: row.allowedModels ?? null,
			rpmLimit: row.rpmLimit,
			tpmLimit: row.tpmLimit,
		}
	}

	return {
		async authenticate(key) {
			if (!key) throw new GatewayError('authentication', 'Missing API key: send Authorization: Bearer sk-…', { code: 'missing_api_key' })
			if (!wellFormed(key)) throw new GatewayError('authentication', 'Invalid API key', { code: 'invalid_api_key' })
			const hash = sha256Hex(key)
			const t = now()
			const hit = cache.get(hash)
			let tok: AuthToken | null
			if (hit && fresh(hit, t)) tok = hit.token
			else if (hit?.token && freshUntil(hit) + STALE_GRACE_MS >= t) {
				// A valid key just past its freshness: used while one lookup refreshes it (changes made through the API
				// reach the cache at once, by invalidation; this only bounds how stale anything else can be).
				tok = hit.token
				refresh(hash).catch(() => {})
			} else tok = await refresh(hash)
			const refused = keyRefusal(tok, t)
			if (refused) throw refused
			return tok!
		},
		cached(key) {
			if (!key || !wellFormed(key)) return undefined
			const hit = cache.get(sha256Hex(key))
			const t = now()
			const tok = hit && fresh(hit, t) ? hit.token : null
			return tok && tok.status === 'active' && tok.accountStatus === 'active' && (tok.expiresAt === null || tok.expiresAt > t) ? tok : undefined
		},
		invalidate: async (...hashes) => {
			if (hashes.length) await invalidations.publish(hashes.join(','))
		},
		size: () => cache.size,
	}
}

/** Creates the stored form of a new key. */
export async function sealKey(cipher: Cipher, key = generateKey()) {
	return { key, keyHash: sha256Hex(key), keyEnc: await cipher.encrypt(key), keyHint: keyHint(key) }
}
