/** Accounts and credits. Crediting writes the append-only `credits` row and the balance in one transaction. */
import { and, count, desc, eq, getTableColumns, lt, ne, or, sql, type SQL } from 'drizzle-orm'
import type { Principal } from '../../../auth/principal'
import type { Ledger } from '../../../billing/ledger'
import { microsToUsd } from '../../../billing/money'
import { availableBalance } from '../../../billing/views'
import { GatewayError, notFound } from '../../../core/errors'
import type { Db } from '../../../db/client'
import { accounts, apiTokens, credits, users } from '../../../db/schema'
import type { Services } from '../../../services'
import { deleteUserSessions } from '../../console/sessions'
import { revokeKeys } from '../tokens/service'

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

/** The most accounts one page of `GET /api/accounts` holds, and the page size when none is asked for (the list's old cap). */
export const MAX_ACCOUNT_PAGE = 1000

export type AccountFilter = {
	/** Only this account (a user's own). */
	id?: number
	/** Part of the name (any case), or the id (`12` or `#12`). */
	search?: string
	/** Only accounts older than this id (the previous page's last). */
	before?: number
	limit?: number
}

/** What a search matches: the name holding the text (strpos: no LIKE wildcards), or the id it names. */
function searchWhere(text: string): SQL {
	const parts = [sql`strpos(lower(${accounts.name}), ${text.toLowerCase()}) > 0`]
	const id = /^#?(\d{1,10})$/.exec(text)?.[1]
	if (id && Number(id) <= 2_147_483_647) parts.push(eq(accounts.id, Number(id)))
	return or(...parts)!
}

/** One page of accounts, newest first, and how many match the filter in all (every page); callers flush the ledger first. */
export async function listAccounts(db: Db, f: AccountFilter = {}) {
	const search = f.search?.trim()
	const where = search ? [searchWhere(search)] : []
	if (f.id !== undefined) where.push(eq(accounts.id, f.id))
	const limit = f.limit ?? MAX_ACCOUNT_PAGE
	const [rows, [counted]] = await Promise.all([
		db.orm
			.select(viewColumns())
			.from(accounts)
			.where(and(...where, ...(f.before === undefined ? [] : [lt(accounts.id, f.before)])))
			.orderBy(desc(accounts.id))
			.limit(limit + 1),
		db.orm.select({ n: count() }).from(accounts).where(and(...where)),
	])
	return { rows: rows.slice(0, limit), more: rows.length > limit, total: counted!.n }
}

/** Adds (or, negative, removes) money; returns the available balance. A debit never takes the balance below zero. */
export async function creditAccount(db: Db, id: number, amountMicros: number, note?: string): Promise<number> {
	const r = await applyCredit(db, id, amountMicros, note)
	if (!r.ok) throw amountMicros > 0 ? aboveMost() : belowZero()
	return r.balance
}

/** How long a debit waits for other instances to give back the unused lease money it needs. */
export const DEBIT_WAIT_MS = 3_000
/** Pauses between tries while they do; the last one repeats. */
const DEBIT_BACKOFF_MS = [10, 25, 50, 100, 200, 400]

/**
 * Removes money (`amountMicros` < 0) up to the balance the API shows, which counts the unused part of every lease
 * (billing/views.ts). That part stays out of the `balance` column until the instance holding the lease gives it back:
 * only that instance knows what its requests in flight hold now (it reserves from memory), so nothing here takes from
 * a lease. The debit asks every instance for its unused lease money (this one's comes back before the first try, the
 * others' through the bus) and tries again while they give it back, for at most `waitMs`. It is refused at once (400)
 * when even the balance shown, with what the database knows to be in use, does not cover it.
 * Returns the available balance.
 * @example await debitAccount(db, ledger, 7, -740_000) // $0.74 out, though another instance leased part of it
 */
export async function debitAccount(db: Db, ledger: Pick<Ledger, 'reclaim'>, id: number, amountMicros: number, note?: string, waitMs = DEBIT_WAIT_MS): Promise<number> {
	const deadline = Date.now() + waitMs
	for (let i = 0; ; i++) {
		// Every round: an instance may have leased again since it gave back (a request came in).
		await ledger.reclaim({ accountId: id })
		const r = await applyCredit(db, id, amountMicros, note)
		if (r.ok) return r.balance
		if (r.available + amountMicros < 0) throw belowZero()
		if (Date.now() >= deadline) {
			const leased = microsToUsd(r.available - r.balance)
			throw new GatewayError(
				'invalid_request',
				`$${leased} of the balance is leased by another instance that has not given it back within ${waitMs} ms; try again ` +
					'(an instance that cannot be asked gives a lease back after LEASE_IDLE_MS unused, or HOLD_TTL_SECONDS after it stopped)',
				{ status: 409, param: 'amount', code: 'balance_leased' },
			)
		}
		await Bun.sleep(Math.min(DEBIT_BACKOFF_MS[Math.min(i, DEBIT_BACKOFF_MS.length - 1)]!, Math.max(1, deadline - Date.now())))
	}
}

const belowZero = () => new GatewayError('invalid_request', 'amount would take the balance below zero', { param: 'amount' })

/**
 * The most a balance holds: micro-USD past 2^53 are no longer exact as the numbers the API and the ledger read them in
 * (a credit of $0.000001 was lost, another added 4 µUSD).
 */
const MOST_MICROS = Number.MAX_SAFE_INTEGER
const aboveMost = () =>
	new GatewayError('invalid_request', `amount would take the balance above $${microsToUsd(MOST_MICROS)}, the most an account holds`, { param: 'amount' })

type Applied = { ok: true; balance: number } | { ok: false; balance: number; available: number }

/**
 * One transaction: the `balance` column moves only when it stays at or above zero (the row locked by the update),
 * with the append-only `credits` row. Refused, it reports the column and the available balance as locked.
 */
async function applyCredit(db: Db, id: number, amountMicros: number, note?: string): Promise<Applied> {
	return db.orm.transaction(async (tx) => {
		const [row] = await tx
			.update(accounts)
			.set({ balance: sql`${accounts.balance} + ${amountMicros}` })
			.where(sql`${accounts.id} = ${id} AND ${accounts.balance} + ${amountMicros} >= 0 AND ${accounts.balance} + ${amountMicros} <= ${MOST_MICROS}`)
			.returning({ balance: accounts.balance })
		if (!row) {
			// Inside the transaction: PGlite has one connection, so a query outside it would wait forever.
			const [now] = await tx.select({ balance: accounts.balance, available: availableBalance() }).from(accounts).where(eq(accounts.id, id)).limit(1)
			if (!now) throw notFound(`account ${id} not found`)
			return { ok: false, balance: now.balance, available: now.available }
		}
		await tx.insert(credits).values({ accountId: id, amount: amountMicros, note: note ?? null })
		const [after] = await tx.select({ balance: availableBalance() }).from(accounts).where(eq(accounts.id, id))
		return { ok: true, balance: after!.balance }
	})
}

/**
 * Disables or re-enables an account. Disabled, its keys are refused (401 `account_disabled`) and its users' console
 * sessions and sign-ins too, on every instance at once: each key is dropped from every instance's cache (through the
 * bus, as a revoked key is) and the instances give back the money they leased for the account, so nothing is charged
 * after. Requests already running finish and are billed as usual. An administrator cannot disable the account they
 * are signed in with, nor the last one holding an active administrator (the console would be locked for everyone).
 * @example await setAccountStatus(svc, 7, 'disabled', principal)
 */
export async function setAccountStatus(svc: Services, id: number, status: 'active' | 'disabled', actor: Principal): Promise<AccountRow> {
	const row = await getAccount(svc.db, id)
	if (status === 'disabled' && row.status === 'active') {
		if (actor.kind === 'user' && actor.accountId === id) throw new GatewayError('invalid_request', 'you cannot disable the account you are signed in with', { code: 'self_lockout' })
		const [others] = await svc.db.orm
			.select({ n: count() })
			.from(users)
			.innerJoin(accounts, eq(accounts.id, users.accountId))
			.where(and(eq(users.isAdmin, true), eq(users.status, 'active'), eq(accounts.status, 'active'), ne(accounts.id, id)))
		const [here] = await svc.db.orm
			.select({ n: count() })
			.from(users)
			.where(and(eq(users.accountId, id), eq(users.isAdmin, true), eq(users.status, 'active')))
		if ((here?.n ?? 0) > 0 && (others?.n ?? 0) === 0)
			throw new GatewayError('invalid_request', 'this account holds the last active console administrator; make someone in another account an administrator first', { code: 'last_admin' })
	}
	if (row.status !== status) {
		await svc.db.orm.update(accounts).set({ status }).where(eq(accounts.id, id))
		const keys = await svc.db.orm.select({ keyHash: apiTokens.keyHash }).from(apiTokens).where(eq(apiTokens.accountId, id))
		// Re-enabled too: a key refused a moment ago must not stay refused from a cache.
		await revokeKeys(svc, keys.map((k) => k.keyHash), { accountId: id }, status === 'disabled')
		if (status === 'disabled') {
			const ids = await svc.db.orm.select({ id: users.id }).from(users).where(eq(users.accountId, id))
			for (const u of ids) await deleteUserSessions(svc.db, u.id)
		}
	}
	await svc.ledger.flush()
	return getAccount(svc.db, id)
}
