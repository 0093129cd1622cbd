/**
 * `vertex` channels keyed with the three other kinds of Google credentials users have, through the official
 * `@google/genai` and `openai` clients, against the Vertex mock's token endpoints (test/mocks/vertex: user.ts, sts.ts):
 * - `authorized_user` (`gcloud auth application-default login`): the refresh grant at the file's token endpoint, the
 *   project and `x-goog-user-project` from `quota_project_id` (the mock refuses user tokens without it, as Vertex does);
 * - `external_account` (workload identity federation): the subject token from a file (text or JSON) or a URL (its
 *   headers sent, a same-host redirect followed, another host's not), exchanged at STS, then the service account
 *   impersonated when the file says so;
 * - `impersonated_service_account` (`gcloud auth application-default login --impersonate-service-account`): the source
 *   credentials' token (a user's, a key file's) asks generateAccessToken for the service account's, through `delegates`.
 * Each: one token for several calls, a new one after Vertex's 401; a refused credential disables the channel saying
 * why, and no refresh token, client secret or subject token appears in an answer, a log line or a disabled reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'
import { createLogger } from '../../../src/lib/log'
import { startTestApp, type TestApp } from '../../helpers/app'
import { startVertexMock, type VertexMock } from '../../mocks'
import { externalAccountKey, impersonatedKey } from '../../mocks/vertex/sts'
import { testAuthorizedUser } from '../../mocks/vertex/user'
import { chat } from './clients'
import { SETUP_MS } from './harness'

const PROJECT = 'proj-creds'
const REGION = 'us-east5'
const CLAUDE_ID = 'claude-sonnet-4-5@20250929'
const GEMINI_ID = 'gemini-2.5-flash'
/** The subject token the identity provider would not vouch for. */
const FORGED = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmb3JnZWQifQ.Zm9yZ2VkLXNpZ25hdHVyZS0wMTIzNDU2Nzg5'

const dir = `${tmpdir()}/vertex-credentials-${process.pid}`
const file = (name: string) => `${dir}/${name}`

let app: TestApp
let v: VertexMock
/** Another host, the workload's own: serves the subject token behind a same-host redirect, and redirects away. */
let idp: ReturnType<typeof Bun.serve>
let wrongUser: ReturnType<typeof testAuthorizedUser>
const logs: string[] = []

beforeAll(async () => {
	mkdirSync(dir, { recursive: true })
	v = await startVertexMock({ project: PROJECT, region: REGION, expressKey: 'AQ.not-used' })
	const w = v.workload
	writeFileSync(file('token.txt'), `${w.subjectToken}\n`)
	writeFileSync(file('token.json'), JSON.stringify({ id_token: w.subjectToken, expires_at: 0 }))
	writeFileSync(file('forged.txt'), FORGED)
	writeFileSync(file('two-lines.txt'), `root:x:0:0:root:/root:/bin/bash\n${w.subjectToken}\n`)
	idp = Bun.serve({
		hostname: '127.0.0.1',
		port: 0,
		fetch(req) {
			const path = new URL(req.url).pathname
			if (path === '/moved') return new Response(null, { status: 307, headers: { location: '/served' } })
			if (path === '/served') return req.headers.get('metadata') === 'true' ? Response.json({ access_token: w.subjectToken }) : new Response('no', { status: 400 })
			if (path === '/away') return new Response(null, { status: 302, headers: { location: `${v.url}/subject-token` } })
			if (path === '/huge') return new Response('a'.repeat(200_000))
			return new Response('not found', { status: 404 })
		},
	})
	const idpUrl = `http://127.0.0.1:${idp.port}`
	wrongUser = testAuthorizedUser(`${v.url}/token`, PROJECT)
	const user = v.user.json
	const urlSource = (url: string) => ({ url, headers: { Metadata: 'true' }, format: { type: 'json', subject_token_field_name: 'access_token' } })
	const wif = (source: Record<string, unknown>, impersonate = true) => externalAccountKey(v.url, w, source, { impersonate, quotaProject: PROJECT })
	const channels: Array<[string, string, string, Record<string, unknown>?]> = [
		['user', user, CLAUDE_ID],
		['user-gemini', user, GEMINI_ID],
		['user-renew', user, GEMINI_ID],
		['user-wrong', wrongUser.json, GEMINI_ID],
		['wif-file', wif({ file: file('token.txt') }), CLAUDE_ID],
		// No impersonation, and no quota_project_id: the federated token itself, in settings.project.
		['wif-json', externalAccountKey(v.url, w, { file: file('token.json'), format: { type: 'json', subject_token_field_name: 'id_token' } }), GEMINI_ID, { project: PROJECT }],
		['wif-url', wif(urlSource(`${v.url}/subject-token`)), GEMINI_ID],
		['wif-moved', wif(urlSource(`${idpUrl}/moved`)), GEMINI_ID],
		['wif-renew', wif({ file: file('token.txt') }), CLAUDE_ID],
		['wif-away', wif(urlSource(`${idpUrl}/away`)), GEMINI_ID],
		['wif-huge', wif({ url: `${idpUrl}/huge` }), GEMINI_ID],
		['wif-forged', wif({ file: file('forged.txt') }), GEMINI_ID],
		['wif-two-lines', wif({ file: file('two-lines.txt') }), GEMINI_ID],
		// A service account the federated identity may not impersonate.
		// gcloud's impersonation file over the user's credentials; a key file's token through a delegate; a chain left out.
		['imp-user', impersonatedKey(v.url, w.serviceAccount, user, [], PROJECT), CLAUDE_ID],
		['imp-chain', impersonatedKey(v.url, w.chained, v.key.json, [w.delegate]), GEMINI_ID, { project: PROJECT }],
		['imp-unchained', impersonatedKey(v.url, w.chained, user, [], PROJECT), GEMINI_ID],
		['wif-denied', externalAccountKey(v.url, w, { file: file('token.txt') }, { quotaProject: PROJECT, extra: { service_account_impersonation_url: `${v.url}/v1/projects/-/serviceAccounts/other@${PROJECT}.iam.gserviceaccount.com:generateAccessToken` } }), GEMINI_ID],
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
	await app?.close()
	await v?.stop()
	await idp?.stop(true)
	rmSync(dir, { recursive: true, force: true })
})

async function client() {
	const a = await app.account(10)
	return { ...a, openai: new OpenAI({ apiKey: a.key, baseURL: `${app.url}/v1`, maxRetries: 0 }), genai: new GoogleGenAI({ apiKey: a.key, httpOptions: { baseUrl: app.url, apiVersion: 'v1beta' } }) }
}

const say = async (model: string, text: string, stream = false) => (await chat((await client()).openai, { model, messages: [{ role: 'user', content: text }] }, stream)).text
const last = () => v.requests[v.requests.length - 1]!
const tokenCalls = (path: string, since: number) => v.tokenRequests.slice(since).filter((r) => r.path === path || (path === 'impersonate' && r.path.endsWith(':generateAccessToken')))
const geminiPath = `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/${GEMINI_ID}:generateContent`

async function channel(name: string): Promise<{ status: string; disabled_reason: string | null }> {
	const list = (await app.admin('/api/channels')).body.data as Array<{ name: string; status: string; disabled_reason: string | null }>
	return list.find((c) => c.name === name)!
}

/** Every secret of every credential in the test: none may be said anywhere. */
const secrets = () => [v.user.refreshToken, v.user.clientSecret, wrongUser.refreshToken, wrongUser.clientSecret, v.workload.subjectToken, FORGED]

describe('vertex channel with authorized_user credentials', () => {
	for (const stream of [false, true])
		it(`should answer @google/genai (${stream ? 'stream' : 'non-stream'}) with a refreshed token, in quota_project_id's project, x-goog-user-project sent`, async () => {
			const c = await client()
			const since = v.tokenRequests.length
			let text = ''
			if (stream) for await (const chunk of await c.genai.models.generateContentStream({ model: 'user-gemini', contents: 'hello user' })) text += chunk.text ?? ''
			else text = (await c.genai.models.generateContent({ model: 'user-gemini', contents: 'hello user' })).text ?? ''
			expect(text).toBe('Hello! You said: hello user')
			const r = last()
			expect(r.path).toBe(stream ? geminiPath.replace(':generateContent', ':streamGenerateContent') : geminiPath)
			expect(r.headers.authorization).toMatch(/^Bearer ya29\.user-\d+$/)
			expect(r.headers['x-goog-user-project']).toBe(PROJECT)
			// The first call of the channel refreshed the token; the second reused it.
			const refreshes = tokenCalls('/token', since)
			expect(refreshes.length).toBe(stream ? 0 : 1)
			for (const t of refreshes) expect(t.form).toEqual({ grant_type: 'refresh_token', client_id: v.user.clientId, client_secret: v.user.clientSecret, refresh_token: v.user.refreshToken })
		})

	it('should call Claude for an OpenAI client with the user token too', async () => {
		expect(await say('user', 'hello claude user', true)).toBe('Hello! You said: hello claude user')
		expect(last().path).toBe(`/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/${CLAUDE_ID}:streamRawPredict`)
		expect(last().headers['x-goog-user-project']).toBe(PROJECT)
	})

	it('should refresh once when Vertex refuses the cached token with 401, and call again', async () => {
		await say('user-renew', 'warm up')
		const stale = last().headers.authorization
		const since = v.tokenRequests.length
		const calls = v.requests.length
		v.revokeTokens()
		expect(await say('user-renew', 'after revocation')).toBe('Hello! You said: after revocation')
		expect(tokenCalls('/token', since)).toHaveLength(1)
		const [refused, retried] = v.requests.slice(calls)
		expect(refused!.headers.authorization).toBe(stale!)
		expect(retried!.headers.authorization).toMatch(/^Bearer ya29\.user-\d+$/)
		expect(retried!.headers.authorization).not.toBe(stale!)
	})

	it('should refuse user credentials Google does not take as the channel’s credentials, disabling it, never saying the secrets', async () => {
		const c = await client()
		const res = await fetch(`${app.url}/v1/chat/completions`, {
			method: 'POST',
			headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'user-wrong', messages: [{ role: 'user', content: 'hi' }] }),
		})
		const text = await res.text()
		expect(res.status).toBe(502)
		expect(JSON.parse(text).error).toMatchObject({ code: 'upstream_auth' })
		const ch = await channel('user-wrong')
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain('invalid_client')
		for (const s of secrets()) {
			expect(text).not.toContain(s)
			expect(ch.disabled_reason).not.toContain(s)
			expect(logs.join('\n')).not.toContain(s)
		}
	})
})

describe('vertex channel with external_account credentials (workload identity federation)', () => {
	it('should read the subject token file, exchange it at STS, impersonate the service account, and call Vertex with its token', async () => {
		const since = v.tokenRequests.length
		expect(await say('wif-file', 'hello workload')).toBe('Hello! You said: hello workload')
		const [sts] = tokenCalls('/v1/token', since)
		expect(sts!.form).toEqual({
			grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
			audience: v.workload.audience,
			scope: 'https://www.googleapis.com/auth/cloud-platform',
			requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
			subject_token: v.workload.subjectToken,
			subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
		})
		const [imp] = tokenCalls('impersonate', since)
		expect(imp!.path).toBe(`/v1/projects/-/serviceAccounts/${v.workload.serviceAccount}:generateAccessToken`)
		expect(imp!.headers.authorization).toMatch(/^Bearer ya29\.sts-\d+$/)
		expect(imp!.body).toEqual({ scope: ['https://www.googleapis.com/auth/cloud-platform'], lifetime: '3600s' })
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.imp-\d+$/)
		expect(last().headers['x-goog-user-project']).toBe(PROJECT)
		// Reused: no exchange for the next calls.
		const after = v.tokenRequests.length
		expect(await say('wif-file', 'again', true)).toBe('Hello! You said: again')
		expect(await say('wif-file', 'and again')).toBe('Hello! You said: and again')
		expect(v.tokenRequests.length).toBe(after)
	})

	it("should take the token from a JSON file's field and call with the federated token itself when nothing is impersonated", async () => {
		const c = await client()
		const since = v.tokenRequests.length
		const r = await c.genai.models.generateContent({ model: 'wif-json', contents: 'hello federated' })
		expect(r.text).toBe('Hello! You said: hello federated')
		expect(tokenCalls('/v1/token', since)[0]!.form!.subject_token).toBe(v.workload.subjectToken)
		expect(tokenCalls('impersonate', since)).toHaveLength(0)
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.sts-\d+$/)
		expect(last().headers['x-goog-user-project']).toBeUndefined()
		expect(last().path).toBe(geminiPath)
	})

	it('should fetch the subject token from a URL with its headers, following a redirect on the same host', async () => {
		const since = v.tokenRequests.length
		expect(await say('wif-url', 'hello url')).toBe('Hello! You said: hello url')
		const [fetched] = tokenCalls('/subject-token', since)
		expect(fetched!.headers.metadata).toBe('true')
		expect(tokenCalls('/v1/token', since)[0]!.form!.subject_token).toBe(v.workload.subjectToken)
		expect(await say('wif-moved', 'hello moved')).toBe('Hello! You said: hello moved')
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.imp-\d+$/)
	})

	it('should exchange again once when Vertex refuses the cached token with 401', async () => {
		await say('wif-renew', 'warm up')
		const stale = last().headers.authorization
		const since = v.tokenRequests.length
		v.revokeTokens()
		expect(await say('wif-renew', 'after revocation')).toBe('Hello! You said: after revocation')
		expect(tokenCalls('/v1/token', since)).toHaveLength(1)
		expect(tokenCalls('impersonate', since)).toHaveLength(1)
		expect(last().headers.authorization).not.toBe(stale!)
	})

	for (const [model, said] of [
		['wif-away', 'redirects to another host'],
		['wif-huge', 'more than 65536 bytes'],
		['wif-two-lines', 'not a token'],
		['wif-forged', 'invalid_grant'],
		['wif-denied', 'PERMISSION_DENIED'],
	] as const)
		it(`should refuse a workload whose token cannot be had (${said}) as the channel's credentials, sending nothing on`, async () => {
			const since = v.tokenRequests.length
			const c = await client()
			const err = await c.openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
			expect(err).toBeInstanceOf(OpenAI.APIError)
			expect(err.status).toBe(502)
			const ch = await channel(model)
			expect(ch.status).toBe('disabled')
			expect(ch.disabled_reason).toContain(said)
			// Only a real token reaches STS (the forged one, refused there); the other host was never asked.
			const exchanged = model === 'wif-forged' ? [FORGED] : model === 'wif-denied' ? [v.workload.subjectToken] : []
			expect(tokenCalls('/v1/token', since).map((r) => r.form!.subject_token)).toEqual(exchanged)
			expect(tokenCalls('/subject-token', since)).toHaveLength(0)
			for (const s of secrets()) {
				expect(JSON.stringify(err.error)).not.toContain(s)
				expect(ch.disabled_reason).not.toContain(s)
				expect(logs.join('\n')).not.toContain(s)
			}
			expect(logs.join('\n')).not.toContain('root:x:0:0')
		})
})

describe('vertex channel with impersonated_service_account credentials', () => {
	it("should impersonate the service account with the user's refreshed token, and call Vertex with the service account's", async () => {
		const since = v.tokenRequests.length
		expect(await say('imp-user', 'hello impersonated', true)).toBe('Hello! You said: hello impersonated')
		const [refresh] = tokenCalls('/token', since)
		expect(refresh!.form).toMatchObject({ grant_type: 'refresh_token', refresh_token: v.user.refreshToken })
		const [imp] = tokenCalls('impersonate', since)
		expect(imp!.path).toBe(`/v1/projects/-/serviceAccounts/${v.workload.serviceAccount}:generateAccessToken`)
		expect(imp!.headers.authorization).toMatch(/^Bearer ya29\.user-\d+$/)
		expect(imp!.body).toEqual({ scope: ['https://www.googleapis.com/auth/cloud-platform'], lifetime: '3600s' })
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.imp-\d+$/)
		expect(last().headers['x-goog-user-project']).toBe(PROJECT)
		expect(last().path).toBe(`/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/${CLAUDE_ID}:streamRawPredict`)
		// Kept: the next call asks nothing of the token endpoints.
		const after = v.tokenRequests.length
		expect(await say('imp-user', 'again')).toBe('Hello! You said: again')
		expect(v.tokenRequests.length).toBe(after)
	})

	it("should reach a service account through the file's delegates with a key file's token, and impersonate again after Vertex's 401", async () => {
		const c = await client()
		const since = v.tokenRequests.length
		expect((await c.genai.models.generateContent({ model: 'imp-chain', contents: 'hello chain' })).text).toBe('Hello! You said: hello chain')
		expect(tokenCalls('/token', since)[0]!.form!.grant_type).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer')
		const [imp] = tokenCalls('impersonate', since)
		expect(imp!.path).toBe(`/v1/projects/-/serviceAccounts/${v.workload.chained}:generateAccessToken`)
		expect(imp!.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/)
		expect(imp!.body).toEqual({ delegates: [`projects/-/serviceAccounts/${v.workload.delegate}`], scope: ['https://www.googleapis.com/auth/cloud-platform'], lifetime: '3600s' })
		expect(last().headers.authorization).toMatch(/^Bearer ya29\.imp-\d+$/)
		const stale = last().headers.authorization
		v.revokeTokens()
		const again = v.tokenRequests.length
		expect((await c.genai.models.generateContent({ model: 'imp-chain', contents: 'after revocation' })).text).toBe('Hello! You said: after revocation')
		// The source's own token was revoked too: IAM's 401 has it fetched again, and the call goes through.
		const [refused, renewed] = tokenCalls('impersonate', again)
		expect(refused!.headers.authorization).toBe(imp!.headers.authorization!)
		expect(renewed!.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/)
		expect(renewed!.headers.authorization).not.toBe(refused!.headers.authorization!)
		expect(tokenCalls('impersonate', again)).toHaveLength(2)
		expect(last().headers.authorization).not.toBe(stale!)
	})

	it('should refuse a service account the source may not impersonate as the channel’s credentials, saying IAM’s words', async () => {
		const c = await client()
		const err = await c.openai.chat.completions.create({ model: 'imp-unchained', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)
		expect(err).toBeInstanceOf(OpenAI.APIError)
		expect(err.status).toBe(502)
		const ch = await channel('imp-unchained')
		expect(ch.status).toBe('disabled')
		expect(ch.disabled_reason).toContain('PERMISSION_DENIED')
		expect(ch.disabled_reason).toContain(v.workload.chained)
		for (const s of secrets()) {
			expect(JSON.stringify(err.error)).not.toContain(s)
			expect(ch.disabled_reason).not.toContain(s)
			expect(logs.join('\n')).not.toContain(s)
		}
	})
})
