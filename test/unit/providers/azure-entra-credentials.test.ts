/**
 * Reading an Azure channel's certificate and federated token file keys (src/providers/azure-entra-certificate.ts,
 * azure-entra-federated.ts, and the key's shape in azure-entra.ts): what PEMs are taken (PKCS#8, PKCS#1 converted, a
 * chain in any order, line breaks written as `\n`), what is refused and why, in words that name the field and never
 * the key material; the assertion's header, claims and signature checked with node's own X.509 reading; a certificate
 * that expired while the gateway ran refused at the call as the channel's credentials.
 */
import { beforeAll, describe, expect, it } from 'bun:test'
import { constants, createPrivateKey, generateKeyPairSync, verify, X509Certificate } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { authorizeEntra, servicePrincipalOf } from '../../../src/providers/azure-entra'
import { certificateAssertion, certificateOf, certificateOutOfDate } from '../../../src/providers/azure-entra-certificate'
import { federatedAssertion } from '../../../src/providers/azure-entra-federated'
import type { Channel } from '../../../src/routing/catalog'
import { testCertificate, type TestCertificate } from '../../helpers/x509'

const TENANT = 'contoso.onmicrosoft.com'
const CLIENT = '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44'
const dir = `${new URL('../../../', import.meta.url).pathname}test-output/azure-entra-credentials-${process.pid}`

let ca: TestCertificate
let leaf: TestCertificate
let other: TestCertificate
let expired: TestCertificate

beforeAll(async () => {
	mkdirSync(dir, { recursive: true })
	ca = await testCertificate({ cn: 'test CA' })
	leaf = await testCertificate({ cn: 'test app', issuer: ca })
	other = await testCertificate({ cn: 'another app' })
	expired = await testCertificate({ cn: 'old app', notBefore: new Date(Date.now() - 2 * 86400_000), notAfter: new Date(Date.now() - 86400_000) })
})

const keyOf = (proof: Record<string, unknown>) => JSON.stringify({ tenant_id: TENANT, client_id: CLIENT, ...proof })
/** Why the key is refused (the error's message), or undefined. */
const refusal = (proof: Record<string, unknown>) => {
	try {
		servicePrincipalOf(keyOf(proof))
		return undefined
	} catch (e) {
		return (e as Error).message
	}
}
/** A piece of the key's base64 body, which no message may repeat. */
const keyBody = (pem: string) => pem.split('\n')[2]!
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString())

describe('azure certificate keys', () => {
	it("should read the certificate and its PKCS#8 key, its SHA-256 thumbprint as node computes it", () => {
		const c = certificateOf(leaf.certPem + leaf.keyPem)
		expect(c.thumbprint).toBe(Buffer.from(new X509Certificate(leaf.certPem).fingerprint256.replaceAll(':', ''), 'hex').toString('base64url'))
		expect(c.chain).toEqual([Buffer.from(leaf.der).toString('base64')])
		expect(c.notAfter.getTime()).toBe(new Date(new X509Certificate(leaf.certPem).validTo).getTime())
	})

	it("should put the key's certificate first in the chain wherever the PEM has it, and take the key before the certificates", () => {
		const c = certificateOf(leaf.keyPem + ca.certPem + leaf.certPem)
		expect(c.chain).toEqual([Buffer.from(leaf.der).toString('base64'), Buffer.from(ca.der).toString('base64')])
	})

	it('should take a PKCS#1 key (BEGIN RSA PRIVATE KEY) and a PEM whose line breaks are written \\n', async () => {
		const pkcs1 = createPrivateKey(leaf.keyPem).export({ type: 'pkcs1', format: 'pem' }).toString()
		expect(pkcs1).toStartWith('-----BEGIN RSA PRIVATE KEY-----')
		const c = certificateOf(leaf.certPem + pkcs1)
		const jwt = await certificateAssertion(c, { clientId: CLIENT, audience: 'aud', sendChain: false }, 1_800_000_000)
		const [h, p, s] = jwt.split('.') as [string, string, string]
		expect(verify('sha256', Buffer.from(`${h}.${p}`), { key: new X509Certificate(leaf.certPem).publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, Buffer.from(s, 'base64url'))).toBe(true)
		const escaped = (leaf.certPem + leaf.keyPem).replaceAll('\n', '\\n')
		expect(servicePrincipalOf(keyOf({ certificate: escaped }))?.proof.kind).toBe('certificate')
	})

	it('should sign a PS256 assertion with x5t#S256, for the token endpoint, from and about the client, ten minutes long, a new jti each', async () => {
		const c = certificateOf(ca.certPem + leaf.certPem + leaf.keyPem)
		const to = { clientId: CLIENT, audience: `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/token`, sendChain: true }
		const [a, b] = [await certificateAssertion(c, to, 1_800_000_000), await certificateAssertion(c, to, 1_800_000_000)]
		const [h, p, s] = a.split('.') as [string, string, string]
		expect(decode(h)).toEqual({ alg: 'PS256', typ: 'JWT', 'x5t#S256': c.thumbprint, x5c: c.chain })
		const claims = decode(p)
		expect(claims).toEqual({ aud: to.audience, iss: CLIENT, sub: CLIENT, jti: claims.jti, nbf: 1_800_000_000, iat: 1_800_000_000, exp: 1_800_000_600 })
		expect(decode(b.split('.')[1]!).jti).not.toBe(claims.jti)
		const key = { key: new X509Certificate(leaf.certPem).publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }
		expect(verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))).toBe(true)
		// Not signed by the CA's key, nor valid over other claims.
		expect(verify('sha256', Buffer.from(`${h}.${p}`), { ...key, key: new X509Certificate(ca.certPem).publicKey }, Buffer.from(s, 'base64url'))).toBe(false)
		const noChain = await certificateAssertion(c, { ...to, sendChain: false }, 1_800_000_000)
		expect(decode(noChain.split('.')[0]!)).toEqual({ alg: 'PS256', typ: 'JWT', 'x5t#S256': c.thumbprint })
	})

	it('should refuse what cannot sign, naming `certificate` and why, never the key', () => {
		const encrypted = createPrivateKey(leaf.keyPem).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }).toString()
		const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString()
		const ecPkcs8 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
		const brokenKey = `-----BEGIN PRIVATE KEY-----\n${keyBody(leaf.keyPem)}\n-----END PRIVATE KEY-----\n`
		const brokenCert = `-----BEGIN CERTIFICATE-----\n${keyBody(leaf.keyPem)}\n-----END CERTIFICATE-----\n`
		for (const [pem, said] of [
			[leaf.keyPem, 'no -----BEGIN CERTIFICATE----- block'],
			[leaf.certPem, 'no private key'],
			[leaf.certPem + encrypted, 'encrypted private key (-----BEGIN ENCRYPTED PRIVATE KEY-----): give its password as `certificate_password`'],
			[leaf.certPem + ec, 'EC private key'],
			[leaf.certPem + ecPkcs8, 'holds an EC private key: Entra ID certificate credentials are RSA'],
			[leaf.certPem + brokenKey, 'not a PEM private key'],
			[brokenCert + leaf.keyPem, 'not an X.509 certificate'],
			[leaf.certPem + other.keyPem, 'belongs to none of its certificate'],
			[ca.certPem + leaf.certPem + other.keyPem, 'none of its 2 certificates'],
		] as const) {
			const why = refusal({ certificate: pem })
			expect(why).toStartWith('azure channel key: `certificate` ')
			expect(why).toContain(said)
			for (const secret of [keyBody(leaf.keyPem), keyBody(other.keyPem), keyBody(encrypted)]) expect(why).not.toContain(secret)
		}
	})

	it('should say an out-of-date certificate with its dates', () => {
		expect(certificateOutOfDate(certificateOf(expired.certPem + expired.keyPem), new Date())).toStartWith('expired on ')
		expect(certificateOutOfDate(certificateOf(leaf.certPem + leaf.keyPem), new Date())).toBeUndefined()
		expect(certificateOutOfDate(certificateOf(leaf.certPem + leaf.keyPem), new Date(Date.now() - 86400_000))).toStartWith('is not valid before ')
	})

	it('should refuse at the call a certificate that expired since it was saved, as the channel\'s credentials, without asking the authority', async () => {
		const ch = { id: 9101, name: 'az-old', type: 'azure', baseUrl: 'https://r.openai.azure.com', apiKey: keyOf({ certificate: expired.certPem + expired.keyPem }), settings: { authority_host: 'http://127.0.0.1:9' } } as unknown as Channel
		const err = await authorizeEntra(ch, { url: '', method: 'POST', headers: {} }).catch((e) => e)
		expect(err).toMatchObject({ code: 'upstream_auth', retryable: true })
		expect(err.detail).toStartWith('azure channel key: the `certificate` expired on ')
		expect(JSON.stringify(err)).not.toContain(keyBody(expired.keyPem))
	})
})

describe('azure certificate keys: PFX in base64 and encrypted PEMs (TEST-ONLY openssl-made files)', () => {
	const FIXTURES = new URL('../../fixtures/azure-entra', import.meta.url).pathname
	const PASSWORD = 'test-only-password'
	const pfx = async (name: string) => Buffer.from(await Bun.file(`${FIXTURES}/${name}`).bytes()).toString('base64')
	const text = (name: string) => Bun.file(`${FIXTURES}/${name}`).text()
	const der = async (name: string) => new X509Certificate(await text(name)).raw.toString('base64')

	it("should read a PFX's key and certificates, the key's certificate first, and an encrypted PEM's key", async () => {
		const [app, ca] = [await der('app.crt'), await der('ca.crt')]
		const thumbprint = new Bun.CryptoHasher('sha256').update(Buffer.from(app, 'base64')).digest('base64url')
		for (const [certificate, password, chain] of [
			[await pfx('app-aes256.pfx'), PASSWORD, [app, ca]],
			// Line breaks in the base64, as `base64` wraps it.
			[(await pfx('app-legacy.pfx')).replace(/.{76}/g, '$&\n'), PASSWORD, [app, ca]],
			[await pfx('app-nopass.pfx'), undefined, [app, ca]],
			[await pfx('app-nopass.pfx'), '', [app, ca]],
			// The CA first in the file.
			[await text('app-encrypted.pem'), PASSWORD, [app, ca]],
			[await text('app-encrypted-sha1.pem'), PASSWORD, [app]],
		] as const) {
			const sp = servicePrincipalOf(keyOf({ certificate, certificate_password: password }))!
			expect(sp.proof).toMatchObject({ kind: 'certificate', certificate: { thumbprint, chain } })
		}
	})

	it('should refuse a wrong or missing password, a file without key, an EC key, damaged data, naming `certificate` and never the password', async () => {
		const aes = await pfx('app-aes256.pfx')
		for (const [proof, said] of [
			[{ certificate: aes, certificate_password: 'not-the-password' }, '`certificate` is a PKCS#12 (PFX) file that `certificate_password` does not open: wrong password'],
			[{ certificate: aes }, '`certificate` is a password-protected PKCS#12 (PFX) file: give its password as `certificate_password`'],
			[{ certificate: await text('app-encrypted.pem'), certificate_password: 'not-the-password' }, '`certificate` has an encrypted private key that `certificate_password` does not decrypt: wrong password'],
			[{ certificate: await pfx('app-nokey.pfx'), certificate_password: PASSWORD }, '`certificate` is a PKCS#12 (PFX) file without a private key'],
			[{ certificate: await pfx('app-ec.pfx'), certificate_password: PASSWORD }, '`certificate` holds an EC private key: Entra ID certificate credentials are RSA'],
			[{ certificate: aes.slice(0, 2000), certificate_password: PASSWORD }, '`certificate` is a PKCS#12 (PFX) file that does not parse'],
			[{ certificate: 'not a certificate', certificate_password: PASSWORD }, '`certificate` is neither a PEM (-----BEGIN CERTIFICATE-----… with its private key) nor a PKCS#12 (PFX) file in base64'],
			[{ certificate: aes, certificate_password: 12 }, '`certificate_password` is a string'],
			[{ client_secret: 's', certificate_password: PASSWORD }, '`certificate_password` goes with `certificate` only'],
		] as const) {
			const why = refusal(proof)
			expect(why).toStartWith('azure channel key: ')
			expect(why).toContain(said)
			expect(why).not.toContain('not-the-password')
			expect(why).not.toContain(PASSWORD)
			expect(why).not.toContain(aes.slice(100, 140))
		}
	})
})

describe('azure service principal keys', () => {
	it('should take exactly one proof, a boolean send_certificate_chain, and an absolute token file path', () => {
		const pem = leaf.certPem + leaf.keyPem
		expect(refusal({ client_secret: 's', certificate: pem })).toContain('give one of `client_secret`, `certificate`, not both')
		expect(refusal({ client_secret: 's', certificate: pem, federated_token_file: '/t' })).toContain('not all three')
		expect(refusal({ certificate: pem, send_certificate_chain: 'yes' })).toContain('`send_certificate_chain` is true or false')
		expect(refusal({ client_secret: 's', send_certificate_chain: true })).toContain('`send_certificate_chain` goes with `certificate` only')
		expect(refusal({ federated_token_file: 'tokens/azure-identity-token' })).toContain('`federated_token_file` is the absolute path')
		expect(refusal({ certificate: '' })).toContain('`certificate` must be a non-empty string')
		expect(refusal({})).toContain('`client_secret`')
		expect(servicePrincipalOf(keyOf({ federated_token_file: '/var/run/secrets/azure/tokens/azure-identity-token' }))).toEqual({
			tenantId: TENANT,
			clientId: CLIENT,
			proof: { kind: 'federated', tokenFile: '/var/run/secrets/azure/tokens/azure-identity-token' },
		})
	})
})

describe('azure federated token files', () => {
	it("should read the file's JWT, trimmed, anew each time", async () => {
		const path = `${dir}/token`
		await Bun.write(path, 'aaa.bbb.ccc\n')
		expect(await federatedAssertion(path)).toBe('aaa.bbb.ccc')
		await Bun.write(path, 'ddd.eee.fff')
		expect(await federatedAssertion(path)).toBe('ddd.eee.fff')
	})

	it('should refuse a file that is missing or holds no JWT, never saying what it holds', async () => {
		expect(await federatedAssertion(`${dir}/none`).catch((e) => e.message)).toBe(`${dir}/none cannot be read (ENOENT)`)
		const secretish = `${dir}/secrets.env`
		await Bun.write(secretish, 'DB_PASSWORD=hunter2-very-secret\n')
		const why = await federatedAssertion(secretish).catch((e) => e.message)
		expect(why).toContain('does not hold a JWT')
		expect(why).not.toContain('hunter2')
		const huge = `${dir}/huge`
		await Bun.write(huge, `${'a'.repeat(20_000)}.b.c`)
		expect(await federatedAssertion(huge).catch((e) => e.message)).toContain('cannot be read (EFBIG)')
		// A device would be read forever; a directory is no token.
		expect(await federatedAssertion('/dev/zero').catch((e) => e.message)).toBe('/dev/zero cannot be read (not a regular file)')
		expect(await federatedAssertion(dir).catch((e) => e.message)).toBe(`${dir} cannot be read (EISDIR)`)
	})
})
