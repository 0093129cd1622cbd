/**
 * The DER reader and PKCS#12 reader of Azure certificate keys (src/providers/azure/der.ts, password-based.ts,
 * pkcs12.ts) on the TEST-ONLY files openssl made (test/fixtures/azure-entra/README.md): OpenSSL 3's defaults (PBES2,
 * AES-256, PBKDF2-HMAC-SHA256, MAC SHA-256), AES-128/192 with a SHA-512 MAC, the legacy PKCS#12 PBEs (3DES, RC2-40)
 * with a SHA-1 MAC, an empty password, no key, an EC key, encrypted PKCS#8 PEMs; each key checked against the
 * certificate by node's X.509. A PBMAC1 MAC (RFC 9579), which OpenSSL 3.0 cannot write, is put on a fixture here.
 */
import { describe, expect, it } from 'bun:test'
import { createHmac, createPrivateKey, pbkdf2Sync, X509Certificate } from 'node:crypto'
import { Asn1Error, oidOf, parseDer } from '../../../src/providers/azure/der'
import { UnsupportedAlgorithm, WrongPassword } from '../../../src/providers/azure/password-based'
import { decryptPrivateKeyInfo, readPkcs12 } from '../../../src/providers/azure/pkcs12'

const FIXTURES = new URL('../../fixtures/azure-entra', import.meta.url).pathname
const PASSWORD = 'test-only-password'
const bytesOf = (name: string) => Bun.file(`${FIXTURES}/${name}`).bytes()
const app = new X509Certificate(await Bun.file(`${FIXTURES}/app.crt`).text())
const ca = new X509Certificate(await Bun.file(`${FIXTURES}/ca.crt`).text())
const keyOf = (der: Uint8Array) => createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' })

// A small DER writer, for files made here.
const len = (n: number) => (n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff])
const tlv = (tag: number, ...content: Uint8Array[]) => {
	const c = Buffer.concat(content)
	return Buffer.concat([Uint8Array.of(tag, ...len(c.length)), c])
}
const seq = (...c: Uint8Array[]) => tlv(0x30, ...c)
const oid = (dotted: string) => {
	const [a, b, ...rest] = dotted.split('.').map(Number)
	const out = [a! * 40 + b!]
	for (const arc of rest) {
		const groups = [arc & 0x7f]
		for (let v = arc >> 7; v > 0; v >>= 7) groups.unshift((v & 0x7f) | 0x80)
		out.push(...groups)
	}
	return tlv(0x06, Uint8Array.from(out))
}
const int = (n: number) => tlv(0x02, n < 0x80 ? Uint8Array.of(n) : Uint8Array.of(n >> 8, n & 0xff))
const octet = (b: Uint8Array) => tlv(0x04, b)

describe('DER reader', () => {
	it('should read definite and BER indefinite lengths, long forms, and object identifiers', () => {
		const long = parseDer(octet(new Uint8Array(300)))
		expect(long.content.length).toBe(300)
		expect(long.der.length).toBe(304)
		const indefinite = parseDer(Uint8Array.of(0x30, 0x80, 0x02, 0x01, 0x03, 0x05, 0x00, 0x00, 0x00))
		expect(indefinite.children.map((c) => c.tag)).toEqual([0x02, 0x05])
		expect(oidOf(parseDer(oid('1.2.840.113549.1.12.10.1.2')), 'bag')).toBe('1.2.840.113549.1.12.10.1.2')
		expect(oidOf(parseDer(oid('2.16.840.1.101.3.4.1.42')), 'aes')).toBe('2.16.840.1.101.3.4.1.42')
	})

	it('should refuse cut short, overlong and trailing data with Asn1Error', () => {
		for (const bad of [Uint8Array.of(0x30, 0x05, 0x02, 0x01), Uint8Array.of(0x30, 0x85, 1, 0, 0, 0, 0), Uint8Array.of(0x02, 0x01, 0x03, 0x00), Uint8Array.of(0x30, 0x80, 0x02, 0x01, 0x03), Uint8Array.of(0x30)])
			expect(() => parseDer(bad)).toThrow(Asn1Error)
	})
})

describe('PKCS#12 reader on openssl-made files', () => {
	for (const [file, certs, what] of [
		['app-aes256.pfx', [app, ca], "OpenSSL 3's defaults: PBES2, PBKDF2-HMAC-SHA256, AES-256-CBC, MAC SHA-256"],
		['app-mixed.pfx', [app], 'AES-128-CBC key, AES-192-CBC certificates, MAC SHA-512'],
		['app-3des.pfx', [app, ca], 'pbeWithSHAAnd3-KeyTripleDES-CBC, MAC SHA-1'],
		['app-legacy.pfx', [app, ca], '-legacy: pbeWithSHAAnd40BitRC2-CBC certificates, 3DES key'],
	] as const)
		it(`should read the key and certificates of ${file} (${what}), and say a wrong password`, async () => {
			const pfx = await bytesOf(file)
			const c = readPkcs12(pfx, PASSWORD)
			expect(c.certificates.map((d) => new X509Certificate(Buffer.from(d)).fingerprint256)).toEqual(certs.map((x) => x.fingerprint256))
			expect(c.keys.length).toBe(1)
			expect(app.checkPrivateKey(keyOf(c.keys[0]!))).toBe(true)
			for (const wrong of ['wrong-password', `${PASSWORD} `, '']) expect(() => readPkcs12(pfx, wrong)).toThrow(WrongPassword)
			expect(() => readPkcs12(pfx, undefined)).toThrow(WrongPassword)
		})

	it('should open a PFX with an empty password (Key Vault\'s download) without one, or with ""', async () => {
		const pfx = await bytesOf('app-nopass.pfx')
		for (const password of [undefined, '']) expect(app.checkPrivateKey(keyOf(readPkcs12(pfx, password).keys[0]!))).toBe(true)
		expect(() => readPkcs12(pfx, PASSWORD)).toThrow(WrongPassword)
	})

	it('should read a PFX without a key, and an EC key as it is', async () => {
		const nokey = readPkcs12(await bytesOf('app-nokey.pfx'), PASSWORD)
		expect(nokey.keys).toEqual([])
		expect(nokey.certificates.length).toBe(2)
		const ec = readPkcs12(await bytesOf('app-ec.pfx'), PASSWORD)
		expect(keyOf(ec.keys[0]!).asymmetricKeyType).toBe('ec')
	})

	it('should refuse a damaged file: cut short as Asn1Error, a changed byte under the MAC as a wrong password', async () => {
		const pfx = await bytesOf('app-aes256.pfx')
		expect(() => readPkcs12(pfx.subarray(0, 1000), PASSWORD)).toThrow(Asn1Error)
		const changed = Uint8Array.from(pfx)
		changed[200] ^= 0x01
		expect(() => readPkcs12(changed, PASSWORD)).toThrow(WrongPassword)
	})

	it('should verify a PBMAC1 MAC (RFC 9579: PBKDF2 over the UTF-8 password, then HMAC) and refuse it under a wrong password', async () => {
		const pfx = parseDer(await bytesOf('app-aes256.pfx'))
		const [version, authSafe] = pfx.children
		const content = parseDer(authSafe!.children[1]!.children[0]!.der).content
		const salt = Uint8Array.from({ length: 16 }, (_, i) => i + 1)
		const key = pbkdf2Sync(PASSWORD, salt, 2048, 32, 'sha256')
		const pbkdf2 = seq(oid('1.2.840.113549.1.5.12'), seq(octet(salt), int(2048), int(32), seq(oid('1.2.840.113549.2.9'), tlv(0x05))))
		const pbmac1 = seq(oid('1.2.840.113549.1.5.14'), seq(pbkdf2, seq(oid('1.2.840.113549.2.9'), tlv(0x05))))
		const fileWith = (macKey: Uint8Array) => seq(version!.der, authSafe!.der, seq(seq(pbmac1, octet(createHmac('sha256', macKey).update(content).digest())), octet(new Uint8Array(8)), int(1)))
		const file = fileWith(key)
		expect(app.checkPrivateKey(keyOf(readPkcs12(file, PASSWORD).keys[0]!))).toBe(true)
		expect(() => readPkcs12(file, 'wrong-password')).toThrow(WrongPassword)
		// The right password, but a MAC made with another key: the MAC is what refuses it.
		expect(() => readPkcs12(fileWith(pbkdf2Sync('another', salt, 2048, 32, 'sha256')), PASSWORD)).toThrow(new WrongPassword('the MAC does not match'))
	})
})

describe('encrypted PKCS#8 keys (-----BEGIN ENCRYPTED PRIVATE KEY-----)', () => {
	const derOf = async (file: string) => Buffer.from(/-----BEGIN ENCRYPTED PRIVATE KEY-----([\s\S]+?)-----END/.exec(await Bun.file(`${FIXTURES}/${file}`).text())![1]!, 'base64')

	for (const [file, what] of [
		['app-encrypted.pem', 'AES-256-CBC, PBKDF2-HMAC-SHA256'],
		['app-encrypted-sha1.pem', 'AES-128-CBC, PBKDF2-HMAC-SHA1'],
	] as const)
		it(`should decrypt ${file} (${what}), and say a wrong password`, async () => {
			const der = await derOf(file)
			expect(app.checkPrivateKey(keyOf(decryptPrivateKeyInfo(der, PASSWORD)))).toBe(true)
			expect(() => decryptPrivateKeyInfo(der, 'wrong-password')).toThrow(WrongPassword)
		})

	it('should name an algorithm it does not implement', () => {
		const rc4 = seq(seq(oid('1.2.840.113549.1.12.1.1'), seq(octet(new Uint8Array(8)), int(2048))), octet(new Uint8Array(32)))
		expect(() => decryptPrivateKeyInfo(rc4, PASSWORD)).toThrow(new UnsupportedAlgorithm('pbeWithSHAAnd128BitRC4'))
		const camellia = seq(seq(oid('1.2.840.113549.1.5.13'), seq(seq(oid('1.2.840.113549.1.5.12'), seq(octet(new Uint8Array(8)), int(2048))), seq(oid('1.2.392.200011.61.1.1.1.2'), octet(new Uint8Array(16))))), octet(new Uint8Array(32)))
		expect(() => decryptPrivateKeyInfo(camellia, PASSWORD)).toThrow(UnsupportedAlgorithm)
		const costly = seq(seq(oid('1.2.840.113549.1.12.1.3'), seq(octet(new Uint8Array(8)), tlv(0x02, Uint8Array.of(0x7f, 0xff, 0xff, 0xff)))), octet(new Uint8Array(32)))
		expect(() => decryptPrivateKeyInfo(costly, PASSWORD)).toThrow('iterations of its key derivation')
	})
})
