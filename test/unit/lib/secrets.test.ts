import { describe, expect, it } from 'bun:test'
import { createCipher, safeEqual, sha256Hex } from '../../../src/lib/secrets'

describe('secrets', () => {
	it('should hash keys to SHA-256 in lowercase hex, the form stored in api_tokens.key_hash', async () => {
		// FIPS 180-2's test vector, and a key's hash against WebCrypto's.
		expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
		const key = `sk-${'a1'.repeat(24)}é`
		const web = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key))).toString('hex')
		expect(sha256Hex(key)).toBe(web)
	})
	it('should compare strings exactly', () => {
		expect(safeEqual('abc', 'abc')).toBe(true)
		expect(safeEqual('abc', 'abd')).toBe(false)
		expect(safeEqual('abc', 'abcd')).toBe(false)
	})
	it('should decrypt what it encrypted, and only with the same secret', async () => {
		const a = await createCipher('secret-one-that-is-long-enough-1234')
		const b = await createCipher('secret-two-that-is-long-enough-1234')
		const enc = await a.encrypt('sk-plain')
		expect(enc).not.toContain('sk-plain')
		expect(await a.decrypt(enc)).toBe('sk-plain')
		// An operator who changed SECRET_KEY is told so, not WebCrypto's "operation-specific reason".
		await expect(b.decrypt(enc)).rejects.toThrow(/SECRET_KEY/)
	})
})
