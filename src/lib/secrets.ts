/**
 * Encryption of stored secrets (API keys for reveal, upstream channel keys) with AES-256-GCM from WebCrypto.
 * The AES key is derived from SECRET_KEY with HKDF-SHA256, so any string of enough entropy works as SECRET_KEY.
 * Ciphertext format: base64(iv[12] ‖ ciphertext+tag).
 * @module
 */

export type Cipher = { encrypt(plain: string): Promise<string>; decrypt(enc: string): Promise<string> }

/**
 * A stored secret that this SECRET_KEY cannot open: it was encrypted under another one (the variable changed, or
 * instances sharing a database were given different values). WebCrypto says only "The operation failed for an
 * operation-specific reason", which tells an operator nothing.
 */
export class SecretKeyMismatch extends Error {
	constructor() {
		super('a stored secret cannot be decrypted with this SECRET_KEY: it was encrypted under a different one (every instance and restart must use the same SECRET_KEY)')
		this.name = 'SecretKeyMismatch'
	}
}

const te = new TextEncoder()
const td = new TextDecoder()

export async function createCipher(secret: string): Promise<Cipher> {
	if (secret.length < 16) throw new Error('SECRET_KEY must be at least 16 characters')
	const base = await crypto.subtle.importKey('raw', te.encode(secret), 'HKDF', false, ['deriveKey'])
	const key = await crypto.subtle.deriveKey(
		{ name: 'HKDF', hash: 'SHA-256', salt: te.encode('switchboard/v1'), info: te.encode('stored-secrets') },
		base,
		{ name: 'AES-GCM', length: 256 },
		false,
		['encrypt', 'decrypt'],
	)
	return {
		async encrypt(plain) {
			const iv = crypto.getRandomValues(new Uint8Array(12))
			const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, te.encode(plain)))
			const out = new Uint8Array(12 + ct.length)
			out.set(iv)
			out.set(ct, 12)
			return Buffer.from(out).toString('base64')
		},
		async decrypt(enc) {
			const raw = Buffer.from(enc, 'base64')
			try {
				return td.decode(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: raw.subarray(0, 12) }, key, raw.subarray(12)))
			} catch {
				// AES-GCM's tag check fails for a wrong key (or a damaged value): either way this key cannot open it.
				throw new SecretKeyMismatch()
			}
		},
	}
}

/**
 * sha256 hex, for key lookup (keys have ≥190 bits of entropy, so a fast hash is the right tool here). Bun's one-shot
 * hash: it runs on every request, and a hasher object made, fed and read costs twice as much (0.5–0.7 against
 * 0.22 µs for a key, in a loop).
 */
export function sha256Hex(s: string): string {
	return Bun.SHA256.hash(s, 'hex') as string
}

/** Compares two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
	const ab = te.encode(a)
	const bb = te.encode(b)
	if (ab.length !== bb.length) return false
	let diff = 0
	for (let i = 0; i < ab.length; i++) diff |= ab[i]! ^ bb[i]!
	return diff === 0
}
