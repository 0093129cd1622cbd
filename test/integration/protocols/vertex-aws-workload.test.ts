/**
 * `vertex` channels keyed with workload identity federation from AWS (an `external_account` whose `credential_source`
 * is `environment_id: "aws1"`, as `gcloud iam workload-identity-pools create-cred-config --aws` writes it), through the
 * official `openai` and `@google/genai` clients: the subject token is a GetCallerIdentity request signed with the
 * instance role's keys (from the AWS metadata mock, IMDSv2) or with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, for the region of the instance's zone or AWS_REGION; the mock STS verifies its SigV4 signature
 * apart from the gateway's signer (test/mocks/vertex/aws-subject.ts) before issuing a token, which then impersonates the
 * service account when the file says so. A signature AWS would refuse disables the channel, never saying a key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startVertexMock, type VertexMock } from '../../mocks'
import { type AwsMetadataMock, ROLE, startAwsMetadataMock } from '../../mocks/bedrock/metadata'
import { AWS_SUBJECT_TYPE } from '../../mocks/vertex/aws-subject'
import { externalAccountKey } from '../../mocks/vertex/sts'
import { chat } from './clients'
import { SETUP_MS } from './harness'

const PROJECT = 'proj-aws'
const REGION = 'us-east5'
const CLAUDE_ID = 'claude-sonnet-4-5@20250929'
const GEMINI_ID = 'gemini-2.5-flash'
const VERIFY = 'https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15'
/** Static keys AWS (the mock STS) knows, as an operator would put in the gateway's environment. */
const ENV_KEYS = { accessKeyId: 'AKIAMOCKENVKEYS00001', secretAccessKey: `envSecret/${crypto.randomUUID()}`, sessionToken: `IQoJenvSession${crypto.randomUUID()}` }
const AWS_VARS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION'] as const

let app: TestApp
let v: VertexMock
let aws: AwsMetadataMock
const saved: Record<string, string | undefined> = {}
const logs: string[] = []

beforeAll(async () => {
	for (const k of AWS_VARS) {
		saved[k] = process.env[k]
		delete process.env[k]
	}
	aws = startAwsMetadataMock('unused')
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: 'AQ.not-used', awsKeys: (id) => (id === ENV_KEYS.accessKeyId ? ENV_KEYS : aws.keysFor(id)?.keys) })
	const source = {
		environment_id: 'aws1',
		region_url: `${aws.url}/latest/meta-data/placement/availability-zone`,
		url: `${aws.url}/latest/meta-data/iam/security-credentials`,
		regional_cred_verification_url: VERIFY,
		imdsv2_session_token_url: `${aws.url}/latest/api/token`,
	}
	const awsKey = (opts: Parameters<typeof externalAccountKey>[3]) => externalAccountKey(v.url, v.workload, source, { ...opts, extra: { subject_token_type: AWS_SUBJECT_TYPE } })
	const channels: Array<[string, string, string, Record<string, unknown>?]> = [
		['aws-imds', awsKey({ impersonate: true, quotaProject: PROJECT }), CLAUDE_ID],
		['aws-env', awsKey({}), GEMINI_ID, { project: PROJECT }],
		['aws-forged', awsKey({ impersonate: true, quotaProject: PROJECT }), GEMINI_ID],
	]
	app = await startTestApp({
		config: {
			channels: channels.map(([name, key, upstream, settings]) => ({ name, type: 'vertex', base_url: v.url, api_key: key, models: [name], model_map: { [name]: upstream }, settings: { region: REGION, ...settings } })),
			models: channels.map(([name]) => ({ name, input_per_mtok: 1, output_per_mtok: 4 })),
		},
	})
	Object.assign(app.svc, { log: createLogger('debug', (l) => logs.push(l)) })
}, SETUP_MS)

afterAll(async () => {
	for (const k of AWS_VARS) {
		if (saved[k] === undefined) delete process.env[k]
		else process.env[k] = saved[k]
	}
	await app?.close()
	await v?.stop()
	await aws?.stop()
})

async function client() {
	const a = await app.account(10)
	return { openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }), genai: new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } }) }
}

const last = () => v.requests[v.requests.length - 1]!
const exchanges = (since: number) => v.tokenRequests.slice(since).filter((r) => r.path === '/v1/token')
/** The GetCallerIdentity request a subject token carries, its headers by name. */
function signedRequest(subjectToken: string) {
	const req = JSON.parse(decodeURIComponent(subjectToken)) as { url: string; method: string; headers: Array<{ key: string; value: string }> }
	return { ...req, header: Object.fromEntries(req.headers.map((h) => [h.key.toLowerCase(), h.value])) }
}

describe('vertex channel with an AWS external_account', () => {
	it("should sign GetCallerIdentity with the instance role's keys (IMDSv2), in its zone's region, and call Vertex with the impersonated token", async () => {
		const since = v.tokenRequests.length
		const { text } = await chat((await client()).openai, { model: 'aws-imds', messages: [{ role: 'user', content: 'hello from ec2' }] }, true)
		expect(text).toBe('Hello! You said: hello from ec2')
		// The metadata: one IMDSv2 session, whose token every request carried.
		const paths = aws.requests.map((r) => `${r.method} ${r.path}`)
		expect(paths).toEqual([
			'PUT /latest/api/token',
			'GET /latest/meta-data/placement/availability-zone',
			'GET /latest/meta-data/iam/security-credentials/',
			`GET /latest/meta-data/iam/security-credentials/${ROLE}`,
		])
		const session = aws.requests[1]!.headers['x-aws-ec2-metadata-token']
		expect(session).toStartWith('AQAEAmockImdsSession')
		for (const r of aws.requests.slice(1)) expect(r.headers['x-aws-ec2-metadata-token']).toBe(session!)
		// The exchange: STS verified the signature (else invalid_grant) of the role's keys, for us-east-2 (zone us-east-2b).
		const [sts] = exchanges(since)
		expect(sts!.form).toMatchObject({ audience: v.workload.audience, subject_token_type: AWS_SUBJECT_TYPE, scope: 'https://www.googleapis.com/auth/cloud-platform' })
		const signed = signedRequest(sts!.form!.subject_token!)
		expect(signed.url).toBe('https://sts.us-east-2.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15')
		expect(signed.method).toBe('POST')
		expect(signed.header.host).toBe('sts.us-east-2.amazonaws.com')
		expect(signed.header['x-goog-cloud-target-resource']).toBe(v.workload.audience)
		expect(signed.header.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIAMOCKROLE\d{8}\/\d{8}\/us-east-2\/sts\/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token;x-goog-cloud-target-resource, Signature=[0-9a-f]{64}$/)
		const role = aws.keysFor(/Credential=([^/]+)/.exec(signed.header.authorization!)![1]!)!
		expect(signed.header['x-amz-security-token']).toBe(role.keys.sessionToken!)
		const [imp] = v.tokenRequests.slice(since).filter((r) => r.path.endsWith(':generateAccessToken'))
		expect(imp!.headers.authorization).toMatch(/^Bearer ya29\.sts-\d+$/)
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.imp-\d+$/)
		expect(last().path).toBe(`/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/${CLAUDE_ID}:streamRawPredict`)
		// Kept: no exchange, no metadata for the next call.
		const after = v.tokenRequests.length
		const metadata = aws.requests.length
		expect((await chat((await client()).openai, { model: 'aws-imds', messages: [{ role: 'user', content: 'again' }] }, false)).text).toBe('Hello! You said: again')
		expect(v.tokenRequests.length).toBe(after)
		expect(aws.requests.length).toBe(metadata)
	})

	it('should sign with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN for AWS_REGION when set, asking the metadata nothing', async () => {
		Object.assign(process.env, { AWS_ACCESS_KEY_ID: ENV_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: ENV_KEYS.secretAccessKey, AWS_SESSION_TOKEN: ENV_KEYS.sessionToken, AWS_REGION: 'eu-west-1' })
		const since = v.tokenRequests.length
		const metadata = aws.requests.length
		const r = await (await client()).genai.models.generateContent({ model: 'aws-env', contents: 'hello from env' })
		expect(r.text).toBe('Hello! You said: hello from env')
		expect(aws.requests.length).toBe(metadata)
		const signed = signedRequest(exchanges(since)[0]!.form!.subject_token!)
		expect(signed.url).toBe('https://sts.eu-west-1.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15')
		expect(signed.header.authorization).toContain(`Credential=${ENV_KEYS.accessKeyId}/`)
		expect(signed.header.authorization).toContain('/eu-west-1/sts/aws4_request')
		expect(signed.header['x-amz-security-token']).toBe(ENV_KEYS.sessionToken)
		// No impersonation in this file: the federated token itself.
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.sts-\d+$/)
	})

	it("should refuse a signature AWS would not take as the channel's credentials, never saying the secret or the session token", async () => {
		const wrong = `wrongSecret/${crypto.randomUUID()}`
		Object.assign(process.env, { AWS_ACCESS_KEY_ID: ENV_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: wrong, AWS_SESSION_TOKEN: ENV_KEYS.sessionToken, AWS_REGION: 'eu-west-1' })
		const since = v.tokenRequests.length
		const err = await (await client()).openai.chat.completions.create({ model: 'aws-forged', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(err.status).toBe(502)
		expect(exchanges(since)).toHaveLength(1)
		expect(v.tokenRequests.slice(since).filter((r) => r.path.endsWith(':generateAccessToken'))).toHaveLength(0)
		const list = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null }>
		const ch = list.find((c) => c.name === 'aws-forged')!
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain('invalid_grant')
		expect(ch.disabled_reason).toContain('signature we calculated does not match')
		for (const s of [wrong, ENV_KEYS.secretAccessKey, ENV_KEYS.sessionToken, exchanges(since)[0]!.form!.subject_token!]) {
			expect(JSON.stringify(err.error)).not.toContain(s)
			expect(ch.disabled_reason).not.toContain(s)
			expect(logs.join('\n')).not.toContain(s)
		}
	})
})
