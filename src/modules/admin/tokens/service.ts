/** API keys of an account: create, list, reveal, update, delete (soft: usage rows keep their reference). */
import { and, count, desc, eq, getTableColumns, inArray, lt, ne, or, sql, type SQL } from 'drizzle-orm'
import { inFlight } from '../../../billing/views'
import { KEY_PREFIX, sealKey } from '../../../auth/api-key'
import { sha256Hex } from '../../../lib/secrets'
import { notFound } from '../../../core/errors'
import { apiTokens } from '../../../db/schema'
import type { Services } from '../../../services'
import { getAccount } from '../accounts/service'

export type TokenRow = typeof apiTokens.$inferSelect

export type TokenInput = {
	name?: string
	expiresAt?: Date | null
	spendLimit?: number | null
	status?: 'active' | 'disabled'
	rpmLimit?: number | null
	tpmLimit?: number | null
	allowedModels?: string[] | null
}

export async function createToken(svc: Services, accountId: number, input: TokenInput & { name: string }) {
	await getAccount(svc.db, accountId)
	const sealed = await sealKey(svc.cipher)
	const [row] = await svc.db.orm
		.insert(apiTokens)
		.values({
			accountId,
			name: input.name,
			keyHash: sealed.keyHash,
			keyEnc: sealed.keyEnc,
			keyHint: sealed.keyHint,
			expiresAt: input.expiresAt ?? null,
			spendLimit: input.spendLimit ?? null,
			rpmLimit: input.rpmLimit ?? null,
			tpmLimit: input.tpmLimit ?? null,
			allowedModels: input.allowedModels ?? null,
		})
		.returning()
	// A lookup of this key may have been cached as unknown moments ago.
	await svc.keys.invalidate(sealed.keyHash)
	return { row: row!, key: sealed.key }
}

/** The row with `reserved` as what requests in flight hold (see billing/views.ts). */
const viewColumns = () => ({ ...getTableColumns(apiTokens), reserved: inFlight() })

export async function getToken(svc: Services, id: number): Promise<TokenRow> {
	await svc.ledger.flush()
	const [row] = await svc.db.orm
		.select(viewColumns())
		.from(apiTokens)
		.where(and(eq(apiTokens.id, id), ne(apiTokens.status, 'deleted')))
		.limit(1)
	if (!row) throw notFound(`token ${id} not found`)
	return row
}

/** The most keys one page of `GET /api/tokens` holds, and the page size when none is asked for (the list's old cap). */
export const MAX_TOKEN_PAGE = 5000

export type TokenFilter = {
	accountId?: number
	/** Part of the name or of the masked key (any case), or a whole key. */
	search?: string
	ids?: number[]
	/** Deleted keys too (status `deleted`): for naming the keys that old usage rows name. */
	includeDeleted?: boolean
	/** Only keys older than this id (the previous page's last). */
	before?: number
	limit?: number
}

/** What a search matches: the name or the masked key holding the text (strpos: no LIKE wildcards), or the whole key by its hash. */
function searchWhere(text: string): SQL {
	const lower = text.toLowerCase()
	const parts = [sql`strpos(lower(${apiTokens.name}), ${lower}) > 0`, sql`strpos(lower(${apiTokens.keyHint}), ${lower}) > 0`]
	if (text.startsWith(KEY_PREFIX)) parts.push(eq(apiTokens.keyHash, sha256Hex(text)))
	return or(...parts)!
}

/** One page of keys, newest first, and how many match the filter in all (every page). */
export async function listTokens(svc: Services, f: TokenFilter = {}) {
	await svc.ledger.flush()
	const where: SQL[] = f.includeDeleted ? [] : [ne(apiTokens.status, 'deleted')]
	if (f.accountId !== undefined) where.push(eq(apiTokens.accountId, f.accountId))
	const search = f.search?.trim()
	if (search) where.push(searchWhere(search))
	if (f.ids) where.push(inArray(apiTokens.id, f.ids))
	const limit = f.limit ?? MAX_TOKEN_PAGE
	const [rows, [counted]] = await Promise.all([
		svc.db.orm
			.select(viewColumns())
			.from(apiTokens)
			.where(and(...where, ...(f.before === undefined ? [] : [lt(apiTokens.id, f.before)])))
			.orderBy(desc(apiTokens.id))
			.limit(limit + 1),
		svc.db.orm.select({ n: count() }).from(apiTokens).where(and(...where)),
	])
	const page = rows.slice(0, limit)
	return { rows: page, more: rows.length > limit, total: counted!.n }
}

export const revealToken = async (svc: Services, row: TokenRow) => svc.cipher.decrypt(row.keyEnc)

export async function updateToken(svc: Services, row: TokenRow, input: TokenInput): Promise<TokenRow> {
	const set: Partial<typeof apiTokens.$inferInsert> = {}
	if (input.name !== undefined) set.name = input.name
	if (input.expiresAt !== undefined) set.expiresAt = input.expiresAt
	if (input.spendLimit !== undefined) set.spendLimit = input.spendLimit
	if (input.status !== undefined) set.status = input.status
	if (input.rpmLimit !== undefined) set.rpmLimit = input.rpmLimit
	if (input.tpmLimit !== undefined) set.tpmLimit = input.tpmLimit
	if (input.allowedModels !== undefined) set.allowedModels = input.allowedModels
	if (Object.keys(set).length === 0) return row
	await svc.db.orm.update(apiTokens).set(set).where(eq(apiTokens.id, row.id))
	await revoke(svc, row, Object.keys(set).some((k) => k !== 'name'))
	return getToken(svc, row.id)
}

export async function deleteToken(svc: Services, row: TokenRow) {
	await svc.db.orm.update(apiTokens).set({ status: 'deleted' }).where(eq(apiTokens.id, row.id))
	await revoke(svc, row, true)
}

/** How long a change to a key waits for the other instances to give back the unused money they leased of it. */
export const RECLAIM_WAIT_MS = 3_000
const RECLAIM_BACKOFF_MS = [5, 10, 25, 50, 100, 200]

/**
 * After a change of the key's row: every instance drops the key from its cache and gives back its leases of the key,
 * which were sized by the old limit and status. Other instances hear both through the bus (Redis, or PostgreSQL
 * LISTEN/NOTIFY), and until they have, one of them could still serve from its lease: a limit lowered below what is
 * spent would be passed, a disabled key still charged. So, when `wait`, the change returns once the leases that held
 * unused money have given it back (at most RECLAIM_WAIT_MS: an instance that cannot be asked gives its lease back after
 * LEASE_IDLE_MS unused, or after HOLD_TTL_SECONDS once it stopped). Each instance hears the invalidation before the
 * reclaim published after it, so an instance that gave back has dropped the key too. On PGlite (one process, an
 * in-process bus) no other instance can be asked: nothing to wait for.
 */
const revoke = (svc: Services, row: TokenRow, wait: boolean) => revokeKeys(svc, [row.keyHash], { accountId: row.accountId, tokenId: row.id }, wait)

/**
 * `revoke` for several keys at once (every key of an account being disabled, scope `{accountId}`): their cache
 * entries dropped on every instance, then the scope's leases given back, waited for as above.
 */
export async function revokeKeys(svc: Services, keyHashes: string[], scope: { accountId: number; tokenId?: number }, wait: boolean) {
	// Waited for: a key enabled again or given other models, which holds no lease money another instance could give
	// back, must not be served on another instance as it was.
	await svc.keys.invalidate(...keyHashes)
	const others = wait && svc.bus.kind !== 'memory' ? await unusedLeases(svc, scope) : []
	await svc.ledger.reclaim(scope)
	const deadline = Date.now() + RECLAIM_WAIT_MS
	for (let i = 0, left = others; left.length && Date.now() < deadline; i++) {
		await Bun.sleep(Math.min(RECLAIM_BACKOFF_MS[Math.min(i, RECLAIM_BACKOFF_MS.length - 1)]!, Math.max(1, deadline - Date.now())))
		const still = new Set(await unusedLeases(svc, scope))
		left = left.filter((id) => still.has(id))
	}
}

/** Ids of the key's (or, without a key, the account's) leases holding money no request uses (any instance's, as of its last flush). */
async function unusedLeases(svc: Services, scope: { accountId: number; tokenId?: number }): Promise<string[]> {
	const rows =
		scope.tokenId === undefined
			? await svc.db.sql.query<{ id: string }>('SELECT id FROM ledger_leases WHERE account_id = $1 AND amount > in_use', [scope.accountId])
			: await svc.db.sql.query<{ id: string }>('SELECT id FROM ledger_leases WHERE token_id = $1 AND amount > in_use', [scope.tokenId])
	return rows.map((r) => r.id)
}
