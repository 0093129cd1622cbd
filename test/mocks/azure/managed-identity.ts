/**
 * Mock Azure managed identity endpoints:
 * - the instance metadata service (https://learn.microsoft.com/entra/identity/managed-identities-azure-resources/how-to-use-vm-token#get-a-token-using-http):
 *   `GET /metadata/identity/oauth2/token?api-version=2018-02-01&resource=…[&client_id=…]` with `Metadata: true`,
 *   answered `{access_token, refresh_token: "", expires_in, expires_on, not_before, resource, token_type}` (numbers as
 *   strings); without the header 400 `invalid_request` "Required metadata header not specified", an unknown `client_id`
 *   400 `invalid_request` "Identity not found";
 * - App Service's identity endpoint (https://learn.microsoft.com/azure/app-service/overview-managed-identity#rest-endpoint-reference):
 *   `GET /msi/token?api-version=2019-08-01&resource=…[&client_id=…]` with `X-IDENTITY-HEADER`, answered
 *   `{access_token, expires_on, resource, token_type, client_id}`; a wrong header 401.
 * Tokens live `ttl` seconds, for the resource asked; the Azure mock takes those for Azure OpenAI's while `accepts` says so.
 * @module
 */

export type ManagedIdentityMock = {
	/** The IMDS host (`AZURE_POD_IDENTITY_AUTHORITY_HOST`), also App Service's endpoint's origin. */
	readonly url: string
	/** App Service's `IDENTITY_ENDPOINT`. */
	readonly identityEndpoint: string
	/** App Service's `IDENTITY_HEADER`. */
	readonly identityHeader: string
	/** The system-assigned identity's client id; `userAssigned` are the others the resource has. */
	readonly systemClientId: string
	readonly tokenFetches: number
	readonly requests: Array<{ path: string; query: Record<string, string>; headers: Record<string, string> }>
	ttl: number
	delayMs: number
	accepts(token: string): boolean
	/** The client id a token was issued for. */
	clientOf(token: string): string | undefined
	revokeTokens(): void
	stop(): Promise<void>
}

export const COGNITIVE_RESOURCE = 'https://cognitiveservices.azure.com'

const refuse = (status: number, error: string, description: string) => Response.json({ error, error_description: description }, { status })

/** @example const mi = startManagedIdentityMock(['7e2b…']); process.env.AZURE_POD_IDENTITY_AUTHORITY_HOST = mi.url */
export function startManagedIdentityMock(userAssigned: string[]): ManagedIdentityMock {
	const tokens = new Map<string, { until: number; resource: string; clientId: string }>()
	const requests: ManagedIdentityMock['requests'] = []
	const systemClientId = crypto.randomUUID()
	const identityHeader = `mock-identity-header-${crypto.randomUUID()}`
	let issued = 0

	async function handle(req: Request): Promise<Response> {
		const url = new URL(req.url)
		const query = Object.fromEntries(url.searchParams)
		requests.push({ path: url.pathname, query, headers: Object.fromEntries(['metadata', 'x-identity-header'].filter((k) => req.headers.has(k)).map((k) => [k, req.headers.get(k)!])) })
		const appService = url.pathname === '/msi/token'
		if (!appService && url.pathname !== '/metadata/identity/oauth2/token') return new Response('Not found', { status: 404 })
		if (appService) {
			if (req.headers.get('x-identity-header') !== identityHeader) return refuse(401, 'unauthorized', 'Unauthorized')
			if (query['api-version'] !== '2019-08-01') return refuse(400, 'invalid_request', 'Unsupported api-version')
		} else {
			if (req.headers.get('metadata') !== 'true') return refuse(400, 'invalid_request', 'Required metadata header not specified')
			if (query['api-version'] !== '2018-02-01') return refuse(400, 'invalid_request', 'Required query variable api-version is missing or invalid')
		}
		if (!query.resource) return refuse(400, 'invalid_request', 'Required audience variable missing')
		const clientId = query.client_id ?? systemClientId
		if (query.client_id !== undefined && !userAssigned.includes(query.client_id)) return refuse(400, 'invalid_request', 'Identity not found')
		if (mock.delayMs) await Bun.sleep(mock.delayMs)
		const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.mock-mi-${++issued}.sig`
		const now = Math.floor(Date.now() / 1000)
		tokens.set(token, { until: Date.now() + mock.ttl * 1000, resource: query.resource, clientId })
		if (appService) return Response.json({ access_token: token, expires_on: String(now + mock.ttl), resource: query.resource, token_type: 'Bearer', client_id: clientId })
		return Response.json({ access_token: token, refresh_token: '', expires_in: String(mock.ttl), expires_on: String(now + mock.ttl), not_before: String(now), resource: query.resource, token_type: 'Bearer' })
	}

	const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, development: false, fetch: handle })
	const url = `http://127.0.0.1:${server.port}`
	// The knobs a test turns (`mock.ttl = 1`) are the object's own members, which the handlers read.
	const mock: ManagedIdentityMock = {
		ttl: 86399,
		delayMs: 0,
		url,
		identityEndpoint: `${url}/msi/token`,
		identityHeader,
		systemClientId,
		requests,
		get tokenFetches() {
			return issued
		},
		accepts(token) {
			const t = tokens.get(token)
			return t !== undefined && t.until > Date.now() && t.resource === COGNITIVE_RESOURCE
		},
		clientOf: (token) => tokens.get(token)?.clientId,
		revokeTokens() {
			tokens.clear()
		},
		async stop() {
			await server.stop(true)
		},
	}
	return mock
}
