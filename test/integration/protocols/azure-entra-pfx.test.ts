/**
 * Azure channels whose Entra ID certificate comes as operators get it from Key Vault or `az ad sp create-for-rbac
 * --create-cert`: a PKCS#12 (PFX) file in base64 (OpenSSL 3's AES defaults, `-legacy`'s RC2-40 and 3DES, an empty
 * password) or a PEM with an encrypted PKCS#8 key, with `certificate_password`. The files are TEST-ONLY ones openssl
 * made (test/fixtures/azure-entra/README.md). Through the official `openai` client against a mock Azure resource with
 * key auth disabled and the mock Entra authority (test/mocks/azure/entra.ts), which has the fixture's certificate
 * registered: the client assertion is PS256 with the `x5t#S256` of that certificate and verifies against it (checked
 * here too, with node's own X.509), its chain as `x5c` when asked for; a chat completes. Through the management API, a
 * wrong or missing password, a file without a key, an EC key and damaged data are 400s naming `api_key` and the
 * problem; the password is in no answer nor log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { constants, verify, X509Certificate } from 'node:crypto'
import OpenAI from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import type { VendorMock } from '../../mocks'
import { startAzureMock } from '../../mocks/azure'
import { type EntraMock, startEntraMock } from '../../mocks/azure/entra'
import { chat } from './clients'
import { SETUP_MS } from './harness'

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const CLIENT = '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44'
const FIXTURES = new URL('../../fixtures/azure-entra', import.meta.url).pathname
const PASSWORD = 'test-only-password'
const pfx = async (name: string) => Buffer.from(await Bun.file(`${FIXTURES}/${name}`).bytes()).toString('base64')
const text = (name: string) => Bun.file(`${FIXTURES}/${name}`).text()
const keyOf = (proof: Record<string, unknown>) => JSON.stringify({ tenant_id: TENANT, client_id: CLIENT, ...proof })

let app: TestApp
let entra: EntraMock
let azure: VendorMock
let appCert: X509Certificate
let caCert: X509Certificate
const logs: string[] = []
const MODELS = ['pfx-aes', 'pfx-legacy', 'pfx-nopass', 'pem-encrypted', 'pfx-api']

beforeAll(async () => {
	appCert = new X509Certificate(await text('app.crt'))
	caCert = new X509Certificate(await text('ca.crt'))
	entra = startEntraMock({ tenantId: TENANT, clientId: CLIENT, certificates: [await text('app.crt')] })
	azure = startAzureMock({ apiKey: 'az-disabled-key', deployments: { 'prod-4o': 'gpt-4o' }, entra, keyAuth: false })
	const channel = (model: string, proof: Record<string, unknown>) => ({
		name: model,
		type: 'azure' as const,
		base_url: azure.url,
		api_key: keyOf(proof),
		models: [model],
		model_map: { [model]: 'prod-4o' },
		settings: { authority_host: entra.url },
	})
	app = await startTestApp({
		config: {
			channels: [
				channel('pfx-aes', { certificate: await pfx('app-aes256.pfx'), certificate_password: PASSWORD }),
				channel('pfx-legacy', { certificate: await pfx('app-legacy.pfx'), certificate_password: PASSWORD, send_certificate_chain: true }),
				channel('pfx-nopass', { certificate: await pfx('app-nopass.pfx') }),
				channel('pem-encrypted', { certificate: await text('app-encrypted.pem'), certificate_password: PASSWORD, send_certificate_chain: true }),
			],
			models: MODELS.map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 4 })),
		},
	})
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
}, SETUP_MS)
afterAll(async () => {
	await app?.close()
	await azure?.stop()
	await entra?.stop()
})

const client = async () => new OpenAI({ apiKey: (await app.account(10)).key, baseURL: `${app.url}/v1`, maxRetries: 0 })
const x5tS256 = (c: X509Certificate) => Buffer.from(c.fingerprint256.replaceAll(':', ''), 'hex').toString('base64url')

/** Verifies the JWT's PS256 signature with the certificate's public key, as Entra does. */
function signedBy(jwt: string, cert: X509Certificate): boolean {
	const [h, c, sig] = jwt.split('.')
	return verify('sha256', Buffer.from(`${h}.${c}`), { key: cert.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, Buffer.from(sig!, 'base64url'))
}

describe('azure channel keyed with a PFX or an encrypted PEM', () => {
	for (const [model, chain] of [
		['pfx-aes', false],
		['pfx-legacy', true],
		['pfx-nopass', false],
		['pem-encrypted', true],
	] as const)
		it(`should sign with the file's key a client assertion that verifies against its certificate, and chat (${model})`, async () => {
			const before = entra.tokenRequests.length
			const r = await chat(await client(), { model, messages: [{ role: 'user', content: `hello ${model}` }] }, false)
			expect(r.text).toBe(`Hello! You said: hello ${model}`)
			const sent = entra.tokenRequests.slice(before)
			expect(sent.length).toBe(1)
			const assertion = sent[0]!.form.client_assertion!
			expect(signedBy(assertion, appCert)).toBe(true)
			const header = JSON.parse(Buffer.from(assertion.split('.')[0]!, 'base64url').toString())
			expect(header).toEqual({ alg: 'PS256', typ: 'JWT', 'x5t#S256': x5tS256(appCert), ...(chain ? { x5c: [appCert.raw.toString('base64'), caCert.raw.toString('base64')] } : {}) })
			expect(entra.accepts(azure.requests.at(-1)!.headers.authorization!.replace(/^Bearer /, ''))).toBe(true)
		})

	it('should take a PFX through the management API, and chat on it', async () => {
		const created = await app.admin('/api/channels', {
			body: { name: 'pfx-api', type: 'azure', base_url: azure.url, api_key: keyOf({ certificate: await pfx('app-3des.pfx'), certificate_password: PASSWORD }), models: ['pfx-api'], model_map: { 'pfx-api': 'prod-4o' }, settings: { authority_host: entra.url } },
		})
		expect(created.status).toBe(201)
		const before = entra.tokenRequests.length
		const r = await chat(await client(), { model: 'pfx-api', messages: [{ role: 'user', content: 'hello api' }] }, true)
		expect(r.text).toBe('Hello! You said: hello api')
		expect(signedBy(entra.tokenRequests[before]!.form.client_assertion!, appCert)).toBe(true)
		expect(JSON.stringify(created.body)).not.toContain(PASSWORD)
	})

	it('should refuse at save time, with a 400 naming api_key and the problem, what cannot sign; never saying the password', async () => {
		const aes = await pfx('app-aes256.pfx')
		for (const [proof, said] of [
			[{ certificate: aes, certificate_password: 'not-the-password' }, 'wrong password'],
			[{ certificate: aes }, 'is a password-protected PKCS#12 (PFX) file: give its password as `certificate_password`'],
			[{ certificate: await text('app-encrypted.pem'), certificate_password: 'not-the-password' }, 'wrong password'],
			[{ certificate: await pfx('app-nokey.pfx'), certificate_password: PASSWORD }, 'is a PKCS#12 (PFX) file without a private key'],
			[{ certificate: await pfx('app-ec.pfx'), certificate_password: PASSWORD }, 'holds an EC private key'],
			[{ certificate: aes.slice(0, 1500), certificate_password: PASSWORD }, 'is a PKCS#12 (PFX) file that does not parse'],
			[{ certificate: `${aes.slice(0, 1500)}A${aes.slice(1501)}`, certificate_password: PASSWORD }, 'wrong password'],
		] as const) {
			const res = await app.admin('/api/channels', { body: { name: 'refused', type: 'azure', base_url: azure.url, api_key: keyOf(proof), models: ['pfx-api'], settings: { authority_host: entra.url } } })
			expect(res.status).toBe(400)
			expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'api_key' })
			expect(res.body.error.message).toContain('`certificate` ')
			expect(res.body.error.message).toContain(said)
			for (const secret of ['not-the-password', PASSWORD]) expect(JSON.stringify(res.body)).not.toContain(secret)
		}
		for (const secret of ['not-the-password', PASSWORD]) expect(logs.join('\n')).not.toContain(secret)
	})
})
