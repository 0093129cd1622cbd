/**
 * Google service-account credentials, as Vertex AI takes them: the key file's JSON (`client_email`, `private_key` as a
 * PKCS#8 PEM, `token_uri`, `project_id`) signs a JWT with RS256, which `token_uri` exchanges for an OAuth access token
 * (https://developers.google.com/identity/protocols/oauth2/service-account#httprest). Signed with WebCrypto; no Google SDK.
 * Tokens are cached per channel until shortly before they expire, and fetched once for the calls that wait on them.
 * @module
 */
import { GatewayError } from '../../core/errors'

export type ServiceAccount = { clientEmail: string; privateKey: string; tokenUri: string; projectId?: string }

/** The scope of every Vertex AI call (https://cloud.google.com/vertex-ai/docs/reference/rest). */
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform'
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token'
/** Google's tokens live an hour at most; the assertion asks for that. */
const ASSERTION_SECONDS = 3600
/**
 * A token is refreshed this long before Google says it expires (google-auth-library's eager refresh is 5 minutes):
 * a call that starts with it must not meet its end upstream.
 */
export const REFRESH_MARGIN_MS = 5 * 60_000
/** A token endpoint that does not answer within this fails the call (its own timeouts do not cover this fetch). */
const TOKEN_TIMEOUT_MS = 30_000

/**
 * The service account of a channel key, or undefined when the key is not a service-account JSON (a Vertex express
 * mode API key). A JSON object missing a member is a configuration error, said without its contents.
 * @example serviceAccountOf('{"type":"service_account","client_email":"a@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----…"}')
 */
export function serviceAccountOf(key: string): ServiceAccount | undefined {
	if (!key.trimStart().startsWith('{')) return undefined
	let o: Record<string, unknown>
	try {
		o = JSON.parse(key) as Record<string, unknown>
	} catch {
		throw misconfigured('the key starts like JSON but is not valid JSON')
	}
	if (typeof o.client_email !== 'string' || typeof o.private_key !== 'string' || !o.private_key.includes('PRIVATE KEY'))
		throw misconfigured('a service-account key needs `client_email` and `private_key` (the JSON key file Google Cloud gives)')
	const tokenUri = typeof o.token_uri === 'string' && o.token_uri ? o.token_uri : DEFAULT_TOKEN_URI
	return { clientEmail: o.client_email, privateKey: o.private_key, tokenUri, projectId: typeof o.project_id === 'string' ? o.project_id : undefined }
}

const misconfigured = (why: string) => new GatewayError('unavailable', `vertex channel key: ${why}`, { retryable: true, code: 'channel_misconfigured' })

const b64url = (b: Uint8Array | string) => Buffer.from(b).toString('base64url')

/** The PEM's DER bytes, as WebCrypto imports PKCS#8. */
function pkcs8Der(pem: string): Uint8Array<ArrayBuffer> {
	const body = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\\n/g, '').replace(/\s+/g, '')
	return new Uint8Array(Buffer.from(body, 'base64'))
}

export async function importKey(pem: string): Promise<CryptoKey> {
	try {
		return await crypto.subtle.importKey('pkcs8', pkcs8Der(pem), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign'])
	} catch {
		// WebCrypto's reason names nothing of the key, but is said in our words anyway.
		throw misconfigured('`private_key` is not an RSA private key in PKCS#8 PEM')
	}
}

/**
 * The signed assertion of the JWT bearer grant (RFC 7523): issued by the account, for the token endpoint, an hour long.
 * @example await signedAssertion(account, key, 1700000000) // 'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.…'
 */
export async function signedAssertion(sa: ServiceAccount, key: CryptoKey, nowSeconds: number): Promise<string> {
	const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))
	const claims = b64url(JSON.stringify({ iss: sa.clientEmail, scope: SCOPE, aud: sa.tokenUri, iat: nowSeconds, exp: nowSeconds + ASSERTION_SECONDS }))
	const signed = `${head}.${claims}`
	const sig = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, new TextEncoder().encode(signed))
	return `${signed}.${b64url(new Uint8Array(sig))}`
}

type Cached = {
	/** The channel key these belong to: an edited key starts over. */
	key: string
	signer?: Promise<CryptoKey>
	token?: string
	/** performance.now() past which the token is not used. */
	freshUntil: number
	pending?: Promise<string>
}

/** Channel id → its token. One entry per channel for the life of the process (channels are few). */
const cache = new Map<number, Cached>()

/**
 * A bearer token for the channel's service account: the cached one while fresh, else one fetch shared by every
 * call that asks meanwhile. Throws GatewayError: `upstream_auth` when the token endpoint refuses the account (its
 * `error` and `error_description` in the detail, never the key), a retryable upstream error when it fails otherwise.
 */
export function accessToken(channelId: number, channelKey: string, sa: ServiceAccount): Promise<string> {
	let c = cache.get(channelId)
	if (!c || c.key !== channelKey) {
		c = { key: channelKey, freshUntil: 0 }
		cache.set(channelId, c)
	}
	if (c.token && performance.now() < c.freshUntil) return Promise.resolve(c.token)
	if (c.pending) return c.pending
	const entry = c
	if (!entry.signer) {
		const signer = importKey(sa.privateKey)
		// A key that does not import is tried again next time (the channel may be edited meanwhile).
		signer.catch(() => {
			if (entry.signer === signer) entry.signer = undefined
		})
		entry.signer = signer
	}
	entry.pending = fetchToken(sa, entry.signer)
		.then(({ token, expiresIn }) => {
			entry.token = token
			entry.freshUntil = performance.now() + expiresIn * 1000 - REFRESH_MARGIN_MS
			return token
		})
		.finally(() => {
			entry.pending = undefined
		})
	return entry.pending
}

/**
 * Forgets the channel's token when it is `token` (Vertex refused it: revoked, or expired early), so the next call
 * fetches another; true when it was the cached one (a newer one already replaced it otherwise).
 */
export function dropToken(channelId: number, token: string): boolean {
	const c = cache.get(channelId)
	if (!c || c.token !== token) return false
	c.token = undefined
	c.freshUntil = 0
	return true
}

async function fetchToken(sa: ServiceAccount, signer: Promise<CryptoKey>): Promise<{ token: string; expiresIn: number }> {
	const assertion = await signedAssertion(sa, await signer, Math.floor(Date.now() / 1000))
	let res: Response
	try {
		res = await fetch(sa.tokenUri, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
			signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
			redirect: 'manual',
		})
	} catch (e) {
		throw new GatewayError('upstream', 'cannot reach the upstream provider', { retryable: true, code: 'upstream_unreachable', detail: `vertex token endpoint: ${(e as Error).message ?? e}` })
	}
	const text = await res.text().catch(() => '')
	let said: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {}
	try {
		said = JSON.parse(text)
	} catch {
		// not JSON: the status speaks
	}
	if (!res.ok) {
		// Only the OAuth error's own two members: the endpoint's other words are not repeated anywhere.
		const why = [said.error, said.error_description].filter((x) => typeof x === 'string').join(': ') || `HTTP ${res.status}`
		const detail = `vertex token endpoint refused the service account ${sa.clientEmail}: ${why}`.slice(0, 500)
		// 400 invalid_grant / 401 invalid_client: the account, key or clock is wrong; no call on this channel can work.
		if (res.status === 400 || res.status === 401 || res.status === 403)
			throw new GatewayError('upstream', "the upstream provider refused the gateway's credentials for this model", { retryable: true, code: 'upstream_auth', detail })
		throw new GatewayError('upstream', `the upstream provider failed (HTTP ${res.status})`, { retryable: true, code: 'upstream_error', detail })
	}
	if (typeof said.access_token !== 'string' || !said.access_token)
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed', detail: 'vertex token endpoint answered without access_token' })
	const expiresIn = typeof said.expires_in === 'number' && said.expires_in > 0 ? said.expires_in : ASSERTION_SECONDS
	return { token: said.access_token, expiresIn }
}
