/**
 * Azure channels whose Entra ID service principal proves itself with a client assertion rather than a secret: a
 * certificate's (`{"tenant_id","client_id","certificate":"PEM"}`) or a federated token file's (workload identity,
 * `{"tenant_id","client_id","federated_token_file":"/…"}`), through the official `openai` client against a mock Azure
 * resource with key auth disabled and a mock Entra authority that verifies the assertion (test/mocks/azure/entra.ts):
 * its signature against the registered certificate, its header and claims; one token for many calls, a new token
 * (with a fresh assertion, or the file read again) after Azure's 401; a refused certificate or federated token as the
 * channel's failure; key material and assertions in no log line, error body or disabled reason. The certificates are
 * made at test time (test/helpers/x509.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { X509Certificate } from 'node:crypto'
import OpenAI from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import { testCertificate, type TestCertificate } from '../../helpers/x509'
import type { VendorMock } from '../../mocks'
import { startAzureMock } from '../../mocks/azure'
import { AZURE_SCOPE, type EntraMock, startEntraMock } from '../../mocks/azure/entra'
import { chat } from './clients'
import { SETUP_MS } from './harness'

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const CLIENT = '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44'
const SUBJECT = 'system:serviceaccount:ai:switchboard'
const KEY = 'az-standby-key'
const dir = `${new URL('../../../', import.meta.url).pathname}test-output/azure-entra-assertion-${process.pid}`

let app: TestApp
let entra: EntraMock
let azure: VendorMock
let standby: VendorMock
let ca: TestCertificate
let leaf: TestCertificate
let stranger: TestCertificate
const logs: string[] = []
const tokenFile = `${dir}/azure-identity-token`
const expiredFile = `${dir}/expired-token`

const keyOf = (proof: Record<string, unknown>) => JSON.stringify({ tenant_id: TENANT, client_id: CLIENT, ...proof })
/** A PEM's base64 body, a piece of which must never be said anywhere. */
const body = (pem: string) => pem.split('\n').slice(2, 4).join('')

beforeAll(async () => {
	mkdirSync(dir, { recursive: true })
	ca = await testCertificate({ cn: 'switchboard test CA' })
	leaf = await testCertificate({ cn: 'switchboard test app', issuer: ca })
	stranger = await testCertificate({ cn: 'an unregistered certificate' })
	entra = startEntraMock({ tenantId: TENANT, clientId: CLIENT, certificates: [leaf.certPem], federatedSubject: SUBJECT })
	azure = startAzureMock({ apiKey: 'az-disabled-key', deployments: { 'prod-4o': 'gpt-4o' }, entra, keyAuth: false })
	standby = startAzureMock({ apiKey: KEY, deployments: { 'prod-4o': 'gpt-4o' } })
	await Bun.write(tokenFile, `${entra.federatedToken()}\n`)
	await Bun.write(expiredFile, entra.federatedToken({ ttl: -60 }))
	const channel = (name: string, model: string, key: string, extra: Record<string, unknown> = {}) => ({
		name,
		type: 'azure' as const,
		base_url: azure.url,
		api_key: key,
		models: [model],
		model_map: { [model]: 'prod-4o' },
		settings: { authority_host: entra.url },
		...extra,
	})
	const cert = keyOf({ certificate: leaf.certPem + leaf.keyPem })
	app = await startTestApp({
		config: {
			channels: [
				channel('cert', 'cert-4o', cert),
				channel('cert-revoked', 'cert-revoked', cert),
				channel('cert-edited', 'cert-edited', cert),
				// The chain as a file may hold it, CA first, the leaf's key last.
				channel('cert-chain', 'cert-chain', keyOf({ certificate: ca.certPem + leaf.certPem + leaf.keyPem, send_certificate_chain: true })),
				channel('fed', 'fed-4o', keyOf({ federated_token_file: tokenFile })),
				channel('fed-revoked', 'fed-revoked', keyOf({ federated_token_file: tokenFile })),
				// Refused by the authority, each in front of a resource on a key.
				channel('cert-stranger', 'stranger-failover', keyOf({ certificate: stranger.certPem + stranger.keyPem })),
				channel('fed-expired', 'expired-failover', keyOf({ federated_token_file: expiredFile })),
				{ name: 'az-standby', type: 'azure', base_url: standby.url, api_key: KEY, models: ['stranger-failover', 'expired-failover'], model_map: { 'stranger-failover': 'prod-4o', 'expired-failover': 'prod-4o' }, priority: 1 },
			],
			models: ['cert-4o', 'cert-revoked', 'cert-edited', 'cert-chain', 'fed-4o', 'fed-revoked', 'stranger-failover', 'expired-failover'].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 4 })),
		},
	})
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
}, SETUP_MS)
afterAll(async () => {
	await app?.close()
	await azure?.stop()
	await standby?.stop()
	await entra?.stop()
})

async function client() {
	const a = await app.account(10)
	return new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
}

const last = (m: VendorMock) => m.requests[m.requests.length - 1]!
const bearerOf = (r: { headers: Record<string, string> }) => r.headers.authorization?.replace(/^Bearer /, '')
const ask = async (openai: OpenAI, model: string, text: string, stream = false) => (await chat(openai, { model, messages: [{ role: 'user', content: text }] }, stream)).text
/** The certificate's SHA-256 thumbprint as base64url, from node's own reading of it. */
const x5tS256 = (pem: string) => Buffer.from(new X509Certificate(pem).fingerprint256.replaceAll(':', ''), 'hex').toString('base64url')

describe('azure channel with an Entra ID certificate credential', () => {
	for (const stream of [false, true])
		it(`should sign a client assertion the authority verifies, and send its token as a Bearer (${stream ? 'stream' : 'non-stream'})`, async () => {
			const openai = await client()
			const before = entra.tokenRequests.length
			const assertions = entra.assertions.length
			expect(await ask(openai, 'cert-4o', `hello cert ${stream}`, stream)).toBe(`Hello! You said: hello cert ${stream}`)
			const r = last(azure)
			expect(r.headers['api-key']).toBeUndefined()
			expect(entra.accepts(bearerOf(r)!)).toBe(true)
			// The first call fetched the token; the second reused it.
			expect(entra.tokenRequests.length).toBe(stream ? before : before + 1)
			if (stream) return
			const { form } = entra.tokenRequests.at(-1)!
			expect(Object.keys(form).sort()).toEqual(['client_assertion', 'client_assertion_type', 'client_id', 'grant_type', 'scope'])
			expect(form).toMatchObject({ grant_type: 'client_credentials', client_id: CLIENT, scope: AZURE_SCOPE, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' })
			const [{ header, claims }] = entra.assertions.slice(assertions)
			expect(header).toEqual({ alg: 'PS256', typ: 'JWT', 'x5t#S256': x5tS256(leaf.certPem) })
			expect(claims).toMatchObject({ aud: `${entra.url}/${TENANT}/oauth2/v2.0/token`, iss: CLIENT, sub: CLIENT })
			expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/)
			const now = Date.now() / 1000
			expect(Math.abs(claims.nbf - now)).toBeLessThan(30)
			// Short-lived: ten minutes at most, as Microsoft asks.
			expect(claims.exp - claims.nbf).toBeGreaterThan(0)
			expect(claims.exp - claims.nbf).toBeLessThanOrEqual(600)
		})

	it('should send the chain as x5c, the certificate of the key first, when send_certificate_chain is set', async () => {
		const assertions = entra.assertions.length
		expect(await ask(await client(), 'cert-chain', 'chain')).toBe('Hello! You said: chain')
		const { header } = entra.assertions[assertions]!
		expect(header.x5c).toEqual([Buffer.from(leaf.der).toString('base64'), Buffer.from(ca.der).toString('base64')])
		expect(header['x5t#S256']).toBe(x5tS256(leaf.certPem))
	})

	it('should sign a fresh assertion for a new token when Azure refuses the cached one with 401', async () => {
		const openai = await client()
		await ask(openai, 'cert-revoked', 'warm up')
		const stale = bearerOf(last(azure))
		const assertions = entra.assertions.length
		const calls = azure.requests.length
		entra.revokeTokens()
		expect(await ask(openai, 'cert-revoked', 'after revocation', true)).toBe('Hello! You said: after revocation')
		const [refused, retried] = azure.requests.slice(calls)
		expect(bearerOf(refused!)).toBe(stale!)
		expect(entra.accepts(bearerOf(retried!)!)).toBe(true)
		const fresh = entra.assertions.slice(assertions)
		expect(fresh.length).toBe(1)
		expect(entra.assertions.slice(0, assertions).map((a) => a.claims.jti)).not.toContain(fresh[0]!.claims.jti)
	})
})

describe('azure channel: an edited key', () => {
	it('should fetch a new token when the key changes (another proof of the same application), not reuse the old one', async () => {
		const openai = await client()
		await ask(openai, 'cert-edited', 'before the edit')
		const old = bearerOf(last(azure))
		const before = entra.tokenRequests.length
		await ask(openai, 'cert-edited', 'still the same key')
		expect(entra.tokenRequests.length).toBe(before)
		const id = ((await app.admin('/api/channels')).body.data as Array<{ id: number; name: string }>).find((c) => c.name === 'cert-edited')!.id
		const edited = await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { api_key: keyOf({ certificate: ca.certPem + leaf.certPem + leaf.keyPem, send_certificate_chain: true }) } })
		expect(edited.status).toBe(200)
		expect(await ask(openai, 'cert-edited', 'after the edit')).toBe('Hello! You said: after the edit')
		const after = entra.tokenRequests.slice(before)
		expect(after.length).toBe(1)
		// The new key's assertion: it sends the chain, which the old key's did not.
		expect(entra.assertions.at(-1)!.header.x5c).toEqual([Buffer.from(leaf.der).toString('base64'), Buffer.from(ca.der).toString('base64')])
		expect(bearerOf(last(azure))).not.toBe(old)
	})

	it('should refuse, through the management API, a key naming a file on the host, and keep the key it had', async () => {
		const id = ((await app.admin('/api/channels')).body.data as Array<{ id: number; name: string }>).find((c) => c.name === 'cert-edited')!.id
		const before = entra.tokenRequests.length
		const edited = await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { api_key: keyOf({ federated_token_file: tokenFile }) } })
		expect(edited.status).toBe(400)
		expect(edited.body.error).toMatchObject({ type: 'invalid_request_error', param: 'api_key' })
		expect(edited.body.error.message).toContain('is taken only from GATEWAY_CONFIG or the quick-start variables')
		expect(await ask(await client(), 'cert-edited', 'unchanged')).toBe('Hello! You said: unchanged')
		expect(entra.tokenRequests.length).toBe(before)
	})
})

describe('azure channel with workload identity (a federated token file)', () => {
	it("should send the file's token as the client assertion, and read the file again for each new token (it rotates)", async () => {
		const openai = await client()
		const before = entra.tokenRequests.length
		expect(await ask(openai, 'fed-revoked', 'federated')).toBe('Hello! You said: federated')
		expect(entra.accepts(bearerOf(last(azure))!)).toBe(true)
		const first = entra.tokenRequests.slice(before)
		expect(first.length).toBe(1)
		expect(first[0]!.form.client_assertion).toBe((await Bun.file(tokenFile).text()).trim())
		expect(first[0]!.form.client_secret).toBeUndefined()
		// The kubelet writes a new token; Azure refuses the access token: the next token comes from the new file.
		const rotated = entra.federatedToken()
		await Bun.write(tokenFile, rotated)
		entra.revokeTokens()
		expect(await ask(openai, 'fed-revoked', 'after rotation', true)).toBe('Hello! You said: after rotation')
		const second = entra.tokenRequests.slice(before + 1)
		expect(second.map((t) => t.form.client_assertion)).toEqual([rotated])
	})

	it('should reuse the token across calls', async () => {
		const openai = await client()
		await ask(openai, 'fed-4o', 'one')
		const before = entra.tokenRequests.length
		for (const s of [false, true]) expect(await ask(openai, 'fed-4o', 'again', s)).toBe('Hello! You said: again')
		expect(entra.tokenRequests.length).toBe(before)
	})
})

describe('azure channel: an assertion the authority refuses', () => {
	for (const [model, channel, code] of [
		['stranger-failover', 'cert-stranger', 'AADSTS700027'],
		['expired-failover', 'fed-expired', 'AADSTS700024'],
	] as const)
		it(`should fail over, disable the channel with Entra's reason (${code}), and say no key material nor assertion`, async () => {
			const before = entra.tokenRequests.length
			expect(await ask(await client(), model, 'fail over')).toBe('Hello! You said: fail over')
			expect(last(standby).headers['api-key']).toBe(KEY)
			const sent = entra.tokenRequests.slice(before).map((t) => t.form.client_assertion!)
			expect(sent.length).toBe(1)
			const channels = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null }>
			const refused = channels.find((ch) => ch.name === channel)!
			expect(refused.status).toBe('disabled')
			expect(refused.disabled_reason).toContain(code)
			const said = `${JSON.stringify(channels)}\n${logs.join('\n')}`
			expect(said).toContain(code)
			for (const secret of [...sent, ...sent.map((a) => a.split('.')[2]!), body(stranger.keyPem), body(leaf.keyPem), (await Bun.file(tokenFile).text()).trim()]) expect(said).not.toContain(secret)
		})
})
