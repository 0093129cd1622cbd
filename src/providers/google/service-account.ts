/**
 * Google service-account credentials, as Vertex AI takes them: the key file's JSON (`client_email`, `private_key` as a
 * PKCS#8 PEM, `token_uri`, `project_id`) signs a JWT with RS256, which `token_uri` exchanges for an OAuth access token
 * (https://developers.google.com/identity/protocols/oauth2/service-account#httprest). Signed with WebCrypto; no Google SDK.
 * Tokens are cached per channel until shortly before they expire, and fetched once for the calls that wait on them.
 * @module
 */
import { type IssuedToken, TokenCache } from '../cached-token'
import { requestToken } from '../token-endpoint'
import { type GoogleCredential, GOOGLE_TOKEN_URI, misconfigured, optionalString, VERTEX_SCOPE } from './credential-json'

export type ServiceAccount = { clientEmail: string; privateKey: string; tokenUri: string; projectId?: string }

/** Google's tokens live an hour at most; the assertion asks for that. */
const ASSERTION_SECONDS = 3600

/**
 * The service account of a key file's JSON (credentials.ts has parsed it). A missing member is a configuration
 * error, said without the key's contents.
 * @example serviceAccountOf({ type: 'service_account', client_email: 'a@p.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----…' })
 */
export function serviceAccountOf(o: Record<string, unknown>): ServiceAccount {
	if (typeof o.client_email !== 'string' || typeof o.private_key !== 'string' || !o.private_key.includes('PRIVATE KEY'))
		throw misconfigured('a service-account key needs `client_email` and `private_key` (the JSON key file Google Cloud gives)')
	return { clientEmail: o.client_email, privateKey: o.private_key, tokenUri: optionalString(o, 'token_uri') ?? GOOGLE_TOKEN_URI, projectId: optionalString(o, 'project_id') }
}

/** The service account as a channel's credential: its tokens, its project, its private key checked at save time. */
export const serviceAccountCredential = (sa: ServiceAccount): GoogleCredential => ({
	kind: 'the service-account key',
	projectId: sa.projectId,
	projectField: 'project_id',
	token: (channelId, channelKey, signal) => accessToken(channelId, channelKey, sa, signal),
	drop: (channelId, token) => dropToken(channelId, token),
	check: async () => {
		await importKey(sa.privateKey)
	},
})

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
	const claims = b64url(JSON.stringify({ iss: sa.clientEmail, scope: VERTEX_SCOPE, aud: sa.tokenUri, iat: nowSeconds, exp: nowSeconds + ASSERTION_SECONDS }))
	const signed = `${head}.${claims}`
	const sig = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, new TextEncoder().encode(signed))
	return `${signed}.${b64url(new Uint8Array(sig))}`
}

/** Channel id → the key its signer was imported from, and the signer: a PEM is imported once, not per token. */
const signers = new Map<number, { key: string; signer: Promise<CryptoKey> }>()
const tokens = new TokenCache()

function signerOf(channelId: number, channelKey: string, sa: ServiceAccount): Promise<CryptoKey> {
	const had = signers.get(channelId)
	if (had && had.key === channelKey) return had.signer
	const signer = importKey(sa.privateKey)
	const entry = { key: channelKey, signer }
	// A key that does not import is tried again next time (the channel may be edited meanwhile).
	signer.catch(() => {
		if (signers.get(channelId) === entry) signers.delete(channelId)
	})
	signers.set(channelId, entry)
	return signer
}

/**
 * A bearer token for the channel's service account: the cached one while fresh, else one fetch shared by every
 * call that asks meanwhile (cached-token.ts). Throws GatewayError: `upstream_auth` when the token endpoint refuses the
 * account (its `error` and `error_description` in the detail, never the key), a retryable upstream error when it
 * fails otherwise.
 */
export function accessToken(channelId: number, channelKey: string, sa: ServiceAccount, signal?: AbortSignal): Promise<string> {
	return tokens.get(channelId, channelKey, () => fetchToken(sa, signerOf(channelId, channelKey, sa)), signal)
}

/**
 * Forgets the channel's token when it is `token` (Vertex refused it: revoked, or expired early), so the next call
 * fetches another; true when a call made again may get another (TokenCache.drop).
 */
export const dropToken = (channelId: number, token: string): boolean => tokens.drop(channelId, token)

async function fetchToken(sa: ServiceAccount, signer: Promise<CryptoKey>): Promise<IssuedToken> {
	const assertion = await signedAssertion(sa, await signer, Math.floor(Date.now() / 1000))
	const form = { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }
	return requestToken(sa.tokenUri, form, { endpoint: 'vertex token endpoint', principal: `the service account ${sa.clientEmail}`, secrets: [assertion], defaultExpiresIn: ASSERTION_SECONDS })
}
