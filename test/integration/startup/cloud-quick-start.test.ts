/**
 * The cloud vendors' quick start (src/config/quick-start-cloud.ts), as an operator runs it: the server started as a
 * process with only the variables Amazon's, Microsoft's and Google's SDKs read, the vendors' endpoints pointed at the
 * mock vendors by those SDKs' own endpoint variables (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AZURE_OPENAI_ENDPOINT,
 * AZURE_AUTHORITY_HOST, GOOGLE_VERTEX_BASE_URL), and called through the official `openai` client. Variables that
 * cannot be used stop the start naming each, never quoting a secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { mkdirSync, rmSync } from 'node:fs'
import OpenAI from 'openai'
import { startProcess, startUntilExit } from '../../helpers/start-process'
import { startBedrockMock, startVertexMock, type BedrockMock, type VendorMock, type VertexMock } from '../../mocks'
import { startAzureMock } from '../../mocks/azure'
import { type EntraMock, startEntraMock } from '../../mocks/azure/entra'
import { testCertificate, type TestCertificate } from '../../helpers/x509'
import { externalAccountKey } from '../../mocks/vertex/sts'

const root = new URL('../../../', import.meta.url).pathname
const dir = `${root}test-output/cloud-quick-start-${process.pid}`
const FIXTURES = `${root}test/fixtures/azure-entra`
const PFX_PASSWORD = 'test-only-password'
const ADMIN_KEY = 'cloud-qs-admin-key-0123'
const BEDROCK_TOKEN = 'ABSKQmVkcm9ja0FQSUtleS1tb2NrLTAxMjM0NTY3ODk='
const IAM = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzEMockSessionToken0123' }
const CLAUDE = 'us.anthropic.claude-sonnet-4-6-v1:0'
const NOVA = 'us.amazon.nova-pro-v1:0'
const AZURE_KEY = 'az-quick-start-key-0123456789abcdef'
const SP = { tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', clientId: '6a1f2c9e-0b7d-4c1e-9a55-3e8f0d2b1c44', clientSecret: 'Q8Q~quickStartSecret.Value_0123456789' }

let bedrock: BedrockMock
let azure: VendorMock
let entra: EntraMock
let azureEntra: VendorMock
let vertex: VertexMock
let keyFile: string

beforeAll(async () => {
	mkdirSync(dir, { recursive: true })
	template = initializedDataDir()
	template.catch(() => {}) // each boot awaits it, and fails with it
	bedrock = await startBedrockMock({ apiKey: BEDROCK_TOKEN, iam: IAM, region: 'eu-west-1', models: [CLAUDE, NOVA] })
	azure = startAzureMock({ apiKey: AZURE_KEY, deployments: { 'gpt-4o-mini': 'gpt-4o-mini' } })
	entra = startEntraMock(SP)
	azureEntra = startAzureMock({ apiKey: 'az-disabled', deployments: { 'prod-4o': 'gpt-4o' }, entra, keyAuth: false })
	vertex = await startVertexMock({ project: 'proj-qs', region: 'us-east5', expressKey: 'AQ.unused' })
	keyFile = `${dir}/sa.json`
	await Bun.write(keyFile, vertex.key.json)
	for (const start of early) start()
})
afterAll(async () => {
	// Each describe stops its own and reads its log; these stops are for a describe a filter (-t) left out.
	await Promise.allSettled(boots)
	await Promise.all(gateways.map((gw) => gw.stop()))
	await Promise.all([bedrock?.stop(), azure?.stop(), entra?.stop(), azureEntra?.stop(), vertex?.stop()])
})

type Gateway = Awaited<ReturnType<typeof startProcess>>

/**
 * A DATA_DIR PGlite initialized and migrated, by a gateway started (and stopped) with nothing but ADMIN_KEY, that each
 * gateway below starts on a copy of: on an empty one a start spends two thirds of its CPU (3 s) in PGlite's initdb and
 * the migrations, which tell nothing of the quick start (no vendor variable is set for this one: it makes no channel).
 * The first start on an empty DATA_DIR is data-dir.test.ts's and secret-key.test.ts's.
 */
let template: Promise<string>
async function initializedDataDir(): Promise<string> {
	const gw = await startProcess('cloud-qs-template', { ADMIN_KEY })
	const out = await gw.stop()
	expect(out.code).toBe(0)
	return `${root}test-output/cloud-qs-template-${process.pid}`
}

/** What startProcess(name) makes its DATA_DIR, made a copy of the template first (cp -a: its modes, 0700 and 0600). */
async function copyTemplate(name: string) {
	const to = `${root}test-output/${name}-${process.pid}`
	rmSync(to, { recursive: true, force: true })
	const cp = Bun.spawnSync(['cp', '-a', await template, to], { stderr: 'pipe' })
	if (cp.exitCode !== 0) throw new Error(`cp -a ${await template} ${to}: ${cp.stderr.toString()}`)
}

/**
 * Every gateway of the file starts from its first hook, BOOTS_AT_ONCE at a time in the order the describes come: each
 * start boots a process (a second or more of CPU), so the later ones boot while the first tests run instead of each
 * describe waiting for its own. A describe asks for its gateways with `beforeFile`; its tests await their own, and
 * fail with it.
 */
const BOOTS_AT_ONCE = 3
const early: Array<() => void> = []
const boots: Array<Promise<Gateway>> = []
const gateways: Gateway[] = []
let booting = 0
const waiting: Array<() => void> = []

/** `start` run by the file's first hook, after the mocks; the getter gives what it returned. */
function beforeFile<T>(start: () => T): () => T {
	let started: { value: T } | undefined
	early.push(() => {
		started = { value: start() }
		if (started.value instanceof Promise) started.value.catch(() => {}) // the describe's hook awaits it, and fails with it
	})
	return () => {
		if (!started) throw new Error('the file-level beforeAll did not run')
		return started.value
	}
}

/** The server started as a process (startProcess) once fewer than BOOTS_AT_ONCE are booting. */
function boot(name: string, env: Record<string, string>): Promise<Gateway> {
	const started = (async () => {
		if (booting < BOOTS_AT_ONCE) booting++
		else await new Promise<void>((r) => waiting.push(r)) // handed its place by a finished boot
		try {
			await copyTemplate(name)
			const gw = await startProcess(name, env)
			gateways.push(gw)
			return gw
		} finally {
			const next = waiting.shift()
			if (next) next()
			else booting--
		}
	})()
	started.catch(() => {}) // its test awaits it, and fails with it
	boots.push(started)
	return started
}

/** An account with money and a key on the running server, and an OpenAI client with that key. */
async function clientOf(gw: Gateway): Promise<OpenAI> {
	const admin = (path: string, body: unknown) =>
		fetch(gw.url + path, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>)
	const account = await admin('/api/accounts', { name: 'cloud', balance: 10 })
	const { key } = await admin('/api/tokens', { account_id: account.id, name: 'cloud' })
	return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 })
}

const channelsOf = async (gw: Gateway) =>
	((await (await fetch(`${gw.url}/api/channels`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as { data: Array<Record<string, any>> }).data

const ask = async (client: OpenAI, model: string) => (await client.chat.completions.create({ model, messages: [{ role: 'user', content: `hello ${model}` }] })).choices[0]!.message.content

describe('cloud quick start with API keys', () => {
	let gw: Gateway
	let client: OpenAI
	const started = beforeFile(() =>
		boot('cloud-qs-keys', {
			ADMIN_KEY,
			ALLOW_UNPRICED_MODELS: 'true',
			AWS_BEARER_TOKEN_BEDROCK: BEDROCK_TOKEN,
			AWS_REGION: 'eu-west-1',
			AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
			AZURE_OPENAI_API_KEY: AZURE_KEY,
			AZURE_OPENAI_ENDPOINT: azure.url,
			OPENAI_API_VERSION: '2024-10-21',
			GOOGLE_APPLICATION_CREDENTIALS: keyFile,
			GOOGLE_CLOUD_LOCATION: 'us-east5',
			GOOGLE_VERTEX_BASE_URL: vertex.url,
		}),
	)
	beforeAll(async () => {
		gw = await started()
		client = await clientOf(gw)
	}, 60_000)
	afterAll(async () => {
		const out = await gw?.stop()
		// No key in any log line.
		for (const secret of [BEDROCK_TOKEN, AZURE_KEY, 'PRIVATE KEY']) expect(`${out?.stdout}${out?.stderr}`).not.toContain(secret)
	})

	it('should make bedrock-default, azure-default and vertex-default, from env, with their settings', async () => {
		const made = Object.fromEntries((await channelsOf(gw)).map((c) => [c.name, { type: c.type, source: c.source, status: c.status, base_url: c.base_url, settings: c.settings }]))
		expect(made).toEqual({
			'bedrock-default': { type: 'bedrock', source: 'env', status: 'enabled', base_url: bedrock.url, settings: { region: 'eu-west-1' } },
			'azure-default': { type: 'azure', source: 'env', status: 'enabled', base_url: azure.url, settings: { api_version: '2024-10-21' } },
			'vertex-default': { type: 'vertex', source: 'env', status: 'enabled', base_url: vertex.url, settings: { project: 'proj-qs', region: 'us-east5' } },
		})
	})

	it('should call Claude and Nova on Bedrock with the Bedrock API key', async () => {
		expect(await ask(client, CLAUDE)).toBeTruthy()
		expect(await ask(client, NOVA)).toBeTruthy()
		const calls = bedrock.requests.filter((r) => r.headers.authorization === `Bearer ${BEDROCK_TOKEN}`).map((r) => decodeURIComponent(r.path))
		expect(calls).toEqual([`/model/${CLAUDE}/invoke`, `/model/${NOVA}/converse`])
	})

	it("should call the Azure deployment with the key and OPENAI_API_VERSION's api-version", async () => {
		expect(await ask(client, 'gpt-4o-mini')).toBeTruthy()
		const call = azure.requests.at(-1)!
		expect({ path: call.path, version: call.query['api-version'], key: call.headers['api-key'] }).toEqual({ path: '/openai/deployments/gpt-4o-mini/chat/completions', version: '2024-10-21', key: AZURE_KEY })
	})

	it("should call Gemini and Claude on Vertex AI in the key file's project and GOOGLE_CLOUD_LOCATION", async () => {
		expect(await ask(client, 'gemini-2.5-flash')).toBeTruthy()
		expect(await ask(client, 'claude-sonnet-4-5@20250929')).toBeTruthy()
		expect(vertex.requests.filter((r) => r.path.startsWith('/v1/')).map((r) => r.path)).toEqual([
			'/v1/projects/proj-qs/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent',
			'/v1/projects/proj-qs/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
		])
		expect(vertex.tokenFetches).toBe(1)
	})
})

describe('cloud quick start with IAM keys and a service principal', () => {
	let gw: Gateway
	let client: OpenAI
	const started = beforeFile(() =>
		boot('cloud-qs-iam', {
			ADMIN_KEY,
			ALLOW_UNPRICED_MODELS: 'true',
			AWS_ACCESS_KEY_ID: IAM.accessKeyId,
			AWS_SECRET_ACCESS_KEY: IAM.secretAccessKey,
			AWS_SESSION_TOKEN: IAM.sessionToken,
			AWS_DEFAULT_REGION: 'eu-west-1',
			AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
			AZURE_OPENAI_ENDPOINT: azureEntra.url,
			AZURE_TENANT_ID: SP.tenantId,
			AZURE_CLIENT_ID: SP.clientId,
			AZURE_CLIENT_SECRET: SP.clientSecret,
			AZURE_AUTHORITY_HOST: entra.url,
			AZURE_OPENAI_DEPLOYMENTS: 'prod-4o',
		}),
	)
	beforeAll(async () => {
		gw = await started()
		client = await clientOf(gw)
	}, 60_000)
	afterAll(async () => {
		const out = await gw?.stop()
		for (const secret of [IAM.secretAccessKey, IAM.sessionToken, SP.clientSecret]) expect(`${out?.stdout}${out?.stderr}`).not.toContain(secret)
	})

	it('should sign Bedrock calls with the IAM keys for AWS_DEFAULT_REGION', async () => {
		const before = bedrock.requests.length
		// The mock refuses a signature of other keys, another region or without the session token (403).
		expect(await ask(client, CLAUDE)).toBeTruthy()
		const call = bedrock.requests[before]!
		expect(call.headers.authorization).toContain(`Credential=${IAM.accessKeyId}/`)
		expect(call.headers.authorization).toContain('/eu-west-1/bedrock/aws4_request')
		expect(call.headers['x-amz-security-token']).toBe(IAM.sessionToken)
	})

	it("should call the listed Azure deployment with the service principal's Entra ID token", async () => {
		expect(await ask(client, 'prod-4o')).toBeTruthy()
		expect(entra.tokenFetches).toBe(1)
		expect(azureEntra.requests.at(-1)!.headers.authorization).toMatch(/^Bearer /)
		const made = (await channelsOf(gw)).find((c) => c.name === 'azure-default')!
		expect({ models: made.models, settings: made.settings }).toEqual({ models: ['prod-4o'], settings: { authority_host: entra.url } })
	})
})

describe('cloud quick start with AKS workload identity and with a certificate', () => {
	const APP = { tenantId: SP.tenantId, clientId: '0f5e1d2c-3b4a-4c5d-8e6f-7a8b9c0d1e2f' }
	let wi: EntraMock
	let resource: VendorMock
	let cert: TestCertificate
	const gws: Gateway[] = []
	// What the workload identity webhook injects (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE, AZURE_AUTHORITY_HOST), or azure-identity's certificate variables.
	const CREDENTIALS = [
		['cloud-qs-wi', { AZURE_FEDERATED_TOKEN_FILE: `${dir}/azure-identity-token` }, 'federated'],
		['cloud-qs-cert', { AZURE_CLIENT_CERTIFICATE_PATH: `${dir}/app.pem` }, 'certificate'],
		// A password-protected PFX (TEST-ONLY, test/fixtures/azure-entra), as Key Vault and `az ad sp create-for-rbac --create-cert` give it.
		['cloud-qs-pfx', { AZURE_CLIENT_CERTIFICATE_PATH: `${FIXTURES}/app-aes256.pfx`, AZURE_CLIENT_CERTIFICATE_PASSWORD: PFX_PASSWORD }, 'PFX certificate'],
	] as const
	// One gateway per credential, started with the file's (beforeFile); each test calls its own.
	const setUp = beforeFile(async () => {
		cert = await testCertificate({ cn: 'quick start app' })
		wi = startEntraMock({ ...APP, certificates: [cert.certPem, await Bun.file(`${FIXTURES}/app.crt`).text()], federatedSubject: 'system:serviceaccount:ai:switchboard' })
		resource = startAzureMock({ apiKey: 'az-disabled', deployments: { 'prod-4o': 'gpt-4o' }, entra: wi, keyAuth: false })
		await Bun.write(`${dir}/azure-identity-token`, wi.federatedToken())
		await Bun.write(`${dir}/app.pem`, cert.certPem + cert.keyPem)
		return CREDENTIALS.map(([name, proof]) =>
			boot(name, {
				ADMIN_KEY,
				ALLOW_UNPRICED_MODELS: 'true',
				AZURE_OPENAI_ENDPOINT: resource.url,
				AZURE_TENANT_ID: APP.tenantId,
				AZURE_CLIENT_ID: APP.clientId,
				AZURE_AUTHORITY_HOST: wi.url,
				AZURE_OPENAI_DEPLOYMENTS: 'prod-4o',
				...proof,
			}),
		)
	})
	let started: Array<Promise<Gateway>> = []
	beforeAll(async () => {
		started = await setUp()
	}, 60_000)
	afterAll(async () => {
		for (const r of await Promise.allSettled(started)) if (r.status === 'fulfilled') gws.push(r.value)
		for (const gw of gws) {
			const out = await gw.stop()
			expect(`${out.stdout}${out.stderr}`).not.toContain(cert.keyPem.split('\n')[2]!)
			expect(`${out.stdout}${out.stderr}`).not.toContain(PFX_PASSWORD)
		}
		await Promise.all([wi?.stop(), resource?.stop()])
	})

	for (const [i, [, , kind]] of CREDENTIALS.entries())
		it(`should call the deployment with the token of the ${kind} credential`, async () => {
			const gw = await started[i]!
			await Promise.allSettled(started) // the others started too: only this test's calls come below
			const before = wi.tokenRequests.length
			expect(await ask(await clientOf(gw), 'prod-4o')).toBe('Hello! You said: hello prod-4o')
			expect(wi.accepts(resource.requests.at(-1)!.headers.authorization!.replace(/^Bearer /, ''))).toBe(true)
			const [t] = wi.tokenRequests.slice(before)
			expect(t!.form.client_assertion_type).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
			if (kind === 'federated') expect(t!.form.client_assertion).toBe(await Bun.file(`${dir}/azure-identity-token`).text())
			else if (kind === 'certificate') expect(wi.assertions.at(-1)!.header['x5t#S256']).toBeString()
			else expect(wi.assertions.at(-1)!.header['x5t#S256']).toBe(new Bun.CryptoHasher('sha256').update(new X509Certificate(await Bun.file(`${FIXTURES}/app.crt`).text()).raw).digest('base64url'))
		}, 60_000)
})

describe("cloud quick start with Google's other credentials files", () => {
	const KINDS = ['authorized_user', 'external_account'] as const
	// One gateway per file, started with the file's (beforeFile); each test calls its own.
	const setUp = beforeFile(() => {
		const started = KINDS.map(async (kind) => {
			const file = `${dir}/${kind}.json`
			if (kind === 'authorized_user') await Bun.write(file, vertex.user.json)
			else {
				await Bun.write(`${dir}/subject-token`, vertex.workload.subjectToken)
				await Bun.write(file, externalAccountKey(vertex.url, vertex.workload, { file: `${dir}/subject-token` }, { impersonate: true }))
			}
			return boot(`cloud-qs-${kind}`, {
				ADMIN_KEY,
				ALLOW_UNPRICED_MODELS: 'true',
				GOOGLE_APPLICATION_CREDENTIALS: file,
				// The user's file names its quota project; the workload's names none.
				...(kind === 'external_account' ? { GOOGLE_CLOUD_PROJECT: 'proj-qs' } : {}),
				GOOGLE_CLOUD_LOCATION: 'us-east5',
				GOOGLE_VERTEX_BASE_URL: vertex.url,
			})
		})
		for (const p of started) p.catch(() => {}) // each test awaits its own, and fails with it
		return started
	})
	let started: Array<Promise<Gateway>> = []
	beforeAll(() => {
		started = setUp()
	})
	afterAll(async () => {
		for (const r of await Promise.allSettled(started)) if (r.status === 'fulfilled') await r.value.stop()
	})

	for (const [i, kind] of KINDS.entries())
		it(`should make vertex-default from ${kind === 'authorized_user' ? "gcloud's authorized_user file" : 'a workload identity federation external_account file'} and call Gemini with its token`, async () => {
			const gw = await started[i]!
			await Promise.allSettled(started) // the other started too: only this test's calls come below
			try {
				const made = (await channelsOf(gw)).find((c) => c.name === 'vertex-default')!
				expect({ status: made.status, settings: made.settings }).toEqual({ status: 'enabled', settings: { project: 'proj-qs', region: 'us-east5' } })
				expect(await ask(await clientOf(gw), 'gemini-2.5-flash')).toBeTruthy()
				const call = vertex.requests.at(-1)!
				expect(call.path).toBe('/v1/projects/proj-qs/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent')
				expect(call.headers.authorization).toMatch(kind === 'authorized_user' ? /^Bearer ya29\.user-\d+$/ : /^Bearer ya29\.imp-\d+$/)
			} finally {
				const out = await gw.stop()
				for (const secret of [vertex.user.refreshToken, vertex.user.clientSecret, vertex.workload.subjectToken]) expect(`${out.stdout}${out.stderr}`).not.toContain(secret)
			}
		}, 60_000)
})

describe('cloud quick-start variables refused at start', () => {
	it('should name every variable that cannot be used, and the key file that cannot be read', async () => {
		const r = await startUntilExit('cloud-qs-bad', {
			AWS_BEARER_TOKEN_BEDROCK: BEDROCK_TOKEN,
			AZURE_OPENAI_API_KEY: AZURE_KEY,
			GOOGLE_APPLICATION_CREDENTIALS: `${dir}/no-such-key.json`,
		})
		expect(r.code).toBe(1)
		expect(r.stderr).toContain('switchboard: cannot start')
		expect(r.stderr).toContain('AWS_REGION must be set with AWS_BEARER_TOKEN_BEDROCK')
		expect(r.stderr).toContain('AZURE_OPENAI_ENDPOINT must be set with AZURE_OPENAI_API_KEY')
		expect(r.stderr).toContain(`GOOGLE_APPLICATION_CREDENTIALS names ${dir}/no-such-key.json, which cannot be read (ENOENT)`)
		for (const secret of [BEDROCK_TOKEN, AZURE_KEY]) expect(r.stderr).not.toContain(secret)
		expect(r.stderr).not.toContain('    at ')
	}, 30_000)

	it('should refuse a key file whose private key is no key, and service-principal ids of the wrong shape, never quoting them', async () => {
		const broken = `${dir}/broken-key.json`
		const privateKey = '-----BEGIN PRIVATE KEY-----\nTOPSECRETnotAKey0123\n-----END PRIVATE KEY-----\n'
		await Bun.write(broken, JSON.stringify({ type: 'service_account', project_id: 'proj-qs', client_email: 'gw@proj-qs.iam.gserviceaccount.com', private_key: privateKey }))
		// Two refused starts at once (each boots a process).
		const [key, sp] = await Promise.all([
			startUntilExit('cloud-qs-broken-key', { GOOGLE_APPLICATION_CREDENTIALS: broken }),
			startUntilExit('cloud-qs-bad-sp', { AZURE_OPENAI_ENDPOINT: 'https://my-resource.openai.azure.com', AZURE_TENANT_ID: SP.tenantId, AZURE_CLIENT_ID: 'my-app', AZURE_CLIENT_SECRET: SP.clientSecret }),
		])
		expect(key.code).toBe(1)
		expect(key.stderr).toContain(`GOOGLE_APPLICATION_CREDENTIALS (${broken}): \`private_key\` is not an RSA private key in PKCS#8 PEM`)
		expect(key.stderr).not.toContain('TOPSECRET')
		expect(sp.code).toBe(1)
		expect(sp.stderr).toContain('AZURE_CLIENT_ID is the application (client) id, a GUID')
		expect(sp.stderr).not.toContain(SP.clientSecret)
	}, 30_000)
})
