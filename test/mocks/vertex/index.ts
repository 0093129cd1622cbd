/**
 * Mock Google Vertex AI for Claude and Gemini, with its OAuth token endpoint (oauth.ts):
 * - `POST /token`: the JWT bearer grant of the service-account key, its RS256 signature checked; issues
 *   `ya29.mock-N` tokens living `tokenTtl` seconds (the mock refuses them after that, as Google does); and the refresh
 *   grant of the mock's user credentials (`user`, user.ts), issuing `ya29.user-N`: Vertex refuses those without an
 *   `x-goog-user-project` (403, Google's words for ADC user credentials without a quota project);
 * - workload identity federation (sts.ts): STS's `POST /v1/token` (`ya29.sts-N`), generateAccessToken's
 *   `POST /v1/projects/-/serviceAccounts/{email}:generateAccessToken` (`ya29.imp-N`, for any live token the mock
 *   issued: an STS token, a user's, a service account's), and `GET /subject-token`, the workload's identity provider as
 *   a URL source;
 * - `POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict|streamRawPredict`:
 *   Anthropic's Messages body without `model`, with `anthropic_version: "vertex-2023-10-16"` (Anthropic's 400 in
 *   Anthropic's shape otherwise), `stream: true` for streamRawPredict; betas in the `anthropic-beta` header
 *   (https://docs.anthropic.com/en/api/claude-on-vertex-ai);
 * - `POST …/publishers/anthropic/models/count-tokens:rawPredict`: Claude's token counter, the model in the body
 *   (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/count-tokens), `{ input_tokens }`;
 * - `POST /v1/projects/{project}/locations/{region}/publishers/google/models/{model}:generateContent|streamGenerateContent`
 *   and express mode's `/v1/publishers/google/models/{model}:…` with an API key (`x-goog-api-key` or `?key=`);
 *   every `usageMetadata` with the `trafficType` Vertex reports: `ON_DEMAND`, or `ON_DEMAND_PRIORITY` / `ON_DEMAND_FLEX`
 *   for a request with `X-Vertex-AI-LLM-Shared-Request-Type: priority` / `flex` (Priority and Flex PayGo:
 *   docs.cloud.google.com/vertex-ai/generative-ai/docs/priority-paygo, …/flex-paygo);
 * - `:countTokens` of Gemini models, Vertex's request (`contents`, `systemInstruction`, `tools`, `generationConfig` at the
 *   top level; a `generateContentRequest` is Google's 400 "Unknown name") → `{ totalTokens, totalBillableCharacters, promptTokensDetails }`;
 * - `:predict` of the text embedding models (embed.ts);
 * - Google's own errors `{error:{code,message,status}}`: 401 UNAUTHENTICATED for a token it did not issue or that
 *   expired or was revoked, 404 NOT_FOUND for another project or region, 403 PERMISSION_DENIED for an
 *   `x-goog-user-project` other than the project, faults as asked.
 * What the models answer comes from the Anthropic and Gemini mocks run inside, so the scenarios are the same as everywhere.
 * @module
 */
import { startAnthropicMock } from '../anthropic'
import { midConversationSystem } from '../anthropic/read'
import { startGeminiMock } from '../gemini'
import type { RecordedRequest } from '../shared/types'
import type { AwsKeys } from './aws-subject'
import { isEmbeddingModel, predictEmbeddings } from './embed'
import type { GoogleMetadataMock } from './metadata'
import { formOf, type ServiceAccountKey, testServiceAccount, tokenResponse } from './oauth'
import { IMPERSONATE_PATH, impersonateResponse, stsResponse, subjectTokenResponse, testWorkload, type Workload } from './sts'
import { type AuthorizedUserKey, refreshResponse, testAuthorizedUser } from './user'

export type VertexFault = { status: number; googleStatus: string; message?: string }

/**
 * `metadata`: a metadata server (metadata.ts) whose tokens are taken as well as the mock's own. `awsKeys`: the AWS keys
 * STS's GetCallerIdentity check knows (an AWS subject token: aws-subject.ts).
 */
export type VertexMockOptions = { project: string; region: string; expressKey: string; metadata?: Pick<GoogleMetadataMock, 'accepts'>; awsKeys?: AwsKeys }

/**
 * The betas Claude's rawPredict takes here: those Vertex is reported to take (its refusals name the others, e.g. Claude
 * Code's `claude-code-20250219`, `oauth-2025-04-20`, `prompt-caching-scope-2026-01-05`, `structured-outputs-2025-11-13`).
 */
const CLAUDE_BETAS = [
	'computer-use-2025-01-24',
	'computer-use-2025-11-24',
	'interleaved-thinking-2025-05-14',
	'context-1m-2025-08-07',
	'context-management-2025-06-27',
	'tool-search-tool-2025-10-19',
	'web-search-2025-03-05',
	'effort-2025-11-24',
]

export type VertexMock = {
	readonly url: string
	/** The service-account key file (JSON) whose tokens the mock takes; its `token_uri` is the mock's `/token`. */
	readonly key: ServiceAccountKey
	readonly requests: RecordedRequest[]
	/** The user credentials (`authorized_user`, its quota project the mock's) whose refresh token the mock takes. */
	readonly user: AuthorizedUserKey
	/** The workload identity pool provider, subject token and impersonable service account the mock knows. */
	readonly workload: Workload
	/** Service-account token requests granted so far. */
	readonly tokenFetches: number
	/** Every request to a token endpoint (`/token`, STS, generateAccessToken, the subject token URL), in order. */
	readonly tokenRequests: Array<{ path: string; headers: Record<string, string>; form?: Record<string, string>; body?: unknown }>
	/** The user's refresh token is revoked: the refresh grant answers `invalid_grant`. */
	userRevoked: boolean
	/** Seconds each new token lives (`expires_in`); default 3600. */
	tokenTtl: number
	/** The token endpoint answers this status (invalid_grant) instead of a token. */
	tokenFault: { status: number; error: string; description: string } | undefined
	/** Each token request waits this long first (to let concurrent calls meet it). */
	tokenDelayMs: number
	faultOnce: VertexFault | undefined
	/** The betas Claude's rawPredict takes; others are 400 "Unexpected value(s) `a`, `b` for the `anthropic-beta` header", named. */
	betas: Set<string>
	/** Each model call waits this long before it is answered (to let a client leave midway through a request's calls). */
	callDelayMs: number
	/** The next `calls` model calls are answered, the one after them gets `fault` (a quota met midway through a request's calls). */
	faultAfter(calls: number, fault: VertexFault): void
	/** Every token issued so far stops working (Vertex answers 401 to it). */
	revokeTokens(): void
	stop(): Promise<void>
}

const INNER_KEY = 'inner-key'

const googleError = (code: number, status: string, message: string) => Response.json({ error: { code, message, status } }, { status: code })
const anthropicError = (message: string) => Response.json({ type: 'error', error: { type: 'invalid_request_error', message } }, { status: 400 })

const UNAUTHENTICATED = () =>
	googleError(
		401,
		'UNAUTHENTICATED',
		'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
	)

const MODEL_PATH = /^\/v1\/(?:projects\/([^/]+)\/locations\/([^/]+)\/)?publishers\/(anthropic|google)\/models\/([^/:]+):([A-Za-z]+)$/

/**
 * Starts the mock on a free port, with a fresh service-account key.
 * @example const v = await startVertexMock({ project: 'proj-1', region: 'us-east5', expressKey: 'AQ.express' })
 */
export async function startVertexMock(opts: VertexMockOptions): Promise<VertexMock> {
	const claude = await startAnthropicMock({ apiKey: INNER_KEY, record: false })
	const gemini = await startGeminiMock({ apiKey: INNER_KEY, record: false })
	const requests: RecordedRequest[] = []
	const tokens = new Map<string, number>()
	let issued = 0
	let tokenTtl = 3600
	let tokenFault: VertexMock['tokenFault']
	let tokenDelayMs = 0
	let faultOnce: VertexFault | undefined
	let betas = new Set(CLAUDE_BETAS)
	let faultLater: { calls: number; fault: VertexFault } | undefined
	let callDelayMs = 0
	let key!: ServiceAccountKey
	let user!: AuthorizedUserKey
	let userRevoked = false
	const workload = testWorkload('123456789012', opts.project)
	const tokenRequests: VertexMock['tokenRequests'] = []
	let minted = 0
	/** A token of `kind`, living `ttl` seconds: Vertex takes it until then (or until revoked). */
	const mint = (kind: 'user' | 'sts' | 'imp', ttl: number) => {
		const token = `ya29.${kind}-${++minted}`
		tokens.set(token, Date.now() + ttl * 1000)
		return token
	}
	const live = (token: string) => (tokens.get(token) ?? 0) >= Date.now()

	async function handle(req: Request): Promise<Response> {
		const url = new URL(req.url)
		const impersonate = IMPERSONATE_PATH.exec(url.pathname)
		const tokenPath = url.pathname === '/token' || url.pathname === '/v1/token' || url.pathname === '/subject-token' || impersonate
		if (tokenPath) {
			const form = url.pathname.endsWith('token') && req.method === 'POST' ? await formOf(req.clone()) : undefined
			const json = impersonate ? await req.clone().json().catch(() => undefined) : undefined
			tokenRequests.push({ path: url.pathname, headers: Object.fromEntries(req.headers), form: form && Object.fromEntries(form), body: json })
		}
		if (url.pathname === '/subject-token') return subjectTokenResponse(req, workload)
		if (impersonate) return impersonateResponse(req, impersonate[1]!, workload, live, () => mint('imp', 3600))
		if (url.pathname === '/v1/token') return stsResponse(await formOf(req), workload, () => ({ token: mint('sts', tokenTtl), expiresIn: tokenTtl }), opts.awsKeys)
		if (url.pathname === '/token') {
			if (tokenDelayMs) await Bun.sleep(tokenDelayMs)
			if (tokenFault) return Response.json({ error: tokenFault.error, error_description: tokenFault.description }, { status: tokenFault.status })
			const form = await formOf(req)
			if (form?.get('grant_type') === 'refresh_token') return refreshResponse(form, user, userRevoked, () => ({ token: mint('user', tokenTtl), expiresIn: tokenTtl }))
			return tokenResponse(form, key, `${origin}/token`, () => {
				const token = `ya29.mock-${++issued}`
				tokens.set(token, Date.now() + tokenTtl * 1000)
				return { token, expiresIn: tokenTtl }
			})
		}
		const text = await req.text()
		let body: unknown
		try {
			body = text ? JSON.parse(text) : undefined
		} catch {
			body = text
		}
		requests.push({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: Object.fromEntries(req.headers), body, text, at: Date.now() })

		const m = MODEL_PATH.exec(url.pathname)
		if (req.method !== 'POST' || !m) return googleError(404, 'NOT_FOUND', 'The requested URL was not found on this server.')
		const [, project, region, publisher, model, method] = m as unknown as [string, string | undefined, string | undefined, string, string, string]
		if (project === undefined) {
			// Express mode: an API key, Gemini models only.
			const k = req.headers.get('x-goog-api-key') ?? url.searchParams.get('key')
			if (k !== opts.expressKey || publisher !== 'google') return UNAUTHENTICATED()
		} else {
			const auth = req.headers.get('authorization') ?? ''
			const bearer = auth.replace(/^Bearer /, '')
			const until = tokens.get(bearer)
			const good = (until !== undefined && until >= Date.now()) || opts.metadata?.accepts(bearer) === true
			if (!auth.startsWith('Bearer ') || !good) return UNAUTHENTICATED()
			const quota = req.headers.get('x-goog-user-project')
			if (quota !== null && quota !== opts.project)
				return googleError(403, 'PERMISSION_DENIED', `Caller does not have required permission to use project ${quota}. Grant the caller the roles/serviceusage.serviceUsageConsumer role, or a custom role with the serviceusage.services.use permission, by visiting https://console.developers.google.com/iam-admin/iam/admin?project=${quota} and then retry.`)
			// User credentials carry no project of their own: Google bills the quota project, which must be said.
			if (bearer.startsWith('ya29.user-') && quota === null)
				return googleError(403, 'PERMISSION_DENIED', 'Your application is authenticating by using local Application Default Credentials. The aiplatform.googleapis.com API requires a quota project, which is not set by default. To learn how to set your quota project, see https://cloud.google.com/docs/authentication/adc-to-set-quota-project .')
			if (project !== opts.project) return googleError(403, 'PERMISSION_DENIED', `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${project}/locations/${region}' (or it may not exist).`)
			if (region !== opts.region) return googleError(404, 'NOT_FOUND', `Publisher Model \`projects/${project}/locations/${region}/publishers/${publisher}/models/${model}\` not found.`)
		}
		// Each publisher has its own models: a Gemini model under anthropic (or the reverse) does not exist.
		const claudeCount = publisher === 'anthropic' && model === 'count-tokens'
		if (!claudeCount && (publisher === 'anthropic') !== model.startsWith('claude-')) return googleError(404, 'NOT_FOUND', `Publisher Model \`projects/${project}/locations/${region}/publishers/${publisher}/models/${model}\` not found.`)
		if (callDelayMs) await Bun.sleep(callDelayMs)
		if (faultLater && faultLater.calls-- === 0) {
			faultOnce = faultLater.fault
			faultLater = undefined
		}
		const f = faultOnce
		faultOnce = undefined
		if (f) return googleError(f.status, f.googleStatus, f.message ?? `${f.googleStatus} from the mock`)
		if (typeof body !== 'object' || body === null || Array.isArray(body)) return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.')
		const b = body as Record<string, unknown>

		if (claudeCount) {
			if (method !== 'rawPredict') return googleError(400, 'INVALID_ARGUMENT', `method ${method} is not supported for this model`)
			if (typeof b.model !== 'string' || !b.model.startsWith('claude-')) return anthropicError('model: Field required')
			if (b.anthropic_version !== undefined && b.anthropic_version !== 'vertex-2023-10-16') return anthropicError('anthropic_version: Input should be \'vertex-2023-10-16\'')
			const { anthropic_version: _v, ...rest } = b
			const up = await fetch(`${claude.url}/v1/messages/count_tokens`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'x-api-key': INNER_KEY, 'anthropic-version': '2023-06-01' },
				body: JSON.stringify({ ...rest, model: (b.model as string).replace(/@.*$/, '') }),
			})
			return new Response(up.body, { status: up.status, headers: { 'content-type': 'application/json' } })
		}
		if (publisher === 'anthropic') {
			if (method !== 'rawPredict' && method !== 'streamRawPredict') return googleError(400, 'INVALID_ARGUMENT', `method ${method} is not supported for this model`)
			if ('model' in b) return anthropicError('model: Extra inputs are not permitted')
			if (b.anthropic_version !== 'vertex-2023-10-16') return anthropicError('anthropic_version: Input should be \'vertex-2023-10-16\'')
			if ((method === 'streamRawPredict') !== (b.stream === true)) return anthropicError('stream: streamRawPredict needs "stream": true, rawPredict none')
			const { anthropic_version: _v, ...rest } = b
			const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': INNER_KEY, 'anthropic-version': '2023-06-01' }
			const beta = req.headers.get('anthropic-beta')
			const unexpected = (beta ?? '').split(',').map((x) => x.trim()).filter((x) => x && !betas.has(x))
			if (unexpected.length)
				return anthropicError(`Unexpected value(s) ${unexpected.map((x) => `\`${x}\``).join(', ')} for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`)
			const midSystem = midConversationSystem(b.messages, (beta ?? '').split(',').map((x) => x.trim()))
			if (midSystem !== undefined) return anthropicError(`messages.${midSystem}.role: Input should be 'user' or 'assistant'`)
			if (beta) headers['anthropic-beta'] = beta
			// `claude-sonnet-4-5@20250929` → the Anthropic mock's `claude-sonnet-4-5`.
			const up = await fetch(`${claude.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify({ ...rest, model: model.replace(/@.*$/, '') }) })
			return new Response(up.body, { status: up.status, headers: { 'content-type': up.headers.get('content-type') ?? 'application/json' } })
		}
		if (method === 'predict') return isEmbeddingModel(model) ? predictEmbeddings(model, b) : googleError(400, 'INVALID_ARGUMENT', `method predict is not supported for ${model}`)
		if (method === 'countTokens') return countTokens(model, b)
		if (method !== 'generateContent' && method !== 'streamGenerateContent') return googleError(400, 'INVALID_ARGUMENT', `method ${method} is not supported`)
		const sse = method === 'streamGenerateContent' && url.searchParams.get('alt') === 'sse'
		const up = await fetch(`${gemini.url}/v1beta/models/${model}:${method}${sse ? '?alt=sse' : ''}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': INNER_KEY }, body: text })
		const type = up.headers.get('content-type') ?? 'application/json'
		if (!up.ok) return new Response(up.body, { status: up.status, headers: { 'content-type': type } })
		return new Response(withTrafficType(await up.text(), trafficTypeOf(req.headers)), { status: up.status, headers: { 'content-type': type } })
	}

	/** Vertex's countTokens request, counted by the Gemini mock as the whole request it is. */
	async function countTokens(model: string, b: Record<string, unknown>): Promise<Response> {
		const unknown = Object.keys(b).find((k) => !['contents', 'systemInstruction', 'tools', 'generationConfig', 'model', 'instances'].includes(k))
		if (unknown) return googleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`)
		const { model: _m, instances: _i, ...request } = b
		const up = await fetch(`${gemini.url}/v1beta/models/${model}:countTokens`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'x-goog-api-key': INNER_KEY },
			body: JSON.stringify({ generateContentRequest: { model: `models/${model}`, contents: [], ...request } }),
		})
		if (!up.ok) return new Response(up.body, { status: up.status, headers: { 'content-type': 'application/json' } })
		const counted = (await up.json()) as Record<string, unknown>
		// Billable characters: the text parts' characters, whitespace not counted (as Vertex bills characters).
		const parts = ((request.contents ?? []) as Array<{ parts?: Array<{ text?: unknown }> }>).flatMap((c) => c.parts ?? [])
		const chars = parts.reduce((n, p) => n + (typeof p.text === 'string' ? p.text.replace(/\s/g, '').length : 0), 0)
		return Response.json({ ...counted, totalBillableCharacters: chars })
	}

	const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, development: false, fetch: handle })
	const origin = `http://127.0.0.1:${server.port}`
	key = await testServiceAccount(`${origin}/token`, opts.project)
	user = testAuthorizedUser(`${origin}/token`, opts.project)
	return {
		url: origin,
		key,
		user,
		workload,
		tokenRequests,
		get userRevoked() {
			return userRevoked
		},
		set userRevoked(v) {
			userRevoked = v
		},
		requests,
		get tokenFetches() {
			return issued
		},
		get tokenTtl() {
			return tokenTtl
		},
		set tokenTtl(v) {
			tokenTtl = v
		},
		get tokenFault() {
			return tokenFault
		},
		set tokenFault(v) {
			tokenFault = v
		},
		get tokenDelayMs() {
			return tokenDelayMs
		},
		set tokenDelayMs(v) {
			tokenDelayMs = v
		},
		get faultOnce() {
			return faultOnce
		},
		get betas() {
			return betas
		},
		set betas(v) {
			betas = v
		},
		set faultOnce(v) {
			faultOnce = v
		},
		get callDelayMs() {
			return callDelayMs
		},
		set callDelayMs(v) {
			callDelayMs = v
		},
		faultAfter(calls, fault) {
			faultLater = { calls, fault }
		},
		revokeTokens() {
			tokens.clear()
		},
		async stop() {
			await server.stop(true)
			await Promise.all([claude.stop(), gemini.stop()])
		},
	}
}

/** The `trafficType` of an answer to a request with these headers (Priority and Flex PayGo are asked by header). */
function trafficTypeOf(headers: Headers): string {
	const shared = headers.get('x-vertex-ai-llm-shared-request-type')
	return shared === 'priority' ? 'ON_DEMAND_PRIORITY' : shared === 'flex' ? 'ON_DEMAND_FLEX' : 'ON_DEMAND'
}

/** The Gemini mock's answer (a JSON body, an array of chunks or SSE) with `trafficType` in every `usageMetadata`. */
const withTrafficType = (text: string, traffic: string): string => text.replaceAll('"usageMetadata":{', `"usageMetadata":{"trafficType":${JSON.stringify(traffic)},`)
