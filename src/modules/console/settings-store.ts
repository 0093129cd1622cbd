/** Run-time settings of the console, kept in the `settings` table (key → JSON value). */
import { inArray } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { settings } from '../../db/schema'

export type ConsoleSettings = {
	signupEnabled: boolean
	/** micro-USD credited to accounts created by self sign-up. */
	signupBalance: number
}

const KEYS = { signupEnabled: 'console.signup_enabled', signupBalance: 'console.signup_balance' } as const

export const DEFAULT_SETTINGS: ConsoleSettings = { signupEnabled: false, signupBalance: 0 }

export async function readSettings(db: Db): Promise<ConsoleSettings> {
	const rows = await db.orm
		.select()
		.from(settings)
		.where(inArray(settings.key, Object.values(KEYS)))
	const get = (k: string) => rows.find((r) => r.key === k)?.value
	const enabled = get(KEYS.signupEnabled)
	const balance = get(KEYS.signupBalance)
	return {
		signupEnabled: typeof enabled === 'boolean' ? enabled : DEFAULT_SETTINGS.signupEnabled,
		signupBalance: typeof balance === 'number' && Number.isSafeInteger(balance) && balance >= 0 ? balance : DEFAULT_SETTINGS.signupBalance,
	}
}

export async function writeSettings(db: Db, patch: Partial<ConsoleSettings>): Promise<ConsoleSettings> {
	for (const [name, value] of Object.entries(patch) as Array<[keyof ConsoleSettings, unknown]>) {
		if (value === undefined) continue
		await db.orm
			.insert(settings)
			.values({ key: KEYS[name], value })
			.onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: new Date() } })
	}
	return readSettings(db)
}
