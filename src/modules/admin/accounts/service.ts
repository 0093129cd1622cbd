/** Accounts and credits. Crediting writes the append-only `credits` row and the balance in one transaction. */
import { desc, eq, getTableColumns, sql } from 'drizzle-orm'
import { availableBalance } from '../../../billing/views'
import { GatewayError, notFound } from '../../../core/errors'
import type { Db } from '../../../db/client'
import { accounts, credits } from '../../../db/schema'

export type AccountRow = typeof accounts.$inferSelect

export async function createAccount(db: Db, name: string, balanceMicros: number): Promise<AccountRow> {
	return db.orm.transaction(async (tx) => {
		const [row] = await tx.insert(accounts).values({ name, balance: balanceMicros }).returning()
		if (balanceMicros > 0) await tx.insert(credits).values({ accountId: row!.id, amount: balanceMicros, note: 'initial balance' })
		return row!
	})
}

/** The row with `balance` as what is available (see billing/views.ts); callers flush the ledger first. */
const viewColumns = () => ({ ...getTableColumns(accounts), balance: availableBalance() })

export async function getAccount(db: Db, id: number): Promise<AccountRow> {
	const [row] = await db.orm.select(viewColumns()).from(accounts).where(eq(accounts.id, id)).limit(1)
	if (!row) throw notFound(`account ${id} not found`)
	return row
}

export const listAccounts = (db: Db) => db.orm.select(viewColumns()).from(accounts).orderBy(desc(accounts.id)).limit(1000)

/** Adds (or, negative, removes) money; returns the available balance. A debit never takes the balance below zero. */
export async function creditAccount(db: Db, id: number, amountMicros: number, note?: string): Promise<number> {
	return db.orm.transaction(async (tx) => {
		const [row] = await tx
			.update(accounts)
			.set({ balance: sql`${accounts.balance} + ${amountMicros}` })
			.where(sql`${accounts.id} = ${id} AND ${accounts.balance} + ${amountMicros} >= 0`)
			.returning({ balance: accounts.balance })
		if (!row) {
			// Inside the transaction: PGlite has one connection, so a query outside it would wait forever.
			const [exists] = await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, id)).limit(1)
			if (!exists) throw notFound(`account ${id} not found`)
			throw new GatewayError('invalid_request', 'amount would take the balance below zero', { param: 'amount' })
		}
		await tx.insert(credits).values({ accountId: id, amount: amountMicros, note: note ?? null })
		const [after] = await tx.select({ balance: availableBalance() }).from(accounts).where(eq(accounts.id, id))
		return after!.balance
	})
}
