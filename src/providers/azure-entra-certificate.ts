/**
 * Certificate credentials of a Microsoft Entra ID application
 * (https://learn.microsoft.com/entra/identity-platform/certificate-credentials): the channel key's `certificate` is a
 * PEM holding the application's certificate (with its chain, if any) and its unencrypted RSA private key (PKCS#8
 * `BEGIN PRIVATE KEY`, or PKCS#1 `BEGIN RSA PRIVATE KEY`, converted), as `openssl` or Key Vault's PEM export gives
 * it. Each token request sends a fresh assertion signed with that key: header `{alg: "PS256", typ: "JWT", "x5t#S256"}`
 * (the base64url SHA-256 of the certificate's DER, as Microsoft's page and MSAL now send; MSAL's SHA-1 `x5t` with RS256
 * is deprecated), plus `x5c` (the chain, leaf first) for subject name and issuer authentication; claims `aud` (the
 * token endpoint), `iss` = `sub` = the client id, a fresh `jti`, `nbf`, `iat` and `exp` ten minutes later.
 * Signed with WebCrypto (RSA-PSS, SHA-256, 32-byte salt: RFC 7518 §3.5); node:crypto only reads the PEM.
 * @module
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto'

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

/**
 * The certificate and key of a `certificate` PEM. Throws Error whose message says what is wrong in words of its own,
 * never the PEM's content nor OpenSSL's.
 * @example certificateOf('-----BEGIN CERTIFICATE-----\nMIIC…\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nMIIE…\n-----END PRIVATE KEY-----\n')
 */
export function certificateOf(text: string): EntraCertificate {
	// A PEM pasted into JSON or an env file with its line breaks written as `\n`.
	const pem = text.replace(/\\r\\n|\\n/g, '\n')
	const blocks = pem.match(CERT_BLOCK) ?? []
	if (!blocks.length) throw new Error('holds no -----BEGIN CERTIFICATE----- block: give the certificate and its private key as one PEM')
	const keyBlock = KEY_BLOCK.exec(pem)
	if (!keyBlock) throw new Error('holds no private key: add the certificate\'s unencrypted private key (-----BEGIN PRIVATE KEY-----) to the PEM')
	if (keyBlock[1] === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(keyBlock[0]))
		throw new Error('holds an encrypted private key, which the gateway cannot use: decrypt it (openssl pkcs8 -topk8 -nocrypt)')
	if (keyBlock[1] === 'EC PRIVATE KEY') throw new Error('holds an EC private key: Entra ID certificate credentials are RSA')
	let key: KeyObject
	try {
		key = createPrivateKey({ key: keyBlock[0], format: 'pem' })
	} catch {
		throw new Error('has a private key block that is not a PEM private key')
	}
	if (key.asymmetricKeyType !== 'rsa') throw new Error('holds a private key that is not RSA: Entra ID certificate credentials are RSA')
	let certs: X509Certificate[]
	try {
		certs = blocks.map((b) => new X509Certificate(b))
	} catch {
		throw new Error('has a certificate block that is not an X.509 certificate in PEM')
	}
	// The key's certificate leads, wherever the PEM puts it (a chain file may list its CA first).
	const own = certs.findIndex((c) => c.checkPrivateKey(key))
	if (own < 0) throw new Error(`has a private key that belongs to none of its ${certs.length === 1 ? 'certificate' : `${certs.length} certificates`}`)
	const leaf = certs[own]!
	const chain = [leaf, ...certs.filter((_, i) => i !== own)].map((c) => c.raw.toString('base64'))
	return {
		thumbprint: new Bun.CryptoHasher('sha256').update(leaf.raw).digest('base64url'),
		chain,
		notBefore: new Date(leaf.validFrom),
		notAfter: new Date(leaf.validTo),
		pkcs8: new Uint8Array(key.export({ type: 'pkcs8', format: 'der' })),
	}
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
