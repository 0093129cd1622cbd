/**
 * The host-identity rule after the save (ambient-endpoints.ts):
 * - a vertex external_account key given through the management API, its token sent off Google's hosts, was taken
 *   because its subject token URL's name resolved to a public address then. Its name may resolve to the metadata
 *   service or loopback later (DNS rebinding): the subject token fetch then connects to nothing but a public address,
 *   and refuses as the channel's credentials (`upstream_auth`, the channel disabled saying why), never asking the host.
 *   The same key from GATEWAY_CONFIG is the operator's, and fetches its token from wherever the name resolves.
 *   `localhost` stands for such a name: Bun.dns.lookup answers a public address for it while the key is saved.
 * - a channel an older version saved through the management API (inserted here as it would have stored it) whose
 *   host-identity credentials go off the cloud's hosts is disabled at start and at a reload, saying the rule and
 *   AMBIENT_ENDPOINTS, with one warning per channel; GATEWAY_CONFIG's are left as they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import OpenAI from 'openai'
import { createApp } from '../../../src/app'
import { loadEnv } from '../../../src/config/env'
import { channels } from '../../../src/db/schema'
import { createLogger } from '../../../src/lib/log'
import { createServices, type Services } from '../../../src/services'
import { ADMIN_KEY, adminCaller, startTestApp, type TestApp } from '../../helpers/app'
import { createTestDb, type TestDb } from '../../helpers/db'
import { startVertexMock, type VertexMock } from '../../mocks'
import { externalAccountKey } from '../../mocks/vertex/sts'

const PROJECT = 'proj-rebind'
const REGION = 'us-east5'
/** In the subject token URL's query, where a provider's parameters (a credential, at times) go: never said. */
const QUERY_SECRET = 'sig-0f9e8d7c6b5a'

const lookup = Bun.dns.lookup
/** While set, `localhost` resolves to a public address (TEST-NET-3), as a name its owner may point anywhere. */
let publicLocalhost = false

let app: TestApp
let v: VertexMock
let key: string
const logs: string[] = []

beforeAll(async () => {
	Bun.dns.lookup = (async (host: string, opts: never) =>
		publicLocalhost && host === 'localhost' ? [{ address: '203.0.113.7', family: 4, ttl: 0 }] : lookup(host, opts)) as typeof Bun.dns.lookup
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: 'AQ.not-used' })
	const source = { url: `http://localhost:${new URL(v.url).port}/subject-token?${QUERY_SECRET}`, headers: { Metadata: 'true' }, format: { type: 'json', subject_token_field_name: 'access_token' } }
	// token_url is the mock's (127.0.0.1): not Google's, so the host's identity may not go there from a key given through the API.
	key = externalAccountKey(v.url, v.workload, source, { quotaProject: PROJECT })
	const channel = (name: string) => ({ name, type: 'vertex' as const, base_url: v.url, api_key: key, models: [name], model_map: { [name]: 'gemini-2.5-flash' }, settings: { region: REGION } })
	app = await startTestApp({ config: { channels: [channel('cfg-wif')], models: ['cfg-wif', 'api-wif'].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 4 })) } })
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
}, 120_000)

afterAll(async () => {
	Bun.dns.lookup = lookup
	await app?.close()
	await v?.stop()
})

async function ask(model: string) {
	const a = await app.account(10)
	const openai = new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
	return openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e)
}

const subjectFetches = (since: number) => v.tokenRequests.slice(since).filter((r) => r.path === '/subject-token')

describe('a subject token URL whose name resolves elsewhere after the save', () => {
	it('should not be fetched from a private address for a key given through the management API: the channel is disabled saying why', async () => {
		publicLocalhost = true
		const made = await app.admin('/api/channels', { body: { name: 'api-wif', type: 'vertex', base_url: v.url, api_key: key, models: ['api-wif'], model_map: { 'api-wif': 'gemini-2.5-flash' }, settings: { region: REGION } } })
		publicLocalhost = false
		expect(made.status).toBe(201)
		const since = v.tokenRequests.length
		const err = (await ask('api-wif')) as InstanceType<typeof OpenAI.APIError>
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(err.status).toBe(502)
		// Nothing was asked of the host's address, so nothing went to the token endpoint either.
		expect(subjectFetches(since)).toEqual([])
		expect(v.tokenRequests.slice(since).filter((r) => r.path === '/v1/token')).toEqual([])
		const ch = (await app.admin(`/api/channels/${made.body.id}`)).body
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain('private')
		expect(ch.disabled_reason).toContain('management API')
		expect(ch.disabled_reason).not.toContain(QUERY_SECRET)
		expect(logs.join('\n')).not.toContain(QUERY_SECRET)
	})

	it('should be fetched wherever the name resolves for the same key from GATEWAY_CONFIG', async () => {
		const since = v.tokenRequests.length
		const r = (await ask('cfg-wif')) as OpenAI.ChatCompletion
		expect(r.choices?.[0]?.message.content).toBe('Hello! You said: hello')
		expect(subjectFetches(since)).toHaveLength(1)
		expect(v.tokenRequests.slice(since).find((t) => t.path === '/v1/token')!.form!.subject_token).toBe(v.workload.subjectToken)
	})
})

describe('a channel saved through the management API before the rule', () => {
	const SECRET_KEY = 'test-secret-key-0123456789'
	const EVIL = 'https://collector.evil.example'
	const AWS_SOURCE = {
		environment_id: 'aws1',
		region_url: 'http://169.254.169.254/latest/meta-data/placement/availability-zone',
		url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials',
		regional_cred_verification_url: 'https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15',
	}
	const awsWorkload = JSON.stringify({
		type: 'external_account',
		audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/p/providers/aws',
		subject_token_type: 'urn:ietf:params:aws:token-type:aws4_request',
		token_url: `${EVIL}/v1/token`,
		credential_source: AWS_SOURCE,
		quota_project_id: 'proj-wif',
	})
	const old = [
		{ name: 'old-bedrock', type: 'bedrock', baseUrl: EVIL, key: 'ambient', settings: { region: 'us-east-1' } },
		{ name: 'old-vertex-wif', type: 'vertex', baseUrl: 'https://aiplatform.googleapis.com', key: awsWorkload, settings: {} },
		{ name: 'old-azure-ok', type: 'azure', baseUrl: 'https://res.openai.azure.com', key: 'ambient', settings: {} },
		{ name: 'old-openai', type: 'openai', baseUrl: EVIL, key: 'sk-old-0123456789', settings: {} },
	]
	const config = { channels: [{ name: 'cfg-bedrock', type: 'bedrock', base_url: EVIL, api_key: 'ambient', models: ['m'], settings: { region: 'us-east-1' } }], models: [] }
	let t: TestDb
	let svc: Services
	let server: ReturnType<ReturnType<typeof createApp>['listen']>
	let admin: ReturnType<typeof adminCaller>
	const warnings: string[] = []

	const insert = async (s: Services, c: (typeof old)[number]) =>
		s.db.orm.insert(channels).values({ name: c.name, type: c.type, baseUrl: c.baseUrl, apiKeyEnc: await s.cipher.encrypt(c.key), models: ['m'], settings: c.settings, source: 'api' })
	const list = async () => (await admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null; source: string; health: { last_error: string | null } }>
	const warned = (name: string) => warnings.filter((l) => l.includes('"warn"') && l.includes(`"${name}"`))

	beforeAll(async () => {
		t = await createTestDb()
		// As an older version stored them: through the API, no check of where the host's identity goes.
		const first = await createServices(loadEnv({ ADMIN_KEY, SECRET_KEY, LOG_LEVEL: 'error' }), { db: t.db, config: { channels: [], models: [] }, log: createLogger('error', () => {}) })
		for (const c of old) await insert(first, c)
		await first.close()
		svc = await createServices(loadEnv({ ADMIN_KEY, SECRET_KEY, LOG_LEVEL: 'warn' }), { db: t.db, config: config as never, log: createLogger('warn', (l) => warnings.push(l)) })
		server = createApp(svc).listen({ port: 0, hostname: '127.0.0.1' })
		admin = adminCaller(`http://127.0.0.1:${server.server!.port}`)
	}, 120_000)
	afterAll(async () => {
		await server?.stop(true)
		await svc?.close()
		await t?.drop()
	})

	it('should be disabled at start, saying the rule and AMBIENT_ENDPOINTS, with one warning each, shown in /api/channels', async () => {
		const byName = new Map((await list()).map((c) => [c.name, c]))
		for (const name of ['old-bedrock', 'old-vertex-wif']) {
			const c = byName.get(name)!
			expect([name, c.status]).toEqual([name, 'disabled'])
			expect(c.disabled_reason).toContain("gateway host's")
			expect(c.disabled_reason).toContain('AMBIENT_ENDPOINTS')
			expect(c.disabled_reason).toContain('management API')
			// The health view keeps a failure's first 300 characters: the rule and AMBIENT_ENDPOINTS come first.
			expect(c.disabled_reason!.startsWith(c.health.last_error!)).toBe(true)
			expect(c.health.last_error).toContain('AMBIENT_ENDPOINTS')
			expect(warned(name)).toHaveLength(1)
			expect(c.disabled_reason).not.toContain('evil.example')
		}
		expect(byName.get('old-bedrock')!.disabled_reason).toContain('base_url')
		expect(byName.get('old-vertex-wif')!.disabled_reason).toContain('`token_url`')
		// Nothing of the host's goes off its cloud, or nothing of the host's at all; and the operator's own.
		expect(['old-azure-ok', 'old-openai', 'cfg-bedrock'].map((n) => [n, byName.get(n)!.status])).toEqual([
			['old-azure-ok', 'enabled'],
			['old-openai', 'enabled'],
			['cfg-bedrock', 'enabled'],
		])
		expect(svc.catalog.channels().map((c) => c.name).sort()).toEqual(['cfg-bedrock', 'old-azure-ok', 'old-openai'])
		// Nor is it tried by a Test call.
		const tried = await admin(`/api/channels/${(byName.get('old-bedrock') as unknown as { id: number }).id}/test`, { method: 'POST', body: { model: 'm' } })
		expect({ status: tried.status, param: tried.body.error?.param }).toEqual({ status: 400, param: 'base_url' })
		expect(tried.body.error.message).toContain('AMBIENT_ENDPOINTS')
		// Reloads do not say it again.
		await svc.catalog.reload()
		expect(warned('old-bedrock')).toHaveLength(1)
	})

	it('should be disabled at a reload too, and again once enabled unchanged', async () => {
		await insert(svc, { name: 'old-azure', type: 'azure', baseUrl: `${EVIL}/openai`, key: 'ambient', settings: {} })
		await svc.catalog.reload()
		const c = (await list()).find((x) => x.name === 'old-azure')!
		expect(c.status).toBe('disabled')
		expect(c.disabled_reason).toContain("managed identity's tokens")
		expect(warned('old-azure')).toHaveLength(1)
		const id = (await list()).find((x) => x.name === 'old-bedrock')!
		expect((await admin(`/api/channels/${(id as unknown as { id: number }).id}/enable`, { method: 'POST' })).status).toBe(200)
		expect((await list()).find((x) => x.name === 'old-bedrock')!.status).toBe('disabled')
		expect(svc.catalog.channels().map((x) => x.name)).not.toContain('old-bedrock')
		expect(warned('old-bedrock')).toHaveLength(2)
	})
})
