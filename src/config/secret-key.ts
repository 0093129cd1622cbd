/**
 * Resolves SECRET_KEY. With the embedded database a key is generated once into DATA_DIR (so a bare
 * `bun run server` works and restarts can still decrypt); with PostgreSQL the data may be shared by several
 * instances, so the key must be given explicitly.
 */
import { join } from 'node:path'
import type { Sql } from '../db/client'
import { randomString } from '../lib/ids'
import type { Cipher } from '../lib/secrets'
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

/**
 * Refuses a SECRET_KEY that cannot open the API keys the database already stores (for reveal): with a changed key
 * every reveal would fail later, one request at a time. Channel keys need no check here: the config's are encrypted
 * anew at every start, and the catalog fails the start with the same message on any other.
 * @throws SecretKeyMismatch
 */
export async function checkSecretKey(sql: Sql, cipher: Cipher): Promise<void> {
	const [row] = await sql.query<{ key_enc: string }>('SELECT key_enc FROM api_tokens LIMIT 1')
	if (row) await cipher.decrypt(row.key_enc)
}
