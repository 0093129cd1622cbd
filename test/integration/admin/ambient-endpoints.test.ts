/**
 * The gateway host's own identity through the management API: an `ambient` channel, or a `vertex` external_account
 * whose subject token is the host's (a metadata address, an AWS role), sends credentials made from it only to the
 * cloud's own hosts, or to those AMBIENT_ENDPOINTS lists: anything else is a 400 naming the field, saying why and naming
 * AMBIENT_ENDPOINTS, never quoting the key. GATEWAY_CONFIG's channels are the operator's and not checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startTestApp, type TestApp } from '../../helpers/app'

let app: TestApp
let listed: TestApp

const EVIL = 'https://collector.evil.example'
const AWS_SOURCE = {
	environment_id: 'aws1',
	region_url: 'http://169.254.169.254/latest/meta-data/placement/availability-zone',
	url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials',
	regional_cred_verification_url: 'https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15',
}
const AZURE_IMDS = { url: 'http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=api://gw', headers: { Metadata: 'true' }, format: { type: 'json', subject_token_field_name: 'access_token' } }
const workload = (over: Record<string, unknown> = {}) =>
	JSON.stringify({
		type: 'external_account',
		audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/p/providers/azure',
		subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
		token_url: 'https://sts.googleapis.com/v1/token',
		credential_source: AZURE_IMDS,
		quota_project_id: 'proj-wif',
		...over,
	})
const impersonated = (source: Record<string, unknown>, url = 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@proj.iam.gserviceaccount.com:generateAccessToken') =>
	JSON.stringify({ type: 'impersonated_service_account', service_account_impersonation_url: url, source_credentials: source, quota_project_id: 'proj-wif' })

const BEDROCK = { type: 'bedrock', models: ['claude-br'], api_key: 'ambient', settings: { region: 'us-east-1' } }
const VERTEX = { type: 'vertex', base_url: 'https://aiplatform.googleapis.com', models: ['gemini-vx'] }
const AZURE = { type: 'azure', models: ['gpt-4o'], api_key: 'ambient' }

const GATEWAY_CONFIG = {
	channels: [
		{ name: 'cfg-br-proxy', type: 'bedrock', base_url: 'https://bedrock-proxy.example.com', api_key: 'ambient', models: ['claude-br'], settings: { region: 'us-east-1', control_plane_url: EVIL } },
		{ name: 'cfg-vx-wif', type: 'vertex', base_url: 'https://vertex-proxy.example.com', api_key: workload({ token_url: `${EVIL}/token` }), models: ['gemini-vx'] },
	],
	models: [],
}

beforeAll(async () => {
	app = await startTestApp({ config: GATEWAY_CONFIG as never })
	listed = await startTestApp({ env: { AMBIENT_ENDPOINTS: 'bedrock-proxy.corp.example,*.private.example,127.0.0.1' } })
}, 120_000)
afterAll(async () => {
	await app.close()
	await listed.close()
})

let n = 0
const save = (on: TestApp, body: Record<string, unknown>) => on.admin('/api/channels', { body: { name: `ch-${++n}`, ...body } })

/** A 400 naming `param`, saying why and what lets it, never the key's URLs. */
function refused(r: { status: number; body: any }, param: string, says: string) {
	expect({ status: r.status, param: r.body.error?.param }).toEqual({ status: 400, param })
	expect(r.body.error.message).toContain(says)
	expect(r.body.error.message).toContain('AMBIENT_ENDPOINTS')
	expect(r.body.error.message).not.toContain('evil.example')
}

describe('an ambient channel saved through the management API', () => {
	it("should refuse a base_url off the cloud's own hosts, for each type, naming base_url", async () => {
		for (const base_url of [EVIL, 'https://abc123.execute-api.us-east-1.amazonaws.com', 'https://my-lb-1.us-east-1.elb.amazonaws.com', 'http://bedrock-runtime.us-east-1.amazonaws.com'])
			refused(await save(app, { ...BEDROCK, base_url }), 'base_url', 'requests signed with its AWS role')
		for (const base_url of [EVIL, 'https://googleapis.com.evil.example', 'http://aiplatform.googleapis.com']) refused(await save(app, { ...VERTEX, base_url, api_key: 'ambient' }), 'base_url', 'service account')
		for (const base_url of [EVIL, 'https://res.openai.azure.com.evil.example', 'https://res.azure-api.net']) refused(await save(app, { ...AZURE, base_url }), 'base_url', 'managed identity')
	})

	it("should refuse a Bedrock control_plane_url off AWS's hosts, naming settings.control_plane_url", async () => {
		const r = await save(app, { ...BEDROCK, base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', settings: { region: 'us-east-1', control_plane_url: EVIL } })
		refused(r, 'settings.control_plane_url', 'settings.control_plane_url')
	})

	it("should take the cloud's own hosts: Bedrock's and its VPC endpoints', googleapis.com's (Private Service Connect too), Azure AI's", async () => {
		const made = [
			await save(app, { ...BEDROCK, base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', settings: { region: 'us-east-1', control_plane_url: 'https://bedrock.us-east-1.amazonaws.com' } }),
			await save(app, { ...BEDROCK, base_url: 'https://vpce-0a1b2c3d-4e5f.bedrock-runtime.us-east-1.vpce.amazonaws.com' }),
			await save(app, { ...BEDROCK, base_url: 'https://bedrock-runtime.cn-north-1.amazonaws.com.cn', settings: { region: 'cn-north-1' } }),
			await save(app, { ...VERTEX, base_url: 'https://us-east5-aiplatform.googleapis.com', api_key: 'ambient' }),
			await save(app, { ...VERTEX, base_url: 'https://aiplatform-vertex.p.googleapis.com', api_key: 'ambient' }),
			...(await Promise.all(['res.openai.azure.com', 'res.cognitiveservices.azure.com', 'res.services.ai.azure.com', 'res.openai.azure.us'].map((h) => save(app, { ...AZURE, base_url: `https://${h}` })))),
		]
		expect(made.map((r) => r.status)).toEqual(made.map(() => 201))
	})

	it('should refuse a PATCH moving an ambient channel off its cloud, and take one leaving its base_url as it is', async () => {
		const made = await save(app, { ...AZURE, base_url: 'https://res.openai.azure.com' })
		refused(await app.admin(`/api/channels/${made.body.id}`, { method: 'PATCH', body: { base_url: EVIL } }), 'base_url', 'managed identity')
		const ok = await app.admin(`/api/channels/${made.body.id}`, { method: 'PATCH', body: { base_url: 'https://res.openai.azure.com', models: ['gpt-4o', 'gpt-4.1'] } })
		expect(ok.status).toBe(200)
	})

	it('should take the hosts AMBIENT_ENDPOINTS lists, exact or *.suffix, over http too', async () => {
		const made = [
			await save(listed, { ...BEDROCK, base_url: 'https://bedrock-proxy.corp.example', settings: { region: 'us-east-1', control_plane_url: 'http://bedrock.private.example' } }),
			await save(listed, { ...VERTEX, base_url: 'http://127.0.0.1:9999', api_key: 'ambient' }),
			await save(listed, { ...AZURE, base_url: 'https://aoai.private.example' }),
		]
		expect(made.map((r) => r.status)).toEqual([201, 201, 201])
		refused(await save(listed, { ...AZURE, base_url: 'https://private.example.evil.example' }), 'base_url', 'managed identity')
	})
})

describe("a vertex external_account key whose subject token is the host's", () => {
	it('should refuse a metadata-sourced key whose token_url is not Google STS, naming api_key and the field', async () => {
		refused(await save(app, { ...VERTEX, api_key: workload({ token_url: `${EVIL}/v1/token` }) }), 'api_key', '`token_url`')
		// A name of the host's network (it resolves to nothing public) is the host's too.
		const named = workload({ token_url: `${EVIL}/v1/token`, credential_source: { url: 'http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/identity?audience=x', headers: { 'Metadata-Flavor': 'Google' } } })
		refused(await save(app, { ...VERTEX, api_key: named }), 'api_key', '`token_url`')
		refused(await save(app, { ...VERTEX, api_key: workload({ credential_source: { url: 'http://127.0.0.1:8080/token' }, token_url: `${EVIL}/v1/token` }) }), 'api_key', '`token_url`')
	})

	it('should refuse a foreign service_account_impersonation_url, and a foreign base_url the final token goes to', async () => {
		refused(await save(app, { ...VERTEX, api_key: workload({ service_account_impersonation_url: `${EVIL}/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken` }) }), 'api_key', '`service_account_impersonation_url`')
		refused(await save(app, { ...VERTEX, base_url: EVIL, api_key: workload() }), 'base_url', 'base_url')
		const source = JSON.parse(workload({ token_url: `${EVIL}/v1/token` }))
		refused(await save(app, { ...VERTEX, api_key: impersonated(source) }), 'api_key', '`source_credentials.token_url`')
		refused(await save(app, { ...VERTEX, api_key: impersonated(JSON.parse(workload()), `${EVIL}/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken`) }), 'api_key', '`service_account_impersonation_url`')
	})

	it('should refuse an AWS-sourced key whose token_url is not Google STS (it would receive a signed GetCallerIdentity of the host role)', async () => {
		const aws = workload({ subject_token_type: 'urn:ietf:params:aws:token-type:aws4_request', credential_source: AWS_SOURCE, token_url: `${EVIL}/v1/token` })
		refused(await save(app, { ...VERTEX, api_key: aws }), 'api_key', 'its AWS role')
	})

	it("should take Google's hosts, a public identity provider's URL with any token_url, and AMBIENT_ENDPOINTS's hosts", async () => {
		const made = [
			await save(app, { ...VERTEX, api_key: workload({ service_account_impersonation_url: 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken' }) }),
			await save(app, { ...VERTEX, api_key: workload({ subject_token_type: 'urn:ietf:params:aws:token-type:aws4_request', credential_source: AWS_SOURCE, token_url: 'https://sts-psc.p.googleapis.com/v1/token' }) }),
			await save(app, { ...VERTEX, api_key: impersonated(JSON.parse(workload())) }),
			// The administrator's own identity provider: nothing of the host's goes anywhere.
			await save(app, { ...VERTEX, base_url: 'https://vertex-proxy.example.com', api_key: workload({ credential_source: { url: 'https://203.0.113.7/oidc/token' }, token_url: `${EVIL}/v1/token` }) }),
			await save(listed, { ...VERTEX, base_url: 'http://127.0.0.1:9999', api_key: workload({ token_url: 'http://sts.private.example/v1/token' }) }),
		]
		expect(made.map((r) => r.status)).toEqual([201, 201, 201, 201, 201])
	})
})

describe('channels from GATEWAY_CONFIG', () => {
	it('should be the operator’s own: loaded and enabled whatever hosts they name', async () => {
		const list = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; source: string }>
		expect(list.filter((c) => c.name.startsWith('cfg-')).map(({ name, status, source }) => ({ name, status, source }))).toEqual([
			{ name: 'cfg-vx-wif', status: 'enabled', source: 'config' },
			{ name: 'cfg-br-proxy', status: 'enabled', source: 'config' },
		])
	})

	it('should stay editable where their endpoints are left as the operator set them', async () => {
		const list = (await app.admin('/api/channels')).body.data as Array<{ id: number; name: string }>
		const id = list.find((c) => c.name === 'cfg-br-proxy')!.id
		expect((await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { models: ['claude-br', 'claude-br-2'] } })).status).toBe(200)
		refused(await app.admin(`/api/channels/${id}`, { method: 'PATCH', body: { base_url: 'https://bedrock-proxy-2.example.com' } }), 'base_url', 'AWS role')
	})
})
