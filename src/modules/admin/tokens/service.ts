/** API keys of an account: create, list, reveal, update, delete (soft: usage rows keep their reference). */
import { and, desc, eq, getTableColumns, ne } from 'drizzle-orm'
import { inFlight } from '../../../billing/views'
import { sealKey } from '../../../auth/api-key'
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
	svc.keys.invalidate(sealed.keyHash)
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

export const listTokens = async (svc: Services, accountId?: number) => {
	await svc.ledger.flush()
	return svc.db.orm
		.select(viewColumns())
		.from(apiTokens)
		.where(accountId === undefined ? ne(apiTokens.status, 'deleted') : and(eq(apiTokens.accountId, accountId), ne(apiTokens.status, 'deleted')))
		.orderBy(desc(apiTokens.id))
		.limit(5000)
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
	svc.keys.invalidate(row.keyHash)
	// Leases were sized by the old limit and status: every instance gives this key's back.
	await svc.ledger.reclaim({ accountId: row.accountId, tokenId: row.id })
	return getToken(svc, row.id)
}

export async function deleteToken(svc: Services, row: TokenRow) {
	await svc.db.orm.update(apiTokens).set({ status: 'deleted' }).where(eq(apiTokens.id, row.id))
	svc.keys.invalidate(row.keyHash)
	await svc.ledger.reclaim({ accountId: row.accountId, tokenId: row.id })
}
