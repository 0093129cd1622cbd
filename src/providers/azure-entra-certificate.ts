/**
 * Certificate credentials of a Microsoft Entra ID application
 * (https://learn.microsoft.com/entra/identity-platform/certificate-credentials): the channel key's `certificate` holds
 * the application's RSA certificate (with its chain, if any) and private key, as `openssl`, Key Vault or `az ad sp
 * create-for-rbac --create-cert` give them: a PEM whose key is PKCS#8 `BEGIN PRIVATE KEY`, PKCS#1 `BEGIN RSA PRIVATE
 * KEY`, or `BEGIN ENCRYPTED PRIVATE KEY` (opened with `certificate_password`); or a PKCS#12 (PFX) file in base64,
 * password-protected or not (azure/pkcs12.ts). Each token request sends a fresh assertion signed with that key: header
 * `{alg: "PS256", typ: "JWT", "x5t#S256"}` (the base64url SHA-256 of the certificate's DER, as Microsoft's page and
 * MSAL now send; MSAL's SHA-1 `x5t` with RS256 is deprecated), plus `x5c` (the chain, leaf first) for subject name and
 * issuer authentication; claims `aud` (the token endpoint), `iss` = `sub` = the client id, a fresh `jti`, `nbf`, `iat`
 * and `exp` ten minutes later. Signed with WebCrypto (RSA-PSS, SHA-256, 32-byte salt: RFC 7518 §3.5); node:crypto reads
 * the PEM and X.509, azure/ decrypts.
 * @module
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto'
import { UnsupportedAlgorithm, WrongPassword } from './azure/password-based'
import { decryptPrivateKeyInfo, readPkcs12 } from './azure/pkcs12'

/** Seconds an assertion is good for: MSAL's ten minutes (Entra asks for "5-10 minutes after nbf at most"). */
const ASSERTION_SECONDS = 600

export type EntraCertificate = {
	/** The `x5t#S256` header: base64url SHA-256 of the certificate's DER. */
	thumbprint: string
	/** The `x5c` header: each certificate's DER in base64, the one of the key first. */
	chain: string[]
	notBefore: Date
	notAfter: Date
	/** The private key as PKCS#8 DER, for WebCrypto. */
	pkcs8: Uint8Array<ArrayBuffer>
	/** The imported signer, made at the first token request and kept with the parsed key. */
	signer?: Promise<CryptoKey>
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g
const KEY_BLOCK = /-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----[\s\S]+?-----END \1-----/
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * The certificate and key of a `certificate`: a PEM, or a PKCS#12 (PFX) file in base64, opened with `password` (the
 * key's `certificate_password`) when its key is encrypted. Throws Error whose message says what is wrong in words of
 * its own (to follow "`certificate` "), never the PEM's content, the password nor OpenSSL's words.
 * @example certificateOf('-----BEGIN CERTIFICATE-----\nMIIC…\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nMIIE…\n-----END PRIVATE KEY-----\n')
 */
export function certificateOf(text: string, password?: string): EntraCertificate {
	// A PEM pasted into JSON or an env file with its line breaks written as `\n`.
	const pem = text.replace(/\\r\\n|\\n/g, '\n')
	const { keys, certs } = pem.includes('-----BEGIN') ? fromPem(pem, password) : fromPkcs12(pem, password)
	const rsa = keys.filter((k) => k.asymmetricKeyType === 'rsa')
	if (!rsa.length) {
		const type = keys[0]!.asymmetricKeyType ?? 'unknown'
		throw new Error(`holds ${type === 'ec' ? 'an EC' : `a ${type}`} private key: Entra ID certificate credentials are RSA`)
	}
	// The key's certificate leads, wherever the file puts it (a chain file may list its CA first).
	for (const key of rsa) {
		const own = certs.findIndex((c) => c.checkPrivateKey(key))
		if (own < 0) continue
		const leaf = certs[own]!
		return {
			thumbprint: new Bun.CryptoHasher('sha256').update(leaf.raw).digest('base64url'),
			chain: [leaf, ...certs.filter((_, i) => i !== own)].map((c) => c.raw.toString('base64')),
			notBefore: new Date(leaf.validFrom),
			notAfter: new Date(leaf.validTo),
			pkcs8: new Uint8Array(key.export({ type: 'pkcs8', format: 'der' })),
		}
	}
	throw new Error(`has a private key that belongs to none of its ${certs.length === 1 ? 'certificate' : `${certs.length} certificates`}`)
}

type KeyAndCertificates = { keys: KeyObject[]; certs: X509Certificate[] }

/** A PEM's certificates and its one private key: PKCS#8, PKCS#1, or PKCS#8 encrypted (PBES2 or a PKCS#12 PBE) with `password`. */
function fromPem(pem: string, password: string | undefined): KeyAndCertificates {
	const blocks = pem.match(CERT_BLOCK) ?? []
	if (!blocks.length) throw new Error('holds no -----BEGIN CERTIFICATE----- block: give the certificate and its private key as one PEM, or a PFX in base64')
	const keyBlock = KEY_BLOCK.exec(pem)
	if (!keyBlock) throw new Error("holds no private key: add the certificate's private key (-----BEGIN PRIVATE KEY-----) to the PEM")
	if (/Proc-Type:\s*4,ENCRYPTED/.test(keyBlock[0]))
		throw new Error(
			"holds a private key encrypted in OpenSSL's traditional format (Proc-Type: 4,ENCRYPTED), which the gateway does not read: make it PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc)",
		)
	if (keyBlock[1] === 'EC PRIVATE KEY') throw new Error('holds an EC private key: Entra ID certificate credentials are RSA')
	const key = keyBlock[1] === 'ENCRYPTED PRIVATE KEY' ? encryptedPemKey(keyBlock[0], password) : pemKey(keyBlock[0])
	return { keys: [key], certs: certificates(blocks) }
}

function pemKey(block: string): KeyObject {
	try {
		return createPrivateKey({ key: block, format: 'pem' })
	} catch {
		throw new Error('has a private key block that is not a PEM private key')
	}
}

function encryptedPemKey(block: string, password: string | undefined): KeyObject {
	if (password === undefined) throw new Error('holds an encrypted private key (-----BEGIN ENCRYPTED PRIVATE KEY-----): give its password as `certificate_password`')
	const body = block.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')
	let der: Uint8Array
	try {
		der = decryptPrivateKeyInfo(Buffer.from(body, 'base64'), password)
	} catch (e) {
		if (e instanceof WrongPassword) throw new Error('has an encrypted private key that `certificate_password` does not decrypt: wrong password')
		if (e instanceof UnsupportedAlgorithm)
			throw new Error(`has a private key encrypted with ${e.message}, which the gateway does not support: use PBES2 with AES (openssl pkcs8 -topk8 -v2 aes-256-cbc)`)
		throw new Error('has an encrypted private key block that does not parse')
	}
	return keyOfDer(der)
}

function keyOfDer(der: Uint8Array): KeyObject {
	try {
		return createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' })
	} catch {
		throw new Error('has a private key that is not a PKCS#8 private key')
	}
}

function certificates(ders: Array<string | Uint8Array>): X509Certificate[] {
	try {
		return ders.map((d) => new X509Certificate(typeof d === 'string' ? d : Buffer.from(d)))
	} catch {
		throw new Error('has a certificate that is not an X.509 certificate')
	}
}

/** A PFX's keys and certificates (azure/pkcs12.ts), its base64 read with any line breaks. */
function fromPkcs12(text: string, password: string | undefined): KeyAndCertificates {
	const b64 = text.replace(/\s+/g, '')
	const bytes = BASE64.test(b64) ? Buffer.from(b64, 'base64') : undefined
	// A PFX is a DER SEQUENCE: 0x30.
	if (!bytes || bytes[0] !== 0x30)
		throw new Error('is neither a PEM (-----BEGIN CERTIFICATE-----… with its private key) nor a PKCS#12 (PFX) file in base64')
	let contents
	try {
		contents = readPkcs12(bytes, password)
	} catch (e) {
		// Without a password, the empty one was tried (Key Vault's downloads have it).
		if (e instanceof WrongPassword && !password) throw new Error('is a password-protected PKCS#12 (PFX) file: give its password as `certificate_password`')
		if (e instanceof WrongPassword) throw new Error('is a PKCS#12 (PFX) file that `certificate_password` does not open: wrong password (or a damaged file)')
		if (e instanceof UnsupportedAlgorithm)
			throw new Error(`is a PKCS#12 (PFX) file protected with ${e.message}, which the gateway does not support: export it with AES (openssl pkcs12 -export's default)`)
		throw new Error('is a PKCS#12 (PFX) file that does not parse: damaged or cut short (give the whole .pfx file in base64)')
	}
	if (!contents.keys.length) throw new Error('is a PKCS#12 (PFX) file without a private key: export the certificate with its private key')
	if (!contents.certificates.length) throw new Error('is a PKCS#12 (PFX) file without a certificate: export the certificate with its private key')
	return { keys: contents.keys.map(keyOfDer), certs: certificates(contents.certificates) }
}

/**
 * Why the certificate cannot be used at `now` (expired, or not valid yet), or undefined. Entra ID refuses an assertion
 * signed by an expired certificate credential.
 * @example certificateOutOfDate(cert, new Date()) // 'expired on 2026-01-31T00:00:00.000Z'
 */
export function certificateOutOfDate(cert: Pick<EntraCertificate, 'notBefore' | 'notAfter'>, now: Date): string | undefined {
	if (now.getTime() > cert.notAfter.getTime()) return `expired on ${cert.notAfter.toISOString()}`
	if (now.getTime() < cert.notBefore.getTime()) return `is not valid before ${cert.notBefore.toISOString()}`
	return undefined
}

const b64url = (b: Uint8Array | string) => Buffer.from(b).toString('base64url')

/**
 * A fresh client assertion for `clientId` at the token endpoint `audience`, signed by the certificate's key.
 * @example await certificateAssertion(cert, { clientId, audience: 'https://login.microsoftonline.com/TENANT/oauth2/v2.0/token', sendChain: false }, 1700000000)
 */
export async function certificateAssertion(cert: EntraCertificate, to: { clientId: string; audience: string; sendChain: boolean }, nowSeconds: number): Promise<string> {
	cert.signer ??= crypto.subtle.importKey('pkcs8', cert.pkcs8, { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['sign'])
	const header: Record<string, unknown> = { alg: 'PS256', typ: 'JWT', 'x5t#S256': cert.thumbprint }
	if (to.sendChain) header.x5c = cert.chain
	const claims = { aud: to.audience, iss: to.clientId, sub: to.clientId, jti: crypto.randomUUID(), nbf: nowSeconds, iat: nowSeconds, exp: nowSeconds + ASSERTION_SECONDS }
	const signed = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`
	const sig = await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: 32 }, await cert.signer, new TextEncoder().encode(signed))
	return `${signed}.${b64url(new Uint8Array(sig))}`
}
