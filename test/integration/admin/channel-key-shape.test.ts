/**
 * `bedrock` and `vertex` channel keys through the management API: a key that cannot work (a service-account JSON that
 * does not parse or lacks its private key, IAM keys not in `ACCESS_KEY_ID:SECRET[:SESSION_TOKEN]` form, nothing to
 * sign for or no project) is a 400 naming the field when saved, not a failure at the first call; a good key is never
 * answered back, neither its private key nor its AWS secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'
import { testServiceAccount } from '../../mocks/vertex/oauth'
import { testCertificate } from '../../helpers/x509'

let app: TestApp
let sa: string
let saKeyBody: string

const BEDROCK = { type: 'bedrock', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', models: ['claude-br'] }
const VERTEX = { type: 'vertex', base_url: 'https://aiplatform.googleapis.com', models: ['claude-vx'], settings: { region: 'us-east5' } }
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'

beforeAll(async () => {
	app = await startTestApp()
	sa = (await testServiceAccount('https://oauth2.googleapis.com/token', 'proj-keys')).json
	saKeyBody = (JSON.parse(sa).private_key as string).split('\n')[1]!
}, 120_000)
afterAll(async () => {
	await app.close()
})

const names = async () => (await app.admin('/api/channels')).body.data.map((c: { name: string }) => c.name) as string[]

describe('bedrock and vertex keys at save time', () => {
	it('should refuse a malformed vertex service-account key with 400 naming api_key, saying why without the key', async () => {
		const noPrivate = JSON.stringify({ ...JSON.parse(sa), private_key: undefined })
		const badPem = JSON.stringify({ ...JSON.parse(sa), private_key: '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n' })
		for (const [i, key, said] of [
			[1, sa.slice(0, -20), 'not valid JSON'],
			[2, noPrivate, 'private_key'],
			[3, JSON.stringify({ ...JSON.parse(sa), client_email: undefined }), 'client_email'],
			[4, badPem, 'PKCS#8'],
		] as const) {
			const r = await app.admin('/api/channels', { body: { ...VERTEX, name: `vx-bad-${i}`, api_key: key } })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'api_key' })
			expect(r.body.error.message).toContain(said)
			expect(JSON.stringify(r.body)).not.toContain(saKeyBody)
		}
		expect((await names()).filter((n) => n.startsWith('vx-bad-'))).toEqual([])
	})

	it('should refuse a service-account key without project_id when settings.project is not set', async () => {
		const noProject = JSON.stringify({ ...JSON.parse(sa), project_id: undefined })
		const r = await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-no-project', api_key: noProject } })
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('settings.project')
		const ok = await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-project', api_key: noProject, settings: { region: 'us-east5', project: 'proj-set' } } })
		expect(ok.status).toBe(201)
	})

	it('should refuse an express mode key for Claude models, which Vertex serves only to service accounts', async () => {
		const express = 'AQ.Ab8RN6mockexpresskey'
		const r = await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-express-claude', api_key: express, models: ['sonnet'], model_map: { sonnet: 'claude-sonnet-4-5@20250929' } } })
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('api_key')
		expect(r.body.error.message).toContain('claude-sonnet-4-5@20250929')
		const c = await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-express-gemini', api_key: express, models: ['gemini-2.5-flash'] } })
		expect(c.status).toBe(201)
		const widened = await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { models: ['gemini-2.5-flash', 'claude-*'] } })
		expect(widened.status).toBe(400)
		expect(widened.body.error.message).toContain('claude-*')
	})

	it('should refuse bedrock keys in neither form, and IAM keys with no region to sign for', async () => {
		for (const [i, key, param, said] of [
			[1, `AKIAIOSFODNN7EXAMPLE:`, 'api_key', 'ACCESS_KEY_ID:SECRET_ACCESS_KEY'],
			[2, `AKIAIOSFODNN7EXAMPLE:${SECRET}:token:extra`, 'api_key', 'ACCESS_KEY_ID:SECRET_ACCESS_KEY'],
			[3, `AKIAIOSFODNN7EXAMPLE\n${SECRET}`, 'api_key', 'space'],
		] as const) {
			const r = await app.admin('/api/channels', { body: { ...BEDROCK, name: `br-bad-${i}`, api_key: key } })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param })
			expect(r.body.error.message).toContain(said)
			expect(JSON.stringify(r.body)).not.toContain(SECRET)
		}
		const proxy = await app.admin('/api/channels', { body: { ...BEDROCK, base_url: 'https://bedrock-proxy.corp.example', name: 'br-no-region', api_key: `AKIAIOSFODNN7EXAMPLE:${SECRET}` } })
		expect(proxy.status).toBe(400)
		expect(proxy.body.error.param).toBe('settings.region')
		expect((await names()).filter((n) => n.startsWith('br-'))).toEqual([])
	})

	it('should check the key against a PATCH that changes the key, type, base_url or settings', async () => {
		const c = await app.admin('/api/channels', { body: { ...BEDROCK, name: 'br-good', api_key: `AKIAIOSFODNN7EXAMPLE:${SECRET}` } })
		expect(c.status).toBe(201)
		const badKey = await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { api_key: 'AKIAIOSFODNN7EXAMPLE:' } })
		expect(badKey.status).toBe(400)
		expect(badKey.body.error.param).toBe('api_key')
		const noRegion = await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { base_url: 'https://bedrock-proxy.corp.example' } })
		expect(noRegion.status).toBe(400)
		expect(noRegion.body.error.param).toBe('settings.region')
		const withRegion = await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { base_url: 'https://bedrock-proxy.corp.example', settings: { region: 'us-west-2' } } })
		expect(withRegion.status).toBe(200)
		const toVertex = await app.admin(`/api/channels/${c.body.id}`, { method: 'PATCH', body: { type: 'vertex' } })
		expect(toVertex.status).toBe(400)
		expect(toVertex.body.error.param).toBe('api_key')
	})

	it('should accept the good forms and never answer the key back', async () => {
		const made = [
			await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-sa', api_key: sa } }),
			await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-express', api_key: 'AQ.Ab8RN6mockexpresskey', models: ['gemini-vx'] } }),
			await app.admin('/api/channels', { body: { ...BEDROCK, name: 'br-bearer', api_key: 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl' } }),
			await app.admin('/api/channels', { body: { ...BEDROCK, name: 'br-session', api_key: `ASIAIOSFODNN7EXAMPLE:${SECRET}:IQoJb3JpZ2luX2VjEXAMPLE` } }),
		]
		expect(made.map((r) => r.status)).toEqual([201, 201, 201, 201])
		const answers = JSON.stringify([made.map((r) => r.body), (await app.admin('/api/channels')).body, ...(await Promise.all(made.map(async (r) => (await app.admin(`/api/channels/${r.body.id}`)).body)))])
		expect(answers).not.toContain(saKeyBody)
		expect(answers).not.toContain('PRIVATE KEY')
		expect(answers).not.toContain(SECRET)
	})
})

describe('vertex authorized_user, external_account and impersonated_service_account keys at save time', () => {
	const REFRESH = '1//0gMockRefreshTokenDoNotSay-0123456789abcdefghijklmnop'
	const CLIENT_SECRET = 'd-FL95Q19q7MockClientSecretDoNotSay'
	const user = { type: 'authorized_user', client_id: '764086051850-mock.apps.googleusercontent.com', client_secret: CLIENT_SECRET, refresh_token: REFRESH, quota_project_id: 'proj-keys' }
	const workload = {
		type: 'external_account',
		audience: '//iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/pool/providers/k8s',
		subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
		token_url: 'https://sts.googleapis.com/v1/token',
		credential_source: { url: 'http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01', headers: { Metadata: 'True' }, format: { type: 'json', subject_token_field_name: 'access_token' } },
		service_account_impersonation_url: 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/vx@proj-keys.iam.gserviceaccount.com:generateAccessToken',
		quota_project_id: 'proj-keys',
	}
	const impersonated = {
		delegates: [],
		service_account_impersonation_url: 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/vx@proj-keys.iam.gserviceaccount.com:generateAccessToken',
		source_credentials: user,
		type: 'impersonated_service_account',
		quota_project_id: 'proj-keys',
	}
	/** What `gcloud iam workload-identity-pools create-cred-config --aws --enable-imdsv2` writes. */
	const aws = {
		environment_id: 'aws1',
		region_url: 'http://169.254.169.254/latest/meta-data/placement/availability-zone',
		url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials',
		regional_cred_verification_url: 'https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15',
		imdsv2_session_token_url: 'http://169.254.169.254/latest/api/token',
	}
	const key = (o: Record<string, unknown>) => JSON.stringify(o)

	it('should refuse one that cannot work with 400 naming api_key and the member, never a secret', async () => {
		for (const [i, k, said] of [
			[1, key({ ...user, refresh_token: undefined }), 'an authorized_user key needs `refresh_token`'],
			[2, key({ ...user, client_secret: '' }), 'an authorized_user key needs `client_secret`'],
			[3, key({ ...user, token_uri: 'file:///etc/passwd' }), '`token_uri` must be an http(s) URL'],
			[4, key({ ...workload, audience: undefined }), 'an external_account key needs `audience`'],
			[5, key({ ...workload, credential_source: undefined }), 'an external_account key needs `credential_source`'],
			[6, key({ ...workload, credential_source: {} }), '`credential_source` needs one of `file` or `url`'],
			// A command is a file on the host too, whatever GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES says.
			[7, key({ ...workload, credential_source: { executable: { command: '/bin/get-token' } } }), "(`credential_source.executable.command`) is taken only from GATEWAY_CONFIG"],
			[8, key({ ...workload, credential_source: { ...aws, regional_cred_verification_url: undefined } }), 'an AWS `credential_source` needs `regional_cred_verification_url`'],
			// The gateway's AWS credentials sign GetCallerIdentity and nothing else, whoever wrote the key.
			[19, key({ ...workload, credential_source: { ...aws, regional_cred_verification_url: 'https://iam.amazonaws.com/?Action=CreateUser&UserName=x&Version=2010-05-08' } }), "must be AWS STS's GetCallerIdentity"],
			[20, key({ ...workload, credential_source: { ...aws, regional_cred_verification_url: 'https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15&Action=AssumeRole' } }), "must be AWS STS's GetCallerIdentity"],
			[21, key({ ...workload, credential_source: { ...aws, environment_id: 'aws2' } }), '`credential_source.environment_id` must be "aws1"'],
			[23, key({ ...workload, credential_source: { executable: { command: '/bin/get-token', timeout_millis: 1000 } } }), '`credential_source.executable.timeout_millis` must be a whole number of milliseconds from 5000 to 120000'],
			[24, key({ ...impersonated, source_credentials: { ...workload, credential_source: { executable: { command: '/bin/get-token' } } } }), '(`source_credentials.credential_source.executable.command`) is taken only from GATEWAY_CONFIG'],
			[22, key({ ...workload, credential_source: { ...aws, region_url: 'ftp://169.254.169.254/zone' } }), '`credential_source.region_url` must be an http(s) URL'],
			[9, key({ ...workload, credential_source: { url: 'http://169.254.169.254/token', format: { type: 'json' } } }), '`credential_source.format.subject_token_field_name`'],
			[10, key({ ...workload, service_account_impersonation_url: 'iamcredentials.googleapis.com/x' }), '`service_account_impersonation_url` must be an http(s) URL'],
			[11, key({ ...workload, service_account_impersonation: { token_lifetime_seconds: 60 } }), '`service_account_impersonation.token_lifetime_seconds`'],
			[12, key({ ...user, type: 'external_account_authorized_user' }), 'credentials of type "external_account_authorized_user" are not supported'],
			[14, key({ ...impersonated, source_credentials: { ...user, refresh_token: undefined } }), 'in `source_credentials`: an authorized_user key needs `refresh_token`'],
			[15, key({ ...impersonated, source_credentials: impersonated }), 'in `source_credentials`: credentials of type "impersonated_service_account" are not supported'],
			[16, key({ ...impersonated, delegates: 'a@b' }), '`delegates` must be a list of service accounts'],
			[17, key({ ...impersonated, service_account_impersonation_url: 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/vx@p.iam.gserviceaccount.com' }), 'must be a generateAccessToken URL'],
			[18, key({ ...impersonated, source_credentials: { ...workload, credential_source: { file: '/var/run/secrets/tokens/gcp-token' } } }), "(`source_credentials.credential_source.file`) is taken only from GATEWAY_CONFIG"],
			// Only GATEWAY_CONFIG and the quick start name files on the host: here any one-line file could go to a token_url of the caller's.
			[13, key({ ...workload, credential_source: { file: '/var/run/secrets/tokens/gcp-token' } }), "a key naming a file on the gateway's host (`credential_source.file`) is taken only from GATEWAY_CONFIG"],
		] as const) {
			const r = await app.admin('/api/channels', { body: { ...VERTEX, name: `vx-cred-bad-${i}`, api_key: k } })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'api_key' })
			expect(r.body.error.message).toContain(said)
			for (const secret of [REFRESH, CLIENT_SECRET]) expect(JSON.stringify(r.body)).not.toContain(secret)
		}
		expect((await names()).filter((n) => n.startsWith('vx-cred-bad-'))).toEqual([])
	})

	it('should ask for settings.project when the file names no quota_project_id', async () => {
		for (const [name, k] of [
			['vx-user-noproject', key({ ...user, quota_project_id: undefined })],
			['vx-wif-noproject', key({ ...workload, quota_project_id: undefined })],
		] as const) {
			const r = await app.admin('/api/channels', { body: { ...VERTEX, name, api_key: k } })
			expect(r.status).toBe(400)
			expect(r.body.error.param).toBe('settings.project')
			expect(r.body.error.message).toContain('has no quota_project_id')
			const ok = await app.admin('/api/channels', { body: { ...VERTEX, name, api_key: k, settings: { region: 'us-east5', project: 'proj-set' } } })
			expect(ok.status).toBe(201)
		}
	})

	it('should accept both, Claude models too, and never answer them back', async () => {
		const claude = { models: ['sonnet'], model_map: { sonnet: 'claude-sonnet-4-5@20250929' } }
		const made = [
			await app.admin('/api/channels', { body: { ...VERTEX, ...claude, name: 'vx-user', api_key: key(user) } }),
			await app.admin('/api/channels', { body: { ...VERTEX, ...claude, name: 'vx-wif', api_key: key(workload) } }),
			await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-wif-text', api_key: key({ ...workload, credential_source: { url: 'http://metadata.internal/token' } }) } }),
			await app.admin('/api/channels', { body: { ...VERTEX, ...claude, name: 'vx-imp', api_key: key({ ...impersonated, delegates: ['d@proj-keys.iam.gserviceaccount.com'] }) } }),
			await app.admin('/api/channels', { body: { ...VERTEX, name: 'vx-wif-aws', api_key: key({ ...workload, subject_token_type: 'urn:ietf:params:aws:token-type:aws4_request', credential_source: aws }) } }),
		]
		expect(made.map((r) => r.status)).toEqual([201, 201, 201, 201, 201])
		const answers = JSON.stringify([made.map((r) => r.body), (await app.admin('/api/channels')).body])
		for (const secret of [REFRESH, CLIENT_SECRET]) expect(answers).not.toContain(secret)
	})
})

describe('azure keys at save time', () => {
	const AZURE = { type: 'azure', base_url: 'https://contoso.openai.azure.com', models: ['az-4o'] }
	const CLIENT_SECRET = 'Q8Q~mockClientSecret.Value_0123456789-abcdEF'
	const principal = { tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47', client_id: '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44', client_secret: CLIENT_SECRET }

	it('should refuse a service principal that cannot work with 400 naming api_key and the member, never the secret', async () => {
		for (const [i, key, said] of [
			[1, JSON.stringify(principal).slice(0, -2), 'not valid JSON'],
			[2, JSON.stringify({ ...principal, client_secret: undefined }), '`client_secret`'],
			[3, JSON.stringify({ tenant_id: principal.tenant_id, clientId: principal.client_id, clientSecret: CLIENT_SECRET }), '`client_id`, `client_secret`'],
			[4, JSON.stringify({ ...principal, client_id: 'my-app' }), 'application (client) id, a GUID'],
			[5, JSON.stringify({ ...principal, tenant_id: 'contoso/../x' }), 'directory (tenant) id'],
			[6, JSON.stringify({ ...principal, client_secret: `${CLIENT_SECRET}\n` }), 'line break'],
			[7, 'abc def', 'neither a resource key'],
		] as const) {
			const r = await app.admin('/api/channels', { body: { ...AZURE, name: `az-bad-${i}`, api_key: key } })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'api_key' })
			expect(r.body.error.message).toContain(said)
			expect(JSON.stringify(r.body)).not.toContain(CLIENT_SECRET)
		}
		expect((await names()).filter((n) => n.startsWith('az-bad-'))).toEqual([])
	})

	it('should refuse an authority_host that is not an http(s) URL, naming it', async () => {
		const r = await app.admin('/api/channels', { body: { ...AZURE, name: 'az-authority', api_key: JSON.stringify(principal), settings: { authority_host: 'login.microsoftonline.us' } } })
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('settings.authority_host')
		expect(r.body.error.message).toContain('Microsoft Entra ID authority')
	})

	it('should accept a resource key and a service principal, with a sovereign authority, and never answer them back', async () => {
		const made = [
			await app.admin('/api/channels', { body: { ...AZURE, name: 'az-key', api_key: '0123456789abcdef0123456789abcdef\n' } }),
			await app.admin('/api/channels', { body: { ...AZURE, name: 'az-entra', api_key: JSON.stringify(principal) } }),
			await app.admin('/api/channels', {
				body: {
					...AZURE,
					name: 'az-entra-gov',
					base_url: 'https://contoso.openai.azure.us',
					api_key: JSON.stringify({ ...principal, tenant_id: 'contoso.onmicrosoft.us' }),
					settings: { authority_host: 'https://login.microsoftonline.us', token_scope: 'https://cognitiveservices.azure.us/.default' },
				},
			}),
		]
		expect(made.map((r) => r.status)).toEqual([201, 201, 201])
		const bad = await app.admin(`/api/channels/${made[1]!.body.id}`, { method: 'PATCH', body: { api_key: JSON.stringify({ ...principal, client_id: 'x' }) } })
		expect(bad.status).toBe(400)
		expect(bad.body.error.param).toBe('api_key')
		const answers = JSON.stringify([made.map((r) => r.body), (await app.admin('/api/channels')).body])
		expect(answers).not.toContain(CLIENT_SECRET)
	})
})

describe('azure certificate and federated token file keys at save time', () => {
	const AZURE = { type: 'azure', base_url: 'https://contoso.openai.azure.com', models: ['az-4o'] }
	const ids = { tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47', client_id: '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44' }
	const dir = `${new URL('../../../', import.meta.url).pathname}test-output/channel-key-shape-${process.pid}`

	it('should refuse a certificate that cannot sign or is out of date, and a token file that cannot serve, with 400 naming api_key, never the key', async () => {
		const good = await testCertificate({ cn: 'save-time app' })
		const other = await testCertificate({ cn: 'another app' })
		const old = await testCertificate({ cn: 'old app', notBefore: new Date(Date.now() - 2 * 86400_000), notAfter: new Date(Date.now() - 86400_000) })
		await Bun.write(`${dir}/not-a-token`, 'password=hunter2\n')
		for (const [i, proof, said] of [
			[1, { certificate: good.certPem }, '`certificate` holds no private key'],
			[2, { certificate: good.certPem + other.keyPem }, '`certificate` has a private key that belongs to none of its certificate'],
			[3, { certificate: old.certPem + old.keyPem }, 'the `certificate` expired on '],
			// What the file holds is checked where such keys come from (GATEWAY_CONFIG: config-apply.test.ts); here none is read.
			[4, { federated_token_file: `${dir}/missing-token` }, "a key naming a file on the gateway's host (`federated_token_file`) is taken only from GATEWAY_CONFIG"],
			[5, { federated_token_file: `${dir}/not-a-token` }, "a key naming a file on the gateway's host (`federated_token_file`) is taken only from GATEWAY_CONFIG"],
		] as const) {
			const r = await app.admin('/api/channels', { body: { ...AZURE, name: `az-cert-bad-${i}`, api_key: JSON.stringify({ ...ids, ...proof }) } })
			expect(r.status).toBe(400)
			expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'api_key' })
			expect(r.body.error.message).toContain(said)
			for (const secret of [good.keyPem, other.keyPem, old.keyPem].map((k) => k.split('\n')[2]!)) expect(JSON.stringify(r.body)).not.toContain(secret)
			expect(JSON.stringify(r.body)).not.toContain('hunter2')
		}
		expect((await names()).filter((n) => n.startsWith('az-cert-bad-'))).toEqual([])
	})

	it('should accept a certificate with its key, and never answer the key back', async () => {
		const good = await testCertificate({ cn: 'save-time app' })
		const made = [await app.admin('/api/channels', { body: { ...AZURE, name: 'az-cert', api_key: JSON.stringify({ ...ids, certificate: good.certPem + good.keyPem, send_certificate_chain: true }) } })]
		expect(made.map((r) => r.status)).toEqual([201])
		expect(JSON.stringify([made.map((r) => r.body), (await app.admin('/api/channels')).body])).not.toContain(good.keyPem.split('\n')[2]!)
	})
})

describe('the ambient key at save time', () => {
	it('should take `ambient` on bedrock, vertex (Claude too, no project needed) and azure channels', async () => {
		const AZURE = { type: 'azure', base_url: 'https://res.openai.azure.com', models: ['gpt-4o'] }
		for (const [name, body] of [
			['br-ambient', { ...BEDROCK, api_key: 'ambient' }],
			['vx-ambient', { ...VERTEX, api_key: 'ambient', models: ['sonnet'], model_map: { sonnet: 'claude-sonnet-4-5@20250929' } }],
			['az-ambient', { ...AZURE, api_key: 'ambient' }],
			['az-ambient-user', { ...AZURE, api_key: 'ambient', settings: { client_id: '0d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a' } }],
		] as const) {
			const r = await app.admin('/api/channels', { body: { ...body, name } })
			expect(r.status).toBe(201)
		}
	})

	it('should refuse a bedrock ambient channel with no region to sign for, naming settings.region', async () => {
		const r = await app.admin('/api/channels', { body: { ...BEDROCK, base_url: 'https://bedrock-proxy.example.com', name: 'br-ambient-noregion', api_key: 'ambient' } })
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('settings.region')
		expect(r.body.error.message).toContain('ambient')
	})

	it('should refuse an azure client_id that is not a GUID (it goes into the metadata request)', async () => {
		const r = await app.admin('/api/channels', {
			body: { type: 'azure', base_url: 'https://res.openai.azure.com', models: ['gpt-4o'], name: 'az-ambient-bad', api_key: 'ambient', settings: { client_id: 'x&resource=https://management.azure.com' } },
		})
		expect(r.status).toBe(400)
		expect(r.body.error.param).toBe('settings.client_id')
		expect(r.body.error.message).toContain('a GUID')
	})
})
