/**
 * Password-based decryption and MACs of PKCS#12 files and encrypted PKCS#8 keys:
 * - PBES2 (RFC 8018 §6.2): PBKDF2 with HMAC-SHA1/224/256/384/512 as its PRF, AES-128/192/256-CBC or DES-EDE3-CBC; what
 *   OpenSSL 3, Key Vault and `openssl pkcs8 -topk8` write. Its password is the UTF-8 bytes.
 * - PKCS#12's own PBE schemes (RFC 7292 appendix C): pbeWithSHAAnd3-KeyTripleDES-CBC, pbeWithSHAAnd2-KeyTripleDES-CBC,
 *   pbeWithSHAAnd128BitRC2-CBC and pbeWithSHAAnd40BitRC2-CBC, keyed by the PKCS#12 KDF (appendix B) over the password
 *   as a BMPString with its two-zero-byte terminator: what older exports (`openssl pkcs12 -legacy`, Windows) write.
 * - The MACs of a PFX: HMAC keyed by that KDF (RFC 7292 §5), or PBMAC1 (RFC 9579: PBKDF2, then HMAC).
 * Ciphers and PBKDF2 are node:crypto's. Errors name the algorithm, never the password or bytes.
 * @module
 */
import { createDecipheriv, createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto'
import { type Asn1, Asn1Error, algorithmOf, octets, sequence, smallInt } from './der'

/** The password does not open the file (a MAC that differs, a padding that does not check). */
export class WrongPassword extends Error {}
/** An algorithm the gateway does not implement, named. */
export class UnsupportedAlgorithm extends Error {}

/** The password in the forms the schemes take: UTF-8 (PBES2, PBMAC1) and BMPString with its terminator (PKCS#12 KDF). */
export type Password = { utf8: Uint8Array; bmp: Uint8Array }

/**
 * The password's forms. An empty password's BMPString is its terminator, `00 00`, or (as OpenSSL also tries, and some
 * writers use) no bytes at all: `emptyBmp` picks the latter.
 */
export function passwordOf(text: string, emptyBmp = false): Password {
	const bmp = new Uint8Array(emptyBmp && !text ? 0 : (text.length + 1) * 2)
	for (let i = 0; i < text.length; i++) [bmp[2 * i], bmp[2 * i + 1]] = [text.charCodeAt(i) >> 8, text.charCodeAt(i) & 0xff]
	return { utf8: new TextEncoder().encode(text), bmp }
}

/**
 * Costs beyond any exporter's (PBKDF2: OpenSSL 2048, .NET up to 600000; the PKCS#12 KDF, hashed here one iteration at
 * a time: OpenSSL 2048, Windows 2000, Java 10000): refused, as they would stall the gateway for seconds.
 */
const MAX_PBKDF2_ITERATIONS = 1_000_000
const MAX_PKCS12_KDF_ITERATIONS = 100_000

const HASHES: Record<string, { name: string; u: number; v: number }> = {
	'1.3.14.3.2.26': { name: 'sha1', u: 20, v: 64 },
	'2.16.840.1.101.3.4.2.4': { name: 'sha224', u: 28, v: 64 },
	'2.16.840.1.101.3.4.2.1': { name: 'sha256', u: 32, v: 64 },
	'2.16.840.1.101.3.4.2.2': { name: 'sha384', u: 48, v: 128 },
	'2.16.840.1.101.3.4.2.3': { name: 'sha512', u: 64, v: 128 },
}
const HMACS: Record<string, string> = {
	'1.2.840.113549.2.7': 'sha1',
	'1.2.840.113549.2.8': 'sha224',
	'1.2.840.113549.2.9': 'sha256',
	'1.2.840.113549.2.10': 'sha384',
	'1.2.840.113549.2.11': 'sha512',
}
const PBES2_CIPHERS: Record<string, { name: string; keyLength: number }> = {
	'2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyLength: 16 },
	'2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyLength: 24 },
	'2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyLength: 32 },
	'1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyLength: 24 },
}
const PKCS12_PBES: Record<string, { name: string; cipher?: string; keyLength: number }> = {
	'1.2.840.113549.1.12.1.3': { name: 'pbeWithSHAAnd3-KeyTripleDES-CBC', cipher: 'des-ede3-cbc', keyLength: 24 },
	'1.2.840.113549.1.12.1.4': { name: 'pbeWithSHAAnd2-KeyTripleDES-CBC', cipher: 'des-ede-cbc', keyLength: 16 },
	'1.2.840.113549.1.12.1.5': { name: 'pbeWithSHAAnd128BitRC2-CBC', cipher: 'rc2-cbc', keyLength: 16 },
	'1.2.840.113549.1.12.1.6': { name: 'pbeWithSHAAnd40BitRC2-CBC', cipher: 'rc2-40-cbc', keyLength: 5 },
	// RC4 is a stream cipher node:crypto no longer offers; no exporter has written it for twenty years.
	'1.2.840.113549.1.12.1.1': { name: 'pbeWithSHAAnd128BitRC4', keyLength: 16 },
	'1.2.840.113549.1.12.1.2': { name: 'pbeWithSHAAnd40BitRC4', keyLength: 5 },
}
const PBES2 = '1.2.840.113549.1.5.13'
const PBKDF2 = '1.2.840.113549.1.5.12'
export const PBMAC1 = '1.2.840.113549.1.5.14'
/** The old PKCS#5 v1.5 schemes (MD5/SHA-1 with DES or RC2), named when met. */
const PBES1: Record<string, string> = {
	'1.2.840.113549.1.5.3': 'pbeWithMD5AndDES-CBC',
	'1.2.840.113549.1.5.6': 'pbeWithMD5AndRC2-CBC',
	'1.2.840.113549.1.5.10': 'pbeWithSHA1AndDES-CBC',
	'1.2.840.113549.1.5.11': 'pbeWithSHA1AndRC2-CBC',
}

const iterationsOf = (node: Asn1 | undefined, what: string, max: number) => {
	const n = smallInt(node, what)
	if (n < 1) throw new Asn1Error(`${what}: no iterations`)
	if (n > max) throw new UnsupportedAlgorithm(`${n} iterations of its key derivation, more than the gateway's ${max}`)
	return n
}

/**
 * The PKCS#12 KDF (RFC 7292 appendix B.2): `n` bytes for `id` (1 key, 2 IV, 3 MAC key) from the BMPString password
 * and the salt, iterating `hash`.
 */
export function pkcs12Kdf(hash: string, bmp: Uint8Array, salt: Uint8Array, iterations: number, id: 1 | 2 | 3, n: number): Uint8Array {
	const { u, v } = Object.values(HASHES).find((h) => h.name === hash)!
	const fill = (s: Uint8Array) => {
		const out = new Uint8Array(v * Math.ceil(s.length / v))
		for (let i = 0; i < out.length; i++) out[i] = s[i % s.length]!
		return out
	}
	const I = Buffer.concat([fill(salt), fill(bmp)])
	const D = new Uint8Array(v).fill(id)
	const out = new Uint8Array(Math.ceil(n / u) * u)
	for (let block = 0; block * u < n; block++) {
		let A = createHash(hash).update(D).update(I).digest()
		for (let r = 1; r < iterations; r++) A = createHash(hash).update(A).digest()
		out.set(A, block * u)
		if ((block + 1) * u >= n) break
		// I_j = (I_j + B + 1) mod 2^(8v), for each v-byte block I_j of I; B is A repeated to v bytes.
		const B = fill(A).subarray(0, v)
		for (let j = 0; j < I.length; j += v) {
			let carry = 1
			for (let k = v - 1; k >= 0; k--) {
				const sum = I[j + k]! + B[k]! + carry
				I[j + k] = sum & 0xff
				carry = sum >> 8
			}
		}
	}
	return out.subarray(0, n)
}

/** PBKDF2's parameters (RFC 8018 §A.2): its salt, iterations, key length (if given) and PRF. */
function pbkdf2Params(kdf: Asn1 | undefined, what: string): { salt: Uint8Array; iterations: number; keyLength?: number; hash: string } {
	const { oid, params } = algorithmOf(kdf, what)
	if (oid !== PBKDF2) throw new UnsupportedAlgorithm(`the key derivation ${oid} (only PBKDF2 is supported)`)
	const [salt, iter, ...rest] = sequence(params, `${what} PBKDF2 parameters`, 2)
	let keyLength: number | undefined
	let prf = '1.2.840.113549.2.7'
	for (const r of rest) {
		if (r.tag === 0x02) keyLength = smallInt(r, `${what} key length`)
		else prf = algorithmOf(r, `${what} PRF`).oid
	}
	const hash = HMACS[prf]
	if (!hash) throw new UnsupportedAlgorithm(`the PBKDF2 PRF ${prf} (HMAC with SHA-1 or SHA-2 only)`)
	return { salt: octets(salt, `${what} salt`), iterations: iterationsOf(iter, `${what} iterations`, MAX_PBKDF2_ITERATIONS), keyLength, hash }
}

function decipher(cipher: string, key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
	let d
	try {
		d = createDecipheriv(cipher, key, iv)
	} catch {
		throw new UnsupportedAlgorithm(`the cipher ${cipher}, which this runtime does not offer`)
	}
	try {
		return Buffer.concat([d.update(data), d.final()])
	} catch {
		// A CBC padding that does not check: the key, so the password, is not the one it was encrypted with.
		throw new WrongPassword('the password does not decrypt it')
	}
}

/**
 * `data` decrypted by the scheme `algorithm` (an AlgorithmIdentifier: PBES2 or a PKCS#12 PBE) with `password`.
 * Throws WrongPassword, UnsupportedAlgorithm (named) or Asn1Error.
 */
export function decryptPasswordBased(algorithm: Asn1 | undefined, data: Uint8Array, password: Password): Uint8Array {
	const { oid, params } = algorithmOf(algorithm, 'encryption algorithm')
	if (oid === PBES2) {
		const [kdf, scheme] = sequence(params, 'PBES2 parameters', 2)
		const enc = algorithmOf(scheme, 'PBES2 encryption scheme')
		const cipher = PBES2_CIPHERS[enc.oid]
		if (!cipher) throw new UnsupportedAlgorithm(`the PBES2 cipher ${enc.oid} (AES-128/192/256-CBC or DES-EDE3-CBC only)`)
		const p = pbkdf2Params(kdf, 'PBES2')
		if (p.keyLength !== undefined && p.keyLength !== cipher.keyLength) throw new Asn1Error('PBES2 key length does not fit its cipher')
		const key = pbkdf2Sync(password.utf8, p.salt, p.iterations, cipher.keyLength, p.hash)
		return decipher(cipher.name, key, octets(enc.params, 'PBES2 IV'), data)
	}
	const pbe = PKCS12_PBES[oid]
	if (pbe) {
		if (!pbe.cipher) throw new UnsupportedAlgorithm(pbe.name)
		const [salt, iter] = sequence(params, `${pbe.name} parameters`, 2)
		const s = octets(salt, `${pbe.name} salt`)
		const n = iterationsOf(iter, `${pbe.name} iterations`, MAX_PKCS12_KDF_ITERATIONS)
		const key = pkcs12Kdf('sha1', password.bmp, s, n, 1, pbe.keyLength)
		const iv = pkcs12Kdf('sha1', password.bmp, s, n, 2, 8)
		return decipher(pbe.cipher, key, iv, data)
	}
	throw new UnsupportedAlgorithm(PBES1[oid] ?? `the encryption algorithm ${oid}`)
}

/**
 * Checks a PFX's MacData (RFC 7292 §4: `mac` DigestInfo, `macSalt`, `iterations`) over the authenticated safe's bytes.
 * Throws WrongPassword when the MAC differs.
 */
export function verifyMac(macData: Asn1, content: Uint8Array, password: Password): void {
	const [digestInfo, salt, iter] = sequence(macData, 'MacData', 2)
	const [digestAlg, digest] = sequence(digestInfo, 'MAC DigestInfo', 2)
	const { oid, params } = algorithmOf(digestAlg, 'MAC algorithm')
	const expected = octets(digest, 'MAC value')
	let key: Uint8Array
	let hash: string
	if (oid === PBMAC1) {
		// RFC 9579: the key is PBKDF2's (whose keyLength must be given), over the UTF-8 password; MacData's salt and iterations are not used.
		const [kdf, scheme] = sequence(params, 'PBMAC1 parameters', 2)
		const p = pbkdf2Params(kdf, 'PBMAC1')
		const mac = algorithmOf(scheme, 'PBMAC1 message authentication scheme').oid
		if (!HMACS[mac]) throw new UnsupportedAlgorithm(`the PBMAC1 scheme ${mac} (HMAC with SHA-1 or SHA-2 only)`)
		if (p.keyLength === undefined) throw new Asn1Error('PBMAC1 PBKDF2 parameters lack the key length')
		hash = HMACS[mac]!
		key = pbkdf2Sync(password.utf8, p.salt, p.iterations, p.keyLength, p.hash)
	} else {
		const h = HASHES[oid]
		if (!h) throw new UnsupportedAlgorithm(`the MAC digest ${oid} (SHA-1 or SHA-2, or PBMAC1)`)
		hash = h.name
		key = pkcs12Kdf(hash, password.bmp, octets(salt, 'MAC salt'), iter ? iterationsOf(iter, 'MAC iterations', MAX_PKCS12_KDF_ITERATIONS) : 1, 3, h.u)
	}
	const actual = createHmac(hash, key).update(content).digest()
	if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) throw new WrongPassword('the MAC does not match')
}
