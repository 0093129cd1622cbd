/**
 * SECRET_KEY with the embedded database (src/config/secret-key.ts): a generated key is saved into DATA_DIR, owner-only,
 * only once the start's checks passed; a refusal says where the key came from.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadEnv } from '../../../src/config/env'
import { resolveSecretKey } from '../../../src/config/secret-key'
import { SecretKeyMismatch } from '../../../src/lib/secrets'

const roots: string[] = []
const fresh = () => {
	const d = mkdtempSync(join(tmpdir(), 'sb-secret-'))
	roots.push(d)
	return join(d, 'data')
}
let umask: number
beforeEach(() => {
	umask = process.umask(0o022)
})
afterEach(() => {
	process.umask(umask)
})
afterAll(() => {
	for (const d of roots) rmSync(d, { recursive: true, force: true })
})

const refusal = (fn: () => never) => {
	try {
		fn()
	} catch (e) {
		return e as Error
	}
	throw new Error('did not throw')
}

describe('resolveSecretKey', () => {
	it('should generate a key without writing it, and save it for its owner only when asked', async () => {
		const dir = fresh()
		const secret = await resolveSecretKey(loadEnv({ DATA_DIR: dir }))
		expect(secret.source).toBe('generated')
		expect(secret.key.length).toBe(48)
		expect(existsSync(join(dir, 'secret.key'))).toBe(false)
		await secret.save()
		await secret.save() // once
		expect(readFileSync(join(dir, 'secret.key'), 'utf8')).toBe(`${secret.key}\n`)
		expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600)
		expect(statSync(dir).mode & 0o777).toBe(0o700)
		const again = await resolveSecretKey(loadEnv({ DATA_DIR: dir }))
		expect(again).toMatchObject({ key: secret.key, source: 'file' })
	})

	it('should say, when the stored secrets refuse a generated key, that none was given and the new one is not kept', async () => {
		const dir = fresh()
		const secret = await resolveSecretKey(loadEnv({ DATA_DIR: dir }))
		const e = refusal(() => secret.refuse(new SecretKeyMismatch()))
		expect(e).toBeInstanceOf(SecretKeyMismatch)
		expect(e.message).toBe(
			`the stored secrets cannot be decrypted: SECRET_KEY is not set and ${join(dir, 'secret.key')} does not exist, so this start generated a new key (not saved). Start with the SECRET_KEY they were encrypted with`,
		)
	})

	it('should name the file a refused key was read from, and leave other errors and a given SECRET_KEY as they are', async () => {
		const dir = fresh()
		await (await resolveSecretKey(loadEnv({ DATA_DIR: dir }))).save()
		const fromFile = await resolveSecretKey(loadEnv({ DATA_DIR: dir }))
		expect(refusal(() => fromFile.refuse(new SecretKeyMismatch())).message).toContain(`SECRET_KEY is not set, and the key in ${join(dir, 'secret.key')} is not the one`)
		const other = new Error('database down')
		expect(refusal(() => fromFile.refuse(other))).toBe(other)
		const given = await resolveSecretKey(loadEnv({ DATA_DIR: dir, SECRET_KEY: 'given-secret-key-0123456789' }))
		expect(given.source).toBe('env')
		expect(refusal(() => given.refuse(new SecretKeyMismatch())).message).toContain('cannot be decrypted with this SECRET_KEY')
		await given.save()
		expect(readFileSync(join(dir, 'secret.key'), 'utf8')).toBe(`${fromFile.key}\n`)
	})

	it('should not replace a key file that appeared meanwhile', async () => {
		const dir = fresh()
		const secret = await resolveSecretKey(loadEnv({ DATA_DIR: dir }))
		await (await resolveSecretKey(loadEnv({ DATA_DIR: dir }))).save()
		const kept = readFileSync(join(dir, 'secret.key'), 'utf8')
		await expect(secret.save()).rejects.toThrow('EEXIST')
		expect(readFileSync(join(dir, 'secret.key'), 'utf8')).toBe(kept)
	})
})
