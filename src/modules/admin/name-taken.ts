/** A rename onto a name another row holds: 409 naming the field, as a create with that name answers. */
import { GatewayError } from '../../core/errors'

/** SQLSTATE 23505 (unique_violation), also when Drizzle wrapped the driver's error (`cause`); PGlite's carry it too. */
const isUniqueViolation = (e: unknown): boolean => {
	const o = e as { code?: unknown; cause?: { code?: unknown } } | null
	return (o?.code ?? o?.cause?.code) === '23505'
}

/**
 * Runs an update whose only unique column is `name`; the database's refusal of a taken name becomes the same 409 a
 * create answers, instead of a 500 (channel and model names are unique: the config file upserts by them).
 * @example await renaming('channel', body.name, () => db.update(channels).set(set).where(…).returning())
 */
export async function renaming<T>(what: string, name: string | undefined, write: () => Promise<T>): Promise<T> {
	try {
		return await write()
	} catch (e) {
		if (name !== undefined && isUniqueViolation(e)) throw new GatewayError('invalid_request', `a ${what} named "${name}" exists`, { param: 'name', status: 409 })
		throw e
	}
}
