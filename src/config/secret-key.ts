/**
 * Resolves SECRET_KEY. With the embedded database a key is generated once into DATA_DIR (so a bare
 * `bun run server` works and restarts can still decrypt); with PostgreSQL the data may be shared by several
 * instances, so the key must be given explicitly.
 *
 * A generated key is saved only once the start's checks have passed (`save`): a start refused because the stored
 * secrets were encrypted under another key must not leave behind a key that opens nothing, which the next start
 * would then read as if it were the right one.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Sql } from '../db/client'
import { randomString } from '../lib/ids'
import { type Cipher, SecretKeyMismatch } from '../lib/secrets'
import type { Env } from './env'

export type SecretKey = {
	key: string
	/** SECRET_KEY, DATA_DIR's secret.key, or made by this start (saved by `save`). */
	source: 'env' | 'file' | 'generated'
	/** Saves a generated key into DATA_DIR, readable by its owner only (0600); nothing for the others. */
	save(): Promise<void>
	/** Rethrows an error, a SecretKeyMismatch saying where this key came from (use as `.catch(secret.refuse)`). */
	refuse(e: unknown): never
}

export async function resolveSecretKey(env: Env): Promise<SecretKey> {
	if (env.secretKey) return secretKey(env.secretKey, 'env', '')
	if (env.databaseUrl)
		throw new Error('SECRET_KEY is required with DATABASE_URL (it encrypts stored keys; every instance needs the same value)')
	const path = join(env.dataDir, 'secret.key')
	const file = Bun.file(path)
	if (await file.exists()) return secretKey((await file.text()).trim(), 'file', path)
	return secretKey(randomString(48), 'generated', path)
}

function secretKey(key: string, source: SecretKey['source'], path: string): SecretKey {
	let saved = source !== 'generated'
	return {
		key,
		source,
		async save() {
			if (saved) return
			await mkdir(dirname(path), { recursive: true, mode: 0o700 })
			// Bun.write has no exclusive create: `wx` fails rather than replace a key another start may have written.
			await writeFile(path, key + '\n', { mode: 0o600, flag: 'wx' })
			saved = true
		},
		refuse(e) {
			if (!(e instanceof SecretKeyMismatch) || source === 'env') throw e
			const why =
				source === 'file'
					? `SECRET_KEY is not set, and the key in ${path} is not the one they were encrypted with`
					: `SECRET_KEY is not set and ${path} does not exist, so this start generated a new key (not saved)`
			const err = new SecretKeyMismatch()
			err.message = `the stored secrets cannot be decrypted: ${why}. Start with the SECRET_KEY they were encrypted with`
			throw err
		},
	}
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
