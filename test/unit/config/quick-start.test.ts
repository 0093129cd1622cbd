/**
 * Which models the quick-start channels serve (src/config/quick-start.ts, quick-start-cloud.ts): no model id may be
 * claimed by two vendors' default channels (QA found OpenAI's `text-embedding-*` taking Google's `text-embedding-004`),
 * so a family served by its vendor's own key stays with it (Vertex AI's Claude and Gemini, Azure's OpenAI names), and variables
 * the cloud SDKs share with other uses are passed over with a warning rather than stopping the start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { ConfigError } from '../../../src/config/gateway-file'
import { withQuickStart } from '../../../src/config/quick-start'
import { matchesModel } from '../../../src/routing/catalog'
import { testCertificate } from '../../helpers/x509'

const dir = `${tmpdir()}/quick-start-unit-${process.pid}`
/** TEST-ONLY certificates made with openssl (test/fixtures/azure-entra/README.md). */
const FIXTURES = new URL('../../fixtures/azure-entra', import.meta.url).pathname
const saFile = `${dir}/sa.json`
const adcFile = `${dir}/adc.json`
const adcNoQuotaFile = `${dir}/adc-no-quota.json`
const wifFile = `${dir}/wif.json`
const impersonatedFile = `${dir}/impersonated.json`
const externalUserFile = `${dir}/external-user.json`
const WIF = {
	type: 'external_account',
	audience: '//iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/pool/providers/k8s',
	subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
	token_url: 'https://sts.googleapis.com/v1/token',
	credential_source: { file: '/var/run/secrets/tokens/gcp-token' },
}
/** `gcloud auth application-default login --impersonate-service-account=SA`'s file. */
const IMPERSONATED = {
	delegates: [],
	service_account_impersonation_url: 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/vertex@proj-imp.iam.gserviceaccount.com:generateAccessToken',
	source_credentials: { account: '', client_id: 'x.apps.googleusercontent.com', client_secret: 'adc-secret', refresh_token: 'adc-refresh', type: 'authorized_user', universe_domain: 'googleapis.com' },
	type: 'impersonated_service_account',
	quota_project_id: 'proj-imp',
}
beforeAll(async () => {
	mkdirSync(dir, { recursive: true })
	await Bun.write(saFile, JSON.stringify({ type: 'service_account', project_id: 'proj-1', client_email: 'gw@proj-1.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n' }))
	await Bun.write(adcFile, JSON.stringify({ type: 'authorized_user', client_id: 'x', client_secret: 'adc-secret', refresh_token: 'adc-refresh', quota_project_id: 'proj-quota' }))
	await Bun.write(adcNoQuotaFile, JSON.stringify({ type: 'authorized_user', client_id: 'x', client_secret: 'adc-secret', refresh_token: 'adc-refresh' }))
	await Bun.write(wifFile, JSON.stringify(WIF))
	await Bun.write(impersonatedFile, JSON.stringify(IMPERSONATED))
	// Workforce identity federation's `gcloud auth application-default login --login-config`: not a key Vertex channels take.
	await Bun.write(externalUserFile, JSON.stringify({ type: 'external_account_authorized_user', audience: '//iam.googleapis.com/locations/global/workforcePools/p/providers/x', refresh_token: 'adc-refresh', client_secret: 'adc-secret' }))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const EVERY_KEY = {
	OPENAI_API_KEY: 'sk-1',
	ANTHROPIC_API_KEY: 'sk-ant-1',
	GEMINI_API_KEY: 'AIza1',
	AWS_BEARER_TOKEN_BEDROCK: 'ABSK1',
	AWS_REGION: 'us-east-1',
	AZURE_OPENAI_API_KEY: 'az1',
	AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com',
	AZURE_OPENAI_DEPLOYMENTS: 'prod-4o, team-*',
	GOOGLE_APPLICATION_CREDENTIALS: saFile,
}

/** The default channels serving `model`. */
const servedBy = async (vars: Record<string, string>, model: string) =>
	(await withQuickStart({ channels: [], models: [] }, vars)).channels.filter((c) => matchesModel(c.models, model)).map((c) => c.name)

describe('quick-start model patterns', () => {
	it('should give every model id one default channel when every vendor has a key', async () => {
		const ids: Record<string, string> = {
			'gpt-4o': 'openai-default',
			'text-embedding-3-small': 'openai-default',
			'claude-sonnet-4-5-20250929': 'anthropic-default',
			'gemini-2.5-pro': 'gemini-default',
			'text-embedding-004': 'gemini-default',
			'text-embedding-005': 'vertex-default',
			'anthropic.claude-sonnet-4-5-20250929-v1:0': 'bedrock-default',
			'us.anthropic.claude-sonnet-4-6-v1:0': 'bedrock-default',
			'global.amazon.nova-2-lite-v1:0': 'bedrock-default',
			'meta.llama3-3-70b-instruct-v1:0': 'bedrock-default',
			'openai.gpt-oss-120b-1:0': 'bedrock-default',
			'prod-4o': 'azure-default',
			'team-mini': 'azure-default',
		}
		const got: Record<string, string[]> = {}
		for (const id of Object.keys(ids)) got[id] = await servedBy(EVERY_KEY, id)
		expect(got).toEqual(Object.fromEntries(Object.entries(ids).map(([id, ch]) => [id, [ch]])))
		const warnings: string[] = []
		await withQuickStart({ channels: [], models: [] }, EVERY_KEY, (m) => warnings.push(m))
		expect(warnings).toEqual([
			"vertex-default does not serve claude-* (ANTHROPIC_API_KEY's anthropic-default does) or gemini-* (GEMINI_API_KEY's gemini-default does): GATEWAY_CONFIG can give Vertex AI those models too",
		])
	})

	it("should give the cloud defaults their vendors' whole families when they are the only ones", async () => {
		const cloud = { AZURE_OPENAI_API_KEY: 'az1', AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com', GOOGLE_APPLICATION_CREDENTIALS: saFile }
		expect(await servedBy(cloud, 'gpt-4o')).toEqual(['azure-default'])
		expect(await servedBy(cloud, 'claude-sonnet-4-5')).toEqual(['vertex-default'])
		expect(await servedBy(cloud, 'gemini-2.5-flash')).toEqual(['vertex-default'])
	})

	it('should make no Azure channel serving OpenAI names beside OPENAI_API_KEY, saying to list the deployments', async () => {
		const warnings: string[] = []
		const cfg = await withQuickStart({ channels: [], models: [] }, { OPENAI_API_KEY: 'sk-1', AZURE_OPENAI_API_KEY: 'az1', AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com' }, (m) => warnings.push(m))
		expect(cfg.channels.map((c) => c.name)).toEqual(['openai-default'])
		expect(warnings).toEqual([expect.stringContaining('list the deployments in AZURE_OPENAI_DEPLOYMENTS')])
	})
})

describe('cloud variables shared with other uses', () => {
	it('should pass over IAM keys without a region and a credentials file of a type Vertex channels do not take, with a warning each', async () => {
		const warnings: string[] = []
		const cfg = await withQuickStart({ channels: [], models: [] }, { AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 's3cr3t', GOOGLE_APPLICATION_CREDENTIALS: externalUserFile, AZURE_TENANT_ID: 't' }, (m) => warnings.push(m))
		expect(cfg.channels).toEqual([])
		expect(warnings).toEqual([expect.stringContaining('neither AWS_REGION nor AWS_DEFAULT_REGION'), expect.stringContaining('of type "external_account_authorized_user"')])
		expect(warnings.join()).not.toContain('adc-secret')
	})

	it("should make vertex-default from gcloud's authorized_user file, in its quota_project_id or GOOGLE_CLOUD_PROJECT", async () => {
		const vertex = async (vars: Record<string, string>) => (await withQuickStart({ channels: [], models: [] }, vars)).channels.find((c) => c.name === 'vertex-default')
		const adc = await vertex({ GOOGLE_APPLICATION_CREDENTIALS: adcFile })
		expect(adc).toMatchObject({ type: 'vertex', settings: { project: 'proj-quota', region: 'global' } })
		expect(JSON.parse(adc!.api_key).refresh_token).toBe('adc-refresh')
		expect((await vertex({ GOOGLE_APPLICATION_CREDENTIALS: adcFile, GOOGLE_CLOUD_PROJECT: 'proj-env' }))!.settings).toMatchObject({ project: 'proj-env' })
		const err = await vertex({ GOOGLE_APPLICATION_CREDENTIALS: adcNoQuotaFile }).catch((e) => e)
		expect(err).toBeInstanceOf(ConfigError)
		expect(err.message).toContain(`GOOGLE_CLOUD_PROJECT must be set: the authorized_user file ${adcNoQuotaFile} names no quota_project_id`)
		expect(err.message).not.toContain('adc-secret')
	})

	it("should make vertex-default from workload identity federation's external_account file, in GOOGLE_CLOUD_PROJECT", async () => {
		const cfg = await withQuickStart({ channels: [], models: [] }, { GOOGLE_APPLICATION_CREDENTIALS: wifFile, GOOGLE_CLOUD_PROJECT: 'proj-wif', GOOGLE_CLOUD_LOCATION: 'us-east5' })
		const vx = cfg.channels.find((c) => c.name === 'vertex-default')
		expect(vx).toMatchObject({ type: 'vertex', settings: { project: 'proj-wif', region: 'us-east5' } })
		expect(JSON.parse(vx!.api_key)).toEqual(WIF)
	})

	it("should make vertex-default from gcloud's impersonated_service_account file, in its quota_project_id", async () => {
		const cfg = await withQuickStart({ channels: [], models: [] }, { GOOGLE_APPLICATION_CREDENTIALS: impersonatedFile })
		const vx = cfg.channels.find((c) => c.name === 'vertex-default')
		expect(vx).toMatchObject({ type: 'vertex', settings: { project: 'proj-imp', region: 'global' } })
		expect(JSON.parse(vx!.api_key)).toEqual(IMPERSONATED)
	})

	it('should not make a cloud channel when GATEWAY_CONFIG has one of its type, nor read its variables', async () => {
		const mine = { name: 'mine', type: 'bedrock' as const, base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', api_key: 'k', models: ['m'] }
		const cfg = await withQuickStart({ channels: [mine], models: [] }, { AWS_BEARER_TOKEN_BEDROCK: 'ABSK1' })
		expect(cfg.channels.map((c) => c.name)).toEqual(['mine'])
	})

	it('should refuse a partial service principal and an AWS key with a line break, naming the variables only', async () => {
		const err = await withQuickStart({ channels: [], models: [] }, { AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com', AZURE_CLIENT_ID: 'c', AWS_BEARER_TOKEN_BEDROCK: 'ABSK1\n', AWS_REGION: 'us-east-1' }).catch((e) => e)
		expect(err).toBeInstanceOf(ConfigError)
		expect(err.message).toContain('AZURE_TENANT_ID, AZURE_CLIENT_SECRET (or AZURE_CLIENT_CERTIFICATE_PATH, or AZURE_FEDERATED_TOKEN_FILE) must be set with AZURE_CLIENT_ID')
		expect(err.message).toContain('AWS_BEARER_TOKEN_BEDROCK has spaces, line breaks or a colon')
		expect(err.message).not.toContain('ABSK1')
	})
})

describe('azure quick start with a certificate or workload identity', () => {
	const AZ = { AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com', AZURE_OPENAI_DEPLOYMENTS: 'prod-4o', AZURE_TENANT_ID: 'contoso.onmicrosoft.com', AZURE_CLIENT_ID: '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44' }
	const keyOf = async (vars: Record<string, string>) => JSON.parse((await withQuickStart({ channels: [], models: [] }, vars)).channels.find((c) => c.name === 'azure-default')!.api_key)
	const refusalOf = async (vars: Record<string, string>) => ((await withQuickStart({ channels: [], models: [] }, vars).catch((e) => e)) as Error).message

	it("should key azure-default with AZURE_CLIENT_CERTIFICATE_PATH's PEM, or AZURE_FEDERATED_TOKEN_FILE's path, a secret first as azure-identity does", async () => {
		const cert = await testCertificate({ cn: 'quick start app' })
		const pem = `${dir}/app.pem`
		await Bun.write(pem, cert.certPem + cert.keyPem)
		expect(await keyOf({ ...AZ, AZURE_CLIENT_CERTIFICATE_PATH: pem, AZURE_CLIENT_SEND_CERTIFICATE_CHAIN: 'true' })).toEqual({
			tenant_id: AZ.AZURE_TENANT_ID,
			client_id: AZ.AZURE_CLIENT_ID,
			certificate: cert.certPem + cert.keyPem,
			send_certificate_chain: true,
		})
		const token = '/var/run/secrets/azure/tokens/azure-identity-token'
		expect(await keyOf({ ...AZ, AZURE_FEDERATED_TOKEN_FILE: token })).toEqual({ tenant_id: AZ.AZURE_TENANT_ID, client_id: AZ.AZURE_CLIENT_ID, federated_token_file: token })
		expect(await keyOf({ ...AZ, AZURE_CLIENT_SECRET: 's3cret', AZURE_FEDERATED_TOKEN_FILE: token, AZURE_CLIENT_CERTIFICATE_PATH: pem })).toEqual({ tenant_id: AZ.AZURE_TENANT_ID, client_id: AZ.AZURE_CLIENT_ID, client_secret: 's3cret' })
		expect((await keyOf({ ...AZ, AZURE_CLIENT_CERTIFICATE_PATH: pem, AZURE_FEDERATED_TOKEN_FILE: token })).certificate).toBe(cert.certPem + cert.keyPem)
	})

	it('should key azure-default with a PFX file in base64 or a PEM with an encrypted key, and AZURE_CLIENT_CERTIFICATE_PASSWORD, as azure-identity reads them', async () => {
		const password = 'test-only-password'
		for (const name of ['app-aes256.pfx', 'app-legacy.pfx']) {
			const file = `${FIXTURES}/${name}`
			expect(await keyOf({ ...AZ, AZURE_CLIENT_CERTIFICATE_PATH: file, AZURE_CLIENT_CERTIFICATE_PASSWORD: password })).toEqual({
				tenant_id: AZ.AZURE_TENANT_ID,
				client_id: AZ.AZURE_CLIENT_ID,
				certificate: Buffer.from(await Bun.file(file).bytes()).toString('base64'),
				certificate_password: password,
				send_certificate_chain: false,
			})
		}
		// Key Vault's PFX download has no password: none is set.
		expect(Object.keys(await keyOf({ ...AZ, AZURE_CLIENT_CERTIFICATE_PATH: `${FIXTURES}/app-nopass.pfx` }))).not.toContain('certificate_password')
		const pem = `${FIXTURES}/app-encrypted.pem`
		expect(await keyOf({ ...AZ, AZURE_CLIENT_CERTIFICATE_PATH: pem, AZURE_CLIENT_CERTIFICATE_PASSWORD: password })).toMatchObject({ certificate: await Bun.file(pem).text(), certificate_password: password })
	})

	it('should refuse a certificate file that cannot serve, naming the variable, never the key', async () => {
		const cert = await testCertificate({ cn: 'quick start app' })
		const other = await testCertificate({ cn: 'another app' })
		const mismatched = `${dir}/mismatched.pem`
		await Bun.write(mismatched, cert.certPem + other.keyPem)
		const pfx = `${dir}/app.pfx`
		await Bun.write(pfx, Uint8Array.of(0x30, 0x82, 0x0a, 0x01, 0x02, 0x01, 0x03))
		const neither = `${dir}/app.der`
		await Bun.write(neither, Uint8Array.of(0x04, 0x01, 0x00))
		for (const [vars, said] of [
			[{ AZURE_CLIENT_CERTIFICATE_PATH: mismatched }, 'AZURE_CLIENT_CERTIFICATE_PATH has a private key that belongs to none of its certificate'],
			[{ AZURE_CLIENT_CERTIFICATE_PATH: pfx }, 'AZURE_CLIENT_CERTIFICATE_PATH is a PKCS#12 (PFX) file that does not parse'],
			[{ AZURE_CLIENT_CERTIFICATE_PATH: neither }, `AZURE_CLIENT_CERTIFICATE_PATH names ${neither}, which is neither a PEM file nor a PKCS#12 (PFX) file`],
			[{ AZURE_CLIENT_CERTIFICATE_PATH: `${dir}/none.pem` }, `AZURE_CLIENT_CERTIFICATE_PATH names ${dir}/none.pem, which cannot be read (ENOENT)`],
			[{ AZURE_CLIENT_CERTIFICATE_PATH: `${FIXTURES}/app-aes256.pfx`, AZURE_CLIENT_CERTIFICATE_PASSWORD: 'pw-secret' }, 'AZURE_CLIENT_CERTIFICATE_PATH is a PKCS#12 (PFX) file that AZURE_CLIENT_CERTIFICATE_PASSWORD does not open: wrong password'],
			[{ AZURE_CLIENT_CERTIFICATE_PATH: `${FIXTURES}/app-aes256.pfx` }, 'AZURE_CLIENT_CERTIFICATE_PATH is a password-protected PKCS#12 (PFX) file: give its password as AZURE_CLIENT_CERTIFICATE_PASSWORD'],
			[{ AZURE_CLIENT_CERTIFICATE_PATH: `${FIXTURES}/app-encrypted.pem` }, 'AZURE_CLIENT_CERTIFICATE_PATH holds an encrypted private key (-----BEGIN ENCRYPTED PRIVATE KEY-----): give its password as AZURE_CLIENT_CERTIFICATE_PASSWORD'],
			[{ AZURE_FEDERATED_TOKEN_FILE: 'tokens/azure-identity-token' }, 'AZURE_FEDERATED_TOKEN_FILE is the absolute path'],
		] as const) {
			const why = await refusalOf({ ...AZ, ...vars })
			expect(why).toContain(said)
			for (const secret of [cert.keyPem, other.keyPem].map((k) => k.split('\n')[2]!)) expect(why).not.toContain(secret)
			expect(why).not.toContain('pw-secret')
		}
	})
})
