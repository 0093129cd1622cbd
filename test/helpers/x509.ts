/**
 * TEST-ONLY X.509 certificates, made at test time (nothing committed that looks like a real key): an RSA key pair from
 * WebCrypto and a minimal DER writer for the certificate (RFC 5280 §4.1: version 3, serial, sha256WithRSAEncryption,
 * issuer and subject as a single CN, validity, the key's SubjectPublicKeyInfo; no extensions but, when asked for, the
 * subject's alternative names a TLS client checks), signed by its own key or by an issuer's (a chain).
 * @module
 */

export type TestCertificate = {
	cn: string
	/** `-----BEGIN CERTIFICATE-----…` */
	certPem: string
	/** The private key, PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----…`). */
	keyPem: string
	/** The certificate's DER. */
	der: Uint8Array
	keys: CryptoKeyPair
}

const concat = (...parts: Uint8Array[]) => {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
	let at = 0
	for (const p of parts) {
		out.set(p, at)
		at += p.length
	}
	return out
}

function length(n: number): Uint8Array {
	if (n < 0x80) return Uint8Array.of(n)
	const bytes: number[] = []
	for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff)
	return Uint8Array.of(0x80 | bytes.length, ...bytes)
}

const tlv = (tag: number, content: Uint8Array) => concat(Uint8Array.of(tag), length(content.length), content)
const seq = (...parts: Uint8Array[]) => tlv(0x30, concat(...parts))
const set = (...parts: Uint8Array[]) => tlv(0x31, concat(...parts))
const explicit = (n: number, content: Uint8Array) => tlv(0xa0 | n, content)
const nul = () => Uint8Array.of(0x05, 0x00)
const utf8 = (s: string) => tlv(0x0c, new TextEncoder().encode(s))
const bitString = (b: Uint8Array) => tlv(0x03, concat(Uint8Array.of(0), b))

/** A non-negative INTEGER from big-endian bytes (a leading zero when the high bit is set). */
function integer(b: Uint8Array): Uint8Array {
	let i = 0
	while (i < b.length - 1 && b[i] === 0) i++
	const v = b.subarray(i)
	return tlv(0x02, v[0]! & 0x80 ? concat(Uint8Array.of(0), v) : v)
}

function oid(dotted: string): Uint8Array {
	const [a, b, ...rest] = dotted.split('.').map(Number)
	const out = [a! * 40 + b!]
	for (const n of rest) {
		const bytes = [n & 0x7f]
		for (let v = n >> 7; v > 0; v >>= 7) bytes.unshift((v & 0x7f) | 0x80)
		out.push(...bytes)
	}
	return tlv(0x06, Uint8Array.from(out))
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(d: Date): Uint8Array {
	const iso = d.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:T]/g, '')
	const year = d.getUTCFullYear()
	return year >= 1950 && year < 2050 ? tlv(0x17, new TextEncoder().encode(iso.slice(2))) : tlv(0x18, new TextEncoder().encode(iso))
}

const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), utf8(cn))))
const octets = (b: Uint8Array) => tlv(0x04, b)

/** subjectAltName (RFC 5280 §4.2.1.6): dNSName [2] and iPAddress [7] (IPv4), which TLS clients check the host against. */
function altNames(names: { dns?: string[]; ip?: string[] }): Uint8Array {
	const general = [
		...(names.dns ?? []).map((d) => tlv(0x82, new TextEncoder().encode(d))),
		...(names.ip ?? []).map((ip) => tlv(0x87, Uint8Array.from(ip.split('.').map(Number)))),
	]
	return seq(oid('2.5.29.17'), octets(seq(...general)))
}
const SHA256_WITH_RSA = seq(oid('1.2.840.113549.1.1.11'), nul())

const pem = (label: string, der: Uint8Array) => `-----BEGIN ${label}-----\n${Buffer.from(der).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`

/**
 * A TEST certificate for `cn`, valid from `notBefore` to `notAfter` (default: an hour ago to a year on), self-signed
 * unless `issuer` signs it, naming `altNames` (host names, IPv4 addresses) as the server it identifies.
 * @example const { certPem, keyPem } = await testCertificate({ cn: 'switchboard-test' })
 */
export async function testCertificate(opts: { cn: string; notBefore?: Date; notAfter?: Date; issuer?: TestCertificate; altNames?: { dns?: string[]; ip?: string[] } }): Promise<TestCertificate> {
	const keys = (await crypto.subtle.generateKey(
		{ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: Uint8Array.of(1, 0, 1), hash: 'SHA-256' },
		true,
		['sign', 'verify'],
	)) as CryptoKeyPair
	const spki = new Uint8Array(await crypto.subtle.exportKey('spki', keys.publicKey))
	const now = Date.now()
	const tbs = seq(
		explicit(0, integer(Uint8Array.of(2))),
		integer(crypto.getRandomValues(new Uint8Array(16))),
		SHA256_WITH_RSA,
		name(opts.issuer?.cn ?? opts.cn),
		seq(time(opts.notBefore ?? new Date(now - 3600_000)), time(opts.notAfter ?? new Date(now + 365 * 86400_000))),
		name(opts.cn),
		spki,
		...(opts.altNames ? [explicit(3, seq(altNames(opts.altNames)))] : []),
	)
	const signer = opts.issuer?.keys.privateKey ?? keys.privateKey
	const sig = new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', signer, tbs))
	const der = seq(tbs, SHA256_WITH_RSA, bitString(sig))
	const pkcs8 = new Uint8Array(await crypto.subtle.exportKey('pkcs8', keys.privateKey))
	return { cn: opts.cn, certPem: pem('CERTIFICATE', der), keyPem: pem('PRIVATE KEY', pkcs8), der, keys }
}
