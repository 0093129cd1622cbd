/**
 * Resolves SECRET_KEY. With the embedded database a key is generated once into DATA_DIR (so a bare
 * `bun run server` works and restarts can still decrypt); with PostgreSQL the data may be shared by several
 * instances, so the key must be given explicitly.
 */
import { join } from 'node:path'
import { randomString } from '../lib/ids'
import type { Env } from './env'

export async function resolveSecretKey(env: Env): Promise<string> {
	if (env.secretKey) return env.secretKey
	if (env.databaseUrl)
		throw new Error('SECRET_KEY is required with DATABASE_URL (it encrypts stored keys; every instance needs the same value)')
	const file = Bun.file(join(env.dataDir, 'secret.key'))
	if (await file.exists()) return (await file.text()).trim()
	const key = randomString(48)
	await Bun.write(file, key + '\n')
	return key
}
