/**
 * Mock Microsoft Entra ID authority (an `authority_host`): the tenant's token endpoint
 * `POST /{tenant}/oauth2/v2.0/token` with the client credentials grant
 * (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow): a form body of
 * `grant_type=client_credentials`, `client_id`, `client_secret` and `scope` (Azure OpenAI's
 * `https://cognitiveservices.azure.com/.default`), answered `{token_type: "Bearer", expires_in, ext_expires_in,
 * access_token}`. Refusals are Entra's `{error, error_description: "AADSTS…", error_codes, timestamp, trace_id,
 * correlation_id}` (https://learn.microsoft.com/entra/identity-platform/reference-error-codes): 400 `invalid_request`
 * for an unknown tenant, 400 `unauthorized_client` for an unknown application, 401 `invalid_client` for a wrong secret,
 * 400 `invalid_scope`, 400 `unsupported_grant_type`. Issued tokens live `tokenTtl` seconds; the Azure mock
 * (index.ts) takes them as `Authorization: Bearer …` while `accepts` says so.
 * @module
 */

export type ServicePrincipal = { tenantId: string; clientId: string; clientSecret: string }

export type EntraMock = {
	/** The authority host, `http://127.0.0.1:PORT` (a channel's `settings.authority_host`). */
	readonly url: string
	readonly principal: ServicePrincipal
	/** The key of an Azure channel for this service principal: `{"tenant_id","client_id","client_secret"}`. */
	readonly channelKey: string
	/** Tokens issued so far. */
	readonly tokenFetches: number
	/** Every token request's form, as received. */
	readonly tokenRequests: Array<{ path: string; contentType: string; form: Record<string, string> }>
	/** Seconds each new token lives (`expires_in`); default 3600. */
	tokenTtl: number
	/** Each token request waits this long first (to let concurrent calls meet it). */
	tokenDelayMs: number
	/** Every token request is refused as a wrong secret (401 `invalid_client`), whatever it sends: a secret revoked in the tenant. */
	refuseAll: boolean
	/** Whether Azure takes `token` (issued here, not expired, not revoked). */
	accepts(token: string): boolean
	/** Every token issued so far stops working (Azure answers 401 to it). */
	revokeTokens(): void
	stop(): Promise<void>
}

export const AZURE_SCOPE = 'https://cognitiveservices.azure.com/.default'

/** Entra's error body, with its AADSTS code first in the description and the ids every refusal carries. */
function refuse(status: number, error: string, code: number, description: string): Response {
	const trace = crypto.randomUUID()
	const correlation = crypto.randomUUID()
	const timestamp = new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z')
	return Response.json(
		{
			error,
			error_description: `AADSTS${code}: ${description}\r\nTrace ID: ${trace}\r\nCorrelation ID: ${correlation}\r\nTimestamp: ${timestamp}`,
			error_codes: [code],
			timestamp,
			trace_id: trace,
			correlation_id: correlation,
			error_uri: `https://login.microsoftonline.com/error?code=${code}`,
		},
		{ status },
	)
}

/**
 * Starts an authority on a free port for one service principal.
 * @example const entra = startEntraMock({ tenantId: 'contoso.onmicrosoft.com', clientId: '11111111-…', clientSecret: 'Q~secret' })
 */
export function startEntraMock(principal: ServicePrincipal): EntraMock {
	const tokens = new Map<string, number>()
	const tokenRequests: EntraMock['tokenRequests'] = []
	let issued = 0
	let tokenTtl = 3600
	let tokenDelayMs = 0
	let refuseAll = false

	async function handle(req: Request): Promise<Response> {
		const url = new URL(req.url)
		const m = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname)
		if (!m || req.method !== 'POST') return new Response('Not found', { status: 404 })
		const contentType = req.headers.get('content-type') ?? ''
		const form = Object.fromEntries(new URLSearchParams(await req.text()))
		tokenRequests.push({ path: url.pathname, contentType, form })
		if (tokenDelayMs) await Bun.sleep(tokenDelayMs)
		if (!contentType.startsWith('application/x-www-form-urlencoded'))
			return refuse(400, 'invalid_request', 900144, "The request body must contain the following parameter: 'grant_type'.")
		if (decodeURIComponent(m[1]!) !== principal.tenantId)
			return refuse(400, 'invalid_request', 90002, `Tenant '${decodeURIComponent(m[1]!)}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`)
		if (form.grant_type !== 'client_credentials') return refuse(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.')
		if (form.client_id !== principal.clientId)
			return refuse(
				400,
				'unauthorized_client',
				700016,
				`Application with identifier '${form.client_id}' was not found in the directory '${principal.tenantId}'. This can happen if the application has not been installed by the administrator of the tenant.`,
			)
		if (form.client_secret !== principal.clientSecret || refuseAll)
			return refuse(
				401,
				'invalid_client',
				7000215,
				`Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${principal.clientId}'.`,
			)
		if (form.scope !== AZURE_SCOPE) return refuse(400, 'invalid_scope', 70011, `The provided value for the input parameter 'scope' is not valid. The scope ${form.scope ?? ''} is not valid.`)
		const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.mock-entra-${++issued}.sig`
		tokens.set(token, Date.now() + tokenTtl * 1000)
		return Response.json({ token_type: 'Bearer', expires_in: tokenTtl, ext_expires_in: tokenTtl, access_token: token })
	}

	const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, development: false, fetch: handle })
	const channelKey = JSON.stringify({ tenant_id: principal.tenantId, client_id: principal.clientId, client_secret: principal.clientSecret })
	return {
		url: `http://127.0.0.1:${server.port}`,
		principal,
		channelKey,
		tokenRequests,
		get tokenFetches() {
			return issued
		},
		get tokenTtl() {
			return tokenTtl
		},
		set tokenTtl(v) {
			tokenTtl = v
		},
		get tokenDelayMs() {
			return tokenDelayMs
		},
		set tokenDelayMs(v) {
			tokenDelayMs = v
		},
		get refuseAll() {
			return refuseAll
		},
		set refuseAll(v) {
			refuseAll = v
		},
		accepts(token) {
			const until = tokens.get(token)
			return until !== undefined && until > Date.now()
		},
		revokeTokens() {
			tokens.clear()
		},
		async stop() {
			await server.stop(true)
		},
	}
}
