/**
 * Console users: each belongs to one account. Passwords are hashed with `Bun.password` (argon2id) and never leave
 * this file. Usernames are stored lower-case so "Alice" and "alice" are one user.
 * @module
 */
import { and, asc, count, eq, ne } from 'drizzle-orm'
import { GatewayError, notFound } from '../../core/errors'
import type { Db } from '../../db/client'
import { accounts, credits, users } from '../../db/schema'
import { deleteUserSessions } from './sessions'

export type UserRow = typeof users.$inferSelect

/**
 * argon2id at OWASP's recommended minimum (19 MiB, 2 passes, https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html)
 * rather than Bun's default 64 MiB: each hash or sign-in holds that memory while it runs, so the default put +64 MB on
 * the server's RSS at every sign-in (and at first start), and concurrent sign-in attempts multiplied it. Hashes made
 * with other parameters still verify (they are in the hash).
 */
const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 })

export const normaliseUsername = (u: string) => u.trim().toLowerCase()

export const userView = (u: UserRow, accountName: string) => ({
	id: u.id,
	username: u.username,
	account_id: u.accountId,
	account_name: accountName,
	is_admin: u.isAdmin,
	status: u.status,
	created_at: u.createdAt.toISOString(),
})

const withAccount = (db: Db) =>
	db.orm
		.select({ user: users, accountName: accounts.name })
		.from(users)
		.innerJoin(accounts, eq(accounts.id, users.accountId))

export async function listUsers(db: Db) {
	const rows = await withAccount(db).orderBy(asc(users.id)).limit(5000)
	return rows.map((r) => userView(r.user, r.accountName))
}

export async function getUser(db: Db, id: number) {
	const [r] = await withAccount(db).where(eq(users.id, id)).limit(1)
	if (!r) throw notFound(`user ${id} not found`)
	return { row: r.user, view: userView(r.user, r.accountName) }
}

export type NewUser = { username: string; password: string; accountId?: number; accountName?: string; isAdmin?: boolean; balanceMicros?: number }

/** Creates a user in an existing account, or in a new account named after `accountName` (default: the username). */
export async function createUser(db: Db, input: NewUser) {
	const username = normaliseUsername(input.username)
	const passwordHash = await hashPassword(input.password)
	const id = await db.orm.transaction(async (tx) => {
		const [taken] = await tx.select({ id: users.id }).from(users).where(eq(users.username, username)).limit(1)
		if (taken) throw new GatewayError('invalid_request', `the username "${username}" is taken`, { param: 'username', status: 409, code: 'username_taken' })
		let accountId = input.accountId
		if (accountId === undefined) {
			const balance = input.balanceMicros ?? 0
			const [acc] = await tx.insert(accounts).values({ name: input.accountName?.trim() || username, balance }).returning({ id: accounts.id })
			accountId = acc!.id
			if (balance > 0) await tx.insert(credits).values({ accountId, amount: balance, note: 'initial balance' })
		} else {
			const [acc] = await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).limit(1)
			if (!acc) throw notFound(`account ${accountId} not found`)
		}
		const [row] = await tx
			.insert(users)
			.values({ username, passwordHash, accountId, isAdmin: input.isAdmin ?? false })
			.onConflictDoNothing()
			.returning({ id: users.id })
		if (!row) throw new GatewayError('invalid_request', `the username "${username}" is taken`, { param: 'username', status: 409, code: 'username_taken' })
		return row.id
	})
	return (await getUser(db, id)).view
}

export type UserChange = { password?: string; isAdmin?: boolean; status?: 'active' | 'disabled' }

/**
 * Changes a user. `actorId` is the administrator making the change: they cannot demote or disable themselves,
 * and the last active administrator cannot be removed, so the console can never lock everyone out.
 */
export async function updateUser(db: Db, id: number, change: UserChange, actorId?: number) {
	const { row } = await getUser(db, id)
	const losesAdmin = row.isAdmin && row.status === 'active' && (change.isAdmin === false || change.status === 'disabled')
	if (losesAdmin) {
		if (actorId === id) throw new GatewayError('invalid_request', 'you cannot remove your own administrator rights or disable yourself', { code: 'self_lockout' })
		await assertAnotherAdmin(db, id)
	}
	const set: Partial<typeof users.$inferInsert> = {}
	if (change.password !== undefined) set.passwordHash = await hashPassword(change.password)
	if (change.isAdmin !== undefined) set.isAdmin = change.isAdmin
	if (change.status !== undefined) set.status = change.status
	if (Object.keys(set).length) await db.orm.update(users).set(set).where(eq(users.id, id))
	// A new password or a disabled user ends every session, so a stolen cookie stops working too.
	if (change.password !== undefined || change.status === 'disabled') await deleteUserSessions(db, id)
	return (await getUser(db, id)).view
}

/** Deletes a user (the account and its usage stay). */
export async function deleteUser(db: Db, id: number, actorId?: number) {
	const { row } = await getUser(db, id)
	if (actorId === id) throw new GatewayError('invalid_request', 'you cannot delete yourself', { code: 'self_lockout' })
	if (row.isAdmin && row.status === 'active') await assertAnotherAdmin(db, id)
	await deleteUserSessions(db, id)
	await db.orm.delete(users).where(eq(users.id, id))
}

async function assertAnotherAdmin(db: Db, exceptId: number) {
	const [r] = await db.orm
		.select({ n: count() })
		.from(users)
		.where(and(eq(users.isAdmin, true), eq(users.status, 'active'), ne(users.id, exceptId)))
	if (!r || r.n === 0) throw new GatewayError('invalid_request', 'this is the last active administrator; make someone else an administrator first', { code: 'last_admin' })
}

let dummyHash: Promise<string> | undefined

/**
 * The active user with this username and password, or undefined. An unknown username still costs one hash
 * verification, so response time does not tell which usernames exist.
 */
export async function verifyLogin(db: Db, username: string, password: string): Promise<(UserRow & { accountStatus: string }) | undefined> {
	const [found] = await db.orm
		.select({ user: users, accountStatus: accounts.status })
		.from(users)
		.innerJoin(accounts, eq(accounts.id, users.accountId))
		.where(eq(users.username, normaliseUsername(username)))
		.limit(1)
	const row = found?.user
	if (!row) {
		dummyHash ??= hashPassword('switchboard-timing-equaliser')
		await Bun.password.verify(password, await dummyHash)
		return undefined
	}
	const ok = await Bun.password.verify(password, row.passwordHash)
	// The account's status goes with it: a user of a disabled account (POST /api/accounts/:id/disable) is told so.
	return ok && row.status === 'active' ? { ...row, accountStatus: found.accountStatus } : undefined
}

/** Checks a user's current password (own password change). */
export async function checkPassword(db: Db, id: number, password: string): Promise<boolean> {
	const { row } = await getUser(db, id)
	return Bun.password.verify(password, row.passwordHash)
}

export const countUsers = async (db: Db) => (await db.orm.select({ n: count() }).from(users))[0]?.n ?? 0

/** A user's own password change: every other session ends, the one making the change stays signed in. */
export async function changeOwnPassword(db: Db, id: number, password: string, keepIdHash: string) {
	await db.orm.update(users).set({ passwordHash: await hashPassword(password) }).where(eq(users.id, id))
	await deleteUserSessions(db, id, keepIdHash)
}
