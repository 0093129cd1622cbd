/**
 * Channels keyed `ambient`: the credentials of the cloud the gateway runs on, through the official `openai` client,
 * against mock metadata services written from the vendors' documented shapes: AWS's IMDSv2 and container credentials
 * endpoint (test/mocks/bedrock/metadata.ts) signing Bedrock calls, Google's metadata server (test/mocks/vertex/metadata.ts)
 * for Vertex AI, Azure's managed identity endpoints (test/mocks/azure/managed-identity.ts) for Azure OpenAI. Each is
 * found through the variable the cloud's own SDKs read (`AWS_EC2_METADATA_SERVICE_ENDPOINT`,
 * `AWS_CONTAINER_CREDENTIALS_FULL_URI`, `GCE_METADATA_HOST`, `AZURE_POD_IDENTITY_AUTHORITY_HOST`, `IDENTITY_ENDPOINT`).
 * Checked: chat on each type, one fetch for concurrent calls, reuse, renewal before expiry and after a 401, and a
 * missing (or silent) endpoint as a failure of the attempt: failover, the channel cooling down with "no ambient
 * credentials: …" in its health (not disabled: on the cloud the next answer may come); no role or an unknown identity
 * as the channel's failure: the channel disabled saying why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import OpenAI from 'openai'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startAnthropicMock, startBedrockMock, startVertexMock, type BedrockMock, type VendorMock, type VertexMock } from '../../mocks'
import { startAzureMock } from '../../mocks/azure'
import { type ManagedIdentityMock, startManagedIdentityMock } from '../../mocks/azure/managed-identity'
import { type AwsMetadataMock, ROLE, startAwsMetadataMock } from '../../mocks/bedrock/metadata'
import { type GoogleMetadataMock, startGoogleMetadataMock } from '../../mocks/vertex/metadata'
import { chat } from './clients'
import { SETUP_MS } from './harness'

const REGION = 'us-west-2'
const PROFILE = 'us.anthropic.claude-sonnet-4-6-v1:0'
const NOVA = 'us.amazon.nova-pro-v1:0'
const PROJECT = 'proj-ambient'
const VX_REGION = 'us-east5'
const CLAUDE_ID = 'claude-sonnet-4-5@20250929'
const GEMINI_ID = 'gemini-2.5-flash'
const CONTAINER_TOKEN = 'container-auth-token-0123456789'
const USER_ASSIGNED = '0d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a'
/** A user-assigned identity the resource does not have. */
const UNKNOWN_IDENTITY = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d'
const DEPLOYMENTS = { 'prod-4o': 'gpt-4o' }

/** The variables the gateway reads: saved, cleared (the machine's own must not leak in), restored after. */
const VARS = [
	'AWS_EC2_METADATA_SERVICE_ENDPOINT',
	'AWS_EC2_METADATA_DISABLED',
	'AWS_CONTAINER_CREDENTIALS_FULL_URI',
	'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
	'AWS_CONTAINER_AUTHORIZATION_TOKEN',
	'AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE',
	'GCE_METADATA_HOST',
	'AZURE_POD_IDENTITY_AUTHORITY_HOST',
	'IDENTITY_ENDPOINT',
	'IDENTITY_HEADER',
]
const saved = Object.fromEntries(VARS.map((v) => [v, process.env[v]]))

let app: TestApp
let aws: AwsMetadataMock
let gce: GoogleMetadataMock
let mi: ManagedIdentityMock
let br: BedrockMock
let vx: VertexMock
let az: VendorMock
let azStandby: VendorMock
let anthropic: VendorMock
/** A port nothing listens on: a metadata service that is not there (not on that cloud). */
let deadPort: number
/** A server that accepts and never answers: a link-local address that swallows packets. */
let silent: ReturnType<typeof Bun.serve>
const tokenFile = `/tmp/h-ambient-container-token-${process.pid}`

beforeAll(async () => {
	for (const v of VARS) delete process.env[v]
	aws = startAwsMetadataMock(CONTAINER_TOKEN)
	gce = startGoogleMetadataMock(PROJECT)
	mi = startManagedIdentityMock([USER_ASSIGNED])
	br = await startBedrockMock({ apiKey: 'ABSK-not-used', iam: { accessKeyId: 'AKIANOTUSED', secretAccessKey: 'not-used' }, region: REGION, models: [PROFILE, NOVA], roleKeys: aws })
	vx = await startVertexMock({ project: PROJECT, region: VX_REGION, expressKey: 'AQ.not-used', metadata: gce })
	az = startAzureMock({ apiKey: 'az-disabled-key', deployments: DEPLOYMENTS, entra: mi, keyAuth: false })
	azStandby = startAzureMock({ apiKey: 'az-standby-key', deployments: DEPLOYMENTS })
	anthropic = await startAnthropicMock({ apiKey: 'up-anthropic' })
	const dead = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
	deadPort = dead.port!
	await dead.stop(true)
	silent = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: () => new Promise<Response>(() => {}) })
	process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = aws.url
	process.env.GCE_METADATA_HOST = gce.host
	process.env.AZURE_POD_IDENTITY_AUTHORITY_HOST = mi.url

	const bedrock = (name: string, model: string, upstream = PROFILE, extra: Record<string, unknown> = {}) => ({
		name,
		type: 'bedrock' as const,
		base_url: br.url,
		api_key: 'ambient',
		models: [model],
		model_map: { [model]: upstream },
		settings: { region: REGION },
		...extra,
	})
	const vertex = (name: string, model: string, upstream: string, settings: Record<string, unknown> = {}) => ({
		name,
		type: 'vertex' as const,
		base_url: vx.url,
		api_key: 'ambient',
		models: [model],
		model_map: { [model]: upstream },
		settings: { region: VX_REGION, ...settings },
	})
	const azure = (name: string, model: string, settings: Record<string, unknown> = {}) => ({ name, type: 'azure' as const, base_url: az.url, api_key: 'ambient', models: [model], model_map: { [model]: 'prod-4o' }, settings })
	const standby = (model: string) => ({ name: `standby-${model}`, type: 'anthropic' as const, base_url: anthropic.url, api_key: 'up-anthropic', models: [model], model_map: { [model]: 'claude-sonnet-4-6' }, priority: 1 })
	const channels = [
		bedrock('br-imds', 'br-claude'),
		bedrock('br-nova', 'br-nova', NOVA),
		bedrock('br-many', 'br-many'),
		bedrock('br-short', 'br-short'),
		bedrock('br-expired', 'br-expired'),
		bedrock('br-container', 'br-container'),
		bedrock('br-container-file', 'br-container-file'),
		bedrock('br-missing', 'br-missing'),
		standby('br-missing'),
		bedrock('br-silent', 'br-silent'),
		standby('br-silent'),
		bedrock('br-norole', 'br-norole'),
		standby('br-norole'),
		vertex('vx-claude', 'vx-claude', CLAUDE_ID),
		vertex('vx-gemini', 'vx-gemini', GEMINI_ID, { project: PROJECT }),
		vertex('vx-many', 'vx-many', GEMINI_ID),
		vertex('vx-short', 'vx-short', CLAUDE_ID),
		vertex('vx-revoked', 'vx-revoked', CLAUDE_ID),
		vertex('vx-missing', 'vx-missing', CLAUDE_ID, { project: PROJECT }),
		standby('vx-missing'),
		azure('az-imds', 'az-imds'),
		azure('az-user', 'az-user', { client_id: USER_ASSIGNED }),
		azure('az-appservice', 'az-appservice'),
		azure('az-many', 'az-many'),
		azure('az-short', 'az-short'),
		azure('az-revoked', 'az-revoked'),
		azure('az-missing', 'az-missing'),
		azure('az-unknown', 'az-unknown', { client_id: UNKNOWN_IDENTITY }),
		{ name: 'az-standby', type: 'azure' as const, base_url: azStandby.url, api_key: 'az-standby-key', models: ['az-missing'], model_map: { 'az-missing': 'prod-4o' }, priority: 1 },
	]
	const models = [...new Set(channels.flatMap((c) => c.models))].map((name) => ({ name, input_per_mtok: 1, output_per_mtok: 4 }))
	app = await startTestApp({ config: { channels, models } })
}, SETUP_MS)

afterAll(async () => {
	await app?.close()
	for (const m of [aws, gce, mi, br, vx, az, azStandby, anthropic]) await m?.stop()
	await silent?.stop(true)
	rmSync(tokenFile, { force: true })
	for (const v of VARS) {
		if (saved[v] === undefined) delete process.env[v]
		else process.env[v] = saved[v]
	}
})

async function client() {
	const a = await app.account(10)
	return new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 })
}

const say = (c: OpenAI, model: string, text: string, stream = false) => chat(c, { model, messages: [{ role: 'user', content: text }] }, stream).then((a) => a.text)

const lastOf = (m: { requests: Array<{ headers: Record<string, string>; path: string }> }) => m.requests[m.requests.length - 1]!
const bearerOf = (r: { headers: Record<string, string> }) => r.headers.authorization?.replace(/^Bearer /, '')
const akidOf = (r: { headers: Record<string, string> }) => /Credential=([^/]+)\//.exec(r.headers.authorization ?? '')?.[1]

/** A channel's health after a failed attempt: still enabled, its last error. */
async function cooling(name: string): Promise<{ status: string; lastError: string | null }> {
	const channels = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; health: { last_error: string | null } }>
	const ch = channels.find((c) => c.name === name)!
	return { status: ch.status, lastError: ch.health.last_error }
}

async function disabledReason(name: string): Promise<string | null> {
	const channels = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null }>
	const ch = channels.find((c) => c.name === name)!
	return ch.status === 'disabled' ? ch.disabled_reason : null
}

/** Sets `vars` for the length of `fn`, then puts back what was there. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
	const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
	const set = (vs: Record<string, string | undefined>) => {
		for (const [k, v] of Object.entries(vs)) {
			if (v === undefined) delete process.env[k]
			else process.env[k] = v
		}
	}
	set(vars)
	try {
		return await fn()
	} finally {
		set(before)
	}
}

describe('bedrock channel keyed ambient (AWS)', () => {
	for (const stream of [false, true])
		it(`should sign Claude with the instance role's keys from IMDSv2 (${stream ? 'stream' : 'non-stream'})`, async () => {
			const c = await client()
			const before = aws.requests.length
			expect(await say(c, 'br-claude', `hello role ${stream}`, stream)).toBe(`Hello! You said: hello role ${stream}`)
			const r = lastOf(br)
			expect(r.path).toBe(`/model/us.anthropic.claude-sonnet-4-6-v1%3A0/${stream ? 'invoke-with-response-stream' : 'invoke'}`)
			const issued = aws.keysFor(akidOf(r)!)
			expect(issued?.expired).toBe(false)
			expect(r.headers['x-amz-security-token']).toBe(issued!.keys.sessionToken!)
			const asked = aws.requests.slice(before)
			if (!stream) {
				// The first call fetched: a session token (PUT with its TTL), the role's name, its keys, each with the session.
				expect(asked.map((a) => `${a.method} ${a.path}`)).toEqual([
					'PUT /latest/api/token',
					'GET /latest/meta-data/iam/security-credentials/',
					`GET /latest/meta-data/iam/security-credentials/${ROLE}`,
				])
				expect(asked[0]!.headers['x-aws-ec2-metadata-token-ttl-seconds']).toBe('21600')
				expect(asked[1]!.headers['x-aws-ec2-metadata-token']).toStartWith('AQAEAmockImdsSession')
				expect(asked[2]!.headers['x-aws-ec2-metadata-token']).toBe(asked[1]!.headers['x-aws-ec2-metadata-token']!)
			} else expect(asked).toEqual([])
		})

	it('should sign Converse (Nova) the same way', async () => {
		const c = await client()
		expect(await say(c, 'br-nova', 'hello nova', true)).toContain('hello nova')
		expect(lastOf(br).path).toBe('/model/us.amazon.nova-pro-v1%3A0/converse-stream')
		expect(aws.keysFor(akidOf(lastOf(br))!)?.expired).toBe(false)
	})

	it('should fetch the keys once for concurrent calls, and reuse them', async () => {
		const c = await client()
		const before = aws.fetches
		aws.delayMs = 150
		try {
			const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => say(c, 'br-many', `call ${i}`, i % 2 === 0)))
			expect(answers).toEqual(Array.from({ length: 5 }, (_, i) => `Hello! You said: call ${i}`))
		} finally {
			aws.delayMs = 0
		}
		expect(aws.fetches - before).toBe(1)
		await say(c, 'br-many', 'again')
		expect(aws.fetches - before).toBe(1)
	})

	it('should fetch new keys once the cached ones are about to expire', async () => {
		const c = await client()
		// 302 s, `Expiration` to the second: fresh for one to two seconds before the gateway's five-minute margin.
		aws.ttl = 302
		try {
			const before = aws.fetches
			await say(c, 'br-short', 'first')
			const first = akidOf(lastOf(br))
			await say(c, 'br-short', 'second')
			expect(aws.fetches - before).toBe(1)
			await Bun.sleep(2_100)
			await say(c, 'br-short', 'third')
			expect(aws.fetches - before).toBe(2)
			expect(akidOf(lastOf(br))).not.toBe(first!)
		} finally {
			aws.ttl = 3600
		}
	})

	it('should fetch new keys and sign again once when Bedrock says the cached ones expired (ExpiredTokenException)', async () => {
		const c = await client()
		aws.ttl = 400
		try {
			await say(c, 'br-expired', 'warm up')
			const stale = akidOf(lastOf(br))!
			const calls = br.requests.length
			const fetches = aws.fetches
			// Keys cut short where they were issued: Bedrock refuses them while the cache still takes them for fresh.
			aws.expire(stale)
			expect(await say(c, 'br-expired', 'after expiry')).toBe('Hello! You said: after expiry')
			const [refused, retried] = br.requests.slice(calls)
			expect(akidOf(refused!)).toBe(stale)
			expect(akidOf(retried!)).not.toBe(stale)
			expect(aws.fetches).toBe(fetches + 1)
			expect(br.requests.length).toBe(calls + 2)
		} finally {
			aws.ttl = 3600
		}
	})

	it('should take container credentials from AWS_CONTAINER_CREDENTIALS_FULL_URI with AWS_CONTAINER_AUTHORIZATION_TOKEN, before IMDS', async () => {
		const c = await client()
		const before = aws.requests.length
		await withEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: aws.containerUri, AWS_CONTAINER_AUTHORIZATION_TOKEN: CONTAINER_TOKEN }, async () => {
			expect(await say(c, 'br-container', 'from a task')).toBe('Hello! You said: from a task')
		})
		expect(aws.requests.slice(before)).toEqual([{ method: 'GET', path: '/v2/credentials/5f4e3d2c-task', headers: { authorization: CONTAINER_TOKEN } }])
		expect(aws.keysFor(akidOf(lastOf(br))!)?.expired).toBe(false)
	})

	it('should read the container authorization token from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, which wins over the variable', async () => {
		const c = await client()
		writeFileSync(tokenFile, `${CONTAINER_TOKEN}\n`)
		const before = aws.requests.length
		await withEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: aws.containerUri, AWS_CONTAINER_AUTHORIZATION_TOKEN: 'stale-token', AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: tokenFile }, async () => {
			expect(await say(c, 'br-container-file', 'from eks')).toBe('Hello! You said: from eks')
		})
		expect(aws.requests.slice(before).map((r) => r.headers.authorization)).toEqual([CONTAINER_TOKEN])
	})

	it('should fail over when there is no metadata service, the channel cooling down (not disabled) saying there are no ambient credentials', async () => {
		const c = await client()
		await withEnv({ AWS_EC2_METADATA_SERVICE_ENDPOINT: `http://127.0.0.1:${deadPort}` }, async () => {
			expect(await say(c, 'br-missing', 'not on aws')).toBe('Hello! You said: not on aws')
		})
		const h = await cooling('br-missing')
		expect(h.status).toBe('enabled')
		expect(h.lastError).toContain('no ambient credentials: aws instance metadata service')
		expect(h.lastError).toContain('unreachable')
	})

	it('should give up on a metadata service that does not answer within two seconds, and fail over', async () => {
		const c = await client()
		const t0 = performance.now()
		await withEnv({ AWS_EC2_METADATA_SERVICE_ENDPOINT: `http://127.0.0.1:${silent.port}` }, async () => {
			expect(await say(c, 'br-silent', 'silent imds')).toBe('Hello! You said: silent imds')
		})
		expect(performance.now() - t0).toBeLessThan(4_000)
		expect(await cooling('br-silent')).toEqual({ status: 'enabled', lastError: expect.stringContaining('no answer within') })
	})

	it('should say an instance without a role as the channel failure, and fail over', async () => {
		const c = await client()
		aws.noRole = true
		try {
			expect(await say(c, 'br-norole', 'no role')).toBe('Hello! You said: no role')
		} finally {
			aws.noRole = false
		}
		expect(await disabledReason('br-norole')).toContain('no ambient credentials: aws instance metadata service: no IAM role is attached')
	})
})

describe('vertex channel keyed ambient (Google)', () => {
	for (const stream of [false, true])
		it(`should call Claude with the metadata server's token, in the project it names (${stream ? 'stream' : 'non-stream'})`, async () => {
			const c = await client()
			expect(await say(c, 'vx-claude', `hello gce ${stream}`, stream)).toBe(`Hello! You said: hello gce ${stream}`)
			const r = lastOf(vx)
			expect(r.path).toBe(`/v1/projects/${PROJECT}/locations/${VX_REGION}/publishers/anthropic/models/${CLAUDE_ID}:${stream ? 'streamRawPredict' : 'rawPredict'}`)
			expect(gce.accepts(bearerOf(r)!)).toBe(true)
			expect(gce.requests.every((q) => q.flavor === 'Google')).toBe(true)
		})

	it("should call Gemini in settings.project's project, without asking the metadata server for one", async () => {
		const c = await client()
		const asked = gce.requests.length
		expect(await say(c, 'vx-gemini', 'hello gemini')).toContain('hello gemini')
		expect(lastOf(vx).path).toBe(`/v1/projects/${PROJECT}/locations/${VX_REGION}/publishers/google/models/${GEMINI_ID}:generateContent`)
		expect(gce.requests.slice(asked).map((q) => q.path)).toEqual(['/computeMetadata/v1/instance/service-accounts/default/token'])
	})

	it('should fetch one token for concurrent calls, and reuse it', async () => {
		const c = await client()
		const before = gce.tokenFetches
		gce.delayMs = 150
		try {
			const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => say(c, 'vx-many', `call ${i}`, i % 2 === 0)))
			for (const [i, a] of answers.entries()) expect(a).toContain(`call ${i}`)
		} finally {
			gce.delayMs = 0
		}
		expect(gce.tokenFetches - before).toBe(1)
		await say(c, 'vx-many', 'again')
		expect(gce.tokenFetches - before).toBe(1)
	})

	it('should fetch a new token once the cached one is about to expire', async () => {
		const c = await client()
		gce.ttl = 301
		try {
			const before = gce.tokenFetches
			await say(c, 'vx-short', 'first')
			await say(c, 'vx-short', 'second')
			expect(gce.tokenFetches - before).toBe(1)
			await Bun.sleep(1_100)
			await say(c, 'vx-short', 'third')
			expect(gce.tokenFetches - before).toBe(2)
		} finally {
			gce.ttl = 3599
		}
	})

	it('should fetch a new token and call again once when Vertex refuses the cached one with 401', async () => {
		const c = await client()
		await say(c, 'vx-revoked', 'warm up')
		const stale = bearerOf(lastOf(vx))!
		const calls = vx.requests.length
		gce.revokeTokens()
		expect(await say(c, 'vx-revoked', 'after revocation', true)).toBe('Hello! You said: after revocation')
		const [refused, retried] = vx.requests.slice(calls)
		expect(bearerOf(refused!)).toBe(stale)
		expect(gce.accepts(bearerOf(retried!)!)).toBe(true)
	})

	it('should fail over when there is no metadata server, the channel cooling down (not disabled) saying why', async () => {
		const c = await client()
		await withEnv({ GCE_METADATA_HOST: `127.0.0.1:${deadPort}` }, async () => {
			expect(await say(c, 'vx-missing', 'not on gcp')).toBe('Hello! You said: not on gcp')
		})
		expect(await cooling('vx-missing')).toEqual({ status: 'enabled', lastError: expect.stringContaining('no ambient credentials: google metadata server') })
	})
})

describe('azure channel keyed ambient (managed identity)', () => {
	for (const stream of [false, true])
		it(`should send the system-assigned identity's token from IMDS as a Bearer (${stream ? 'stream' : 'non-stream'})`, async () => {
			const c = await client()
			const asked = mi.requests.length
			expect(await say(c, 'az-imds', `hello mi ${stream}`, stream)).toBe(`Hello! You said: hello mi ${stream}`)
			const r = lastOf(az)
			expect(r.headers['api-key']).toBeUndefined()
			expect(mi.accepts(bearerOf(r)!)).toBe(true)
			expect(mi.clientOf(bearerOf(r)!)).toBe(mi.systemClientId)
			for (const q of mi.requests.slice(asked)) {
				expect(q.path).toBe('/metadata/identity/oauth2/token')
				expect(q.query).toEqual({ 'api-version': '2018-02-01', resource: 'https://cognitiveservices.azure.com' })
				expect(q.headers.metadata).toBe('true')
			}
		})

	it("should ask for the user-assigned identity settings.client_id names", async () => {
		const c = await client()
		expect(await say(c, 'az-user', 'hello user identity')).toBe('Hello! You said: hello user identity')
		expect(mi.clientOf(bearerOf(lastOf(az))!)).toBe(USER_ASSIGNED)
		expect(mi.requests[mi.requests.length - 1]!.query.client_id).toBe(USER_ASSIGNED)
	})

	it("should use App Service's IDENTITY_ENDPOINT with IDENTITY_HEADER when they are set", async () => {
		const c = await client()
		const asked = mi.requests.length
		await withEnv({ IDENTITY_ENDPOINT: mi.identityEndpoint, IDENTITY_HEADER: mi.identityHeader }, async () => {
			expect(await say(c, 'az-appservice', 'hello app service')).toBe('Hello! You said: hello app service')
		})
		expect(mi.requests.slice(asked)).toEqual([
			{ path: '/msi/token', query: { 'api-version': '2019-08-01', resource: 'https://cognitiveservices.azure.com' }, headers: { 'x-identity-header': mi.identityHeader } },
		])
		expect(mi.accepts(bearerOf(lastOf(az))!)).toBe(true)
	})

	it('should fetch one token for concurrent calls, and reuse it', async () => {
		const c = await client()
		const before = mi.tokenFetches
		mi.delayMs = 150
		try {
			await Promise.all(Array.from({ length: 5 }, (_, i) => say(c, 'az-many', `call ${i}`, i % 2 === 0)))
		} finally {
			mi.delayMs = 0
		}
		expect(mi.tokenFetches - before).toBe(1)
		await say(c, 'az-many', 'again')
		expect(mi.tokenFetches - before).toBe(1)
	})

	it('should fetch a new token once the cached one is about to expire', async () => {
		const c = await client()
		mi.ttl = 301
		try {
			const before = mi.tokenFetches
			await say(c, 'az-short', 'first')
			await say(c, 'az-short', 'second')
			expect(mi.tokenFetches - before).toBe(1)
			await Bun.sleep(1_100)
			await say(c, 'az-short', 'third')
			expect(mi.tokenFetches - before).toBe(2)
		} finally {
			mi.ttl = 86399
		}
	})

	it('should fetch a new token and call again once when Azure refuses the cached one with 401', async () => {
		const c = await client()
		await say(c, 'az-revoked', 'warm up')
		const stale = bearerOf(lastOf(az))!
		const calls = az.requests.length
		mi.revokeTokens()
		expect(await say(c, 'az-revoked', 'after revocation')).toBe('Hello! You said: after revocation')
		const [refused, retried] = az.requests.slice(calls)
		expect(bearerOf(refused!)).toBe(stale)
		expect(mi.accepts(bearerOf(retried!)!)).toBe(true)
	})

	it('should fail over when there is no managed identity endpoint, the channel cooling down (not disabled) saying why', async () => {
		const c = await client()
		await withEnv({ AZURE_POD_IDENTITY_AUTHORITY_HOST: `http://127.0.0.1:${deadPort}` }, async () => {
			expect(await say(c, 'az-missing', 'not on azure')).toBe('Hello! You said: not on azure')
		})
		expect(lastOf(azStandby).headers['api-key']).toBe('az-standby-key')
		expect(await cooling('az-missing')).toEqual({ status: 'enabled', lastError: expect.stringContaining('no ambient credentials: azure instance metadata service') })
	})

	it("should answer 502 upstream_auth in OpenAI's shape when an identity is not found and no channel is left, never a 500", async () => {
		const c = await client()
		const res = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${c.apiKey}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'az-unknown', messages: [{ role: 'user', content: 'hi' }] }),
		})
		expect(res.status).toBe(502)
		expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_auth')
		expect(await disabledReason('az-unknown')).toContain(`no ambient credentials: azure instance metadata service refused a token for the identity ${UNKNOWN_IDENTITY}: invalid_request: Identity not found`)
	})
})
