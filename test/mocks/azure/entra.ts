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
 *
 * Instead of a secret, the application may prove itself with a client assertion (`client_assertion_type`
 * `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`, `client_assertion`), checked as Entra documents:
 * - signed by one of the application's registered `certificates`
 *   (https://learn.microsoft.com/entra/identity-platform/certificate-credentials): header `alg` PS256 with `x5t#S256`
 *   (or the older RS256 with SHA-1 `x5t`) naming the certificate, the signature verified with its public key (401
 *   `invalid_client` AADSTS700027 otherwise), `aud` the token endpoint (AADSTS700023), `iss` and `sub` the client id
 *   (AADSTS700021), a `jti`, and `nbf` ≤ now < `exp` (AADSTS700024); an `x5c` must start with that certificate;
 * - or a token of the `federation` issuer (workload identity,
 *   https://learn.microsoft.com/entra/workload-id/workload-identity-federation): RS256 by the issuer's key, `iss`,
 *   `sub` and `aud` (`api://AzureADTokenExchange`) those of the federated credential (AADSTS700211, 700213, 700212),
 *   not expired (AADSTS700024). `federatedToken()` issues such tokens, as a cluster's OIDC issuer would.
 * @module
 */
import { constants, generateKeyPairSync, type KeyObject, sign, verify, X509Certificate } from 'node:crypto'

export type ServicePrincipal = {
	tenantId: string
	clientId: string
	/** The application's secret; none when it has only certificates or a federated credential. */
	clientSecret?: string
	/** PEMs of the certificates registered on the application. */
	certificates?: string[]
	/** A federated credential: the `sub` it trusts, of the mock's own issuer. */
	federatedSubject?: string
}

export const FEDERATED_ISSUER = 'https://oidc.prod-aks.azure.com/00000000-mock-issuer/'
export const FEDERATED_AUDIENCE = 'api://AzureADTokenExchange'
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

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
	/** Every client assertion received, decoded (whether taken or not). */
	readonly assertions: Array<{ header: Record<string, any>; claims: Record<string, any> }>
	/** A token of the federated issuer for the principal's `federatedSubject` (or `subject`), living `ttl` seconds (default 3600). */
	federatedToken(opts?: { ttl?: number; subject?: string; audience?: string }): string
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

const ISSUER_KID = 'mock-issuer-key-1'
const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
/** The host the client called (the assertion's `aud` names it). */
const origin = (req: Request) => new URL(req.url).origin

/** A registered certificate: its thumbprints (SHA-256 and SHA-1, base64url), DER (base64) and public key. */
function registration(pem: string): { sha256: string; sha1: string; der: string; publicKey: KeyObject } {
	const cert = new X509Certificate(pem)
	return {
		sha256: new Bun.CryptoHasher('sha256').update(cert.raw).digest('base64url'),
		sha1: new Bun.CryptoHasher('sha1').update(cert.raw).digest('base64url'),
		der: cert.raw.toString('base64'),
		publicKey: cert.publicKey,
	}
}

function decodeJwt(token: string): { header: Record<string, any>; claims: Record<string, any>; signed: string; signature: Buffer } | undefined {
	const parts = token.split('.')
	if (parts.length !== 3) return undefined
	try {
		return { header: JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()), claims: JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()), signed: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2]!, 'base64url') }
	} catch {
		return undefined
	}
}

/**
 * Starts an authority on a free port for one service principal.
 * @example const entra = startEntraMock({ tenantId: 'contoso.onmicrosoft.com', clientId: '11111111-…', clientSecret: 'Q~secret' })
 */
export function startEntraMock(principal: ServicePrincipal): EntraMock {
	const tokens = new Map<string, number>()
	const tokenRequests: EntraMock['tokenRequests'] = []
	const assertions: EntraMock['assertions'] = []
	const registered = (principal.certificates ?? []).map(registration)
	const issuer = principal.federatedSubject ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : undefined
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
		const refused = form.client_assertion !== undefined || form.client_assertion_type !== undefined ? checkAssertion(form, `${origin(req)}${url.pathname}`) : checkSecret(form)
		if (refused) return refused
		if (refuseAll) return refuse(401, 'invalid_client', 7000215, `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${principal.clientId}'.`)
		if (form.scope !== AZURE_SCOPE) return refuse(400, 'invalid_scope', 70011, `The provided value for the input parameter 'scope' is not valid. The scope ${form.scope ?? ''} is not valid.`)
		const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.mock-entra-${++issued}.sig`
		tokens.set(token, Date.now() + tokenTtl * 1000)
		return Response.json({ token_type: 'Bearer', expires_in: tokenTtl, ext_expires_in: tokenTtl, access_token: token })
	}

	function checkSecret(form: Record<string, string>): Response | undefined {
		if (form.client_secret === undefined)
			return refuse(401, 'invalid_client', 7000218, "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.")
		if (form.client_secret !== principal.clientSecret)
			return refuse(
				401,
				'invalid_client',
				7000215,
				`Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${principal.clientId}'.`,
			)
		return undefined
	}

	function checkAssertion(form: Record<string, string>, endpoint: string): Response | undefined {
		if (form.client_secret !== undefined) return refuse(400, 'invalid_request', 90015, 'Requested query string is too long or contains both a client secret and a client assertion.')
		if (form.client_assertion_type !== ASSERTION_TYPE) return refuse(400, 'invalid_request', 50027, "Invalid 'client_assertion_type'.")
		const jwt = decodeJwt(form.client_assertion ?? '')
		if (!jwt) return refuse(400, 'invalid_request', 50027, 'JWT token is invalid or malformed.')
		assertions.push({ header: jwt.header, claims: jwt.claims })
		const now = Math.floor(Date.now() / 1000)
		const c = jwt.claims
		if (jwt.header['x5t#S256'] !== undefined || jwt.header.x5t !== undefined) {
			const cert = registered.find((r) => (jwt.header['x5t#S256'] !== undefined ? r.sha256 === jwt.header['x5t#S256'] : r.sha1 === jwt.header.x5t))
			if (!cert) return refuse(401, 'invalid_client', 700027, `The certificate with identifier used to sign the client assertion is not registered on application. [Reason - The key was not found., Thumbprint of key used by client: '${jwt.header['x5t#S256'] ?? jwt.header.x5t}']`)
			const pss = jwt.header.alg === 'PS256' && jwt.header['x5t#S256'] !== undefined
			const rsa = jwt.header.alg === 'RS256'
			const key = pss ? { key: cert.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : cert.publicKey
			if ((!pss && !rsa) || !verify('sha256', Buffer.from(jwt.signed), key, jwt.signature)) return refuse(401, 'invalid_client', 700027, 'Client assertion failed signature validation.')
			if (jwt.header.x5c !== undefined && (!Array.isArray(jwt.header.x5c) || jwt.header.x5c[0] !== cert.der)) return refuse(401, 'invalid_client', 700027, 'Client assertion contains an invalid x5c.')
			if (c.aud !== endpoint) return refuse(401, 'invalid_client', 700023, `Client assertion audience claim does not match Realm issuer. Review the documentation at https://learn.microsoft.com/entra/identity-platform/certificate-credentials .`)
			if (c.iss !== principal.clientId || c.sub !== principal.clientId || form.client_id !== principal.clientId)
				return refuse(401, 'invalid_client', 700021, "Client assertion application identifier doesn't match 'client_id' parameter.")
			if (typeof c.jti !== 'string' || !c.jti) return refuse(400, 'invalid_request', 50027, 'JWT token is invalid or malformed.')
			if (!(typeof c.nbf === 'number' && typeof c.exp === 'number' && c.nbf <= now + 300 && now < c.exp))
				return refuse(401, 'invalid_client', 700024, `Client assertion is not within its valid time range. Current time: ${new Date().toISOString()}, assertion valid to: ${c.exp}.`)
			return undefined
		}
		if (!issuer || jwt.header.alg !== 'RS256' || jwt.header.kid !== ISSUER_KID || !verify('sha256', Buffer.from(jwt.signed), issuer.publicKey, jwt.signature))
			return refuse(401, 'invalid_client', 700027, 'Client assertion failed signature validation.')
		if (c.iss !== FEDERATED_ISSUER) return refuse(400, 'invalid_request', 700211, `No matching federated identity record found for presented assertion issuer '${c.iss}'.`)
		if (c.sub !== principal.federatedSubject) return refuse(400, 'invalid_request', 700213, `No matching federated identity record found for presented assertion subject '${c.sub}'.`)
		if (!(Array.isArray(c.aud) ? c.aud : [c.aud]).includes(FEDERATED_AUDIENCE)) return refuse(400, 'invalid_request', 700212, 'No matching federated identity record found for presented assertion audience.')
		if (!(typeof c.exp === 'number' && now < c.exp)) return refuse(400, 'invalid_request', 700024, `Client assertion is not within its valid time range. Current time: ${new Date().toISOString()}, assertion valid to: ${c.exp}.`)
		return undefined
	}

	const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, development: false, fetch: handle })
	const channelKey = JSON.stringify({ tenant_id: principal.tenantId, client_id: principal.clientId, client_secret: principal.clientSecret })
	return {
		url: `http://127.0.0.1:${server.port}`,
		principal,
		channelKey,
		tokenRequests,
		assertions,
		federatedToken(opts = {}) {
			if (!issuer) throw new Error('startEntraMock: no federatedSubject, so no issuer')
			const now = Math.floor(Date.now() / 1000)
			const claims = { aud: [opts.audience ?? FEDERATED_AUDIENCE], iss: FEDERATED_ISSUER, sub: opts.subject ?? principal.federatedSubject, iat: now, nbf: now, exp: now + (opts.ttl ?? 3600), jti: crypto.randomUUID() }
			const signed = `${b64url({ alg: 'RS256', kid: ISSUER_KID, typ: 'JWT' })}.${b64url(claims)}`
			return `${signed}.${sign('sha256', Buffer.from(signed), issuer.privateKey).toString('base64url')}`
		},
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
