/**
 * The mock's Google OAuth token endpoint (`token_uri` of a service-account key): the JWT bearer grant (RFC 7523), as
 * https://developers.google.com/identity/protocols/oauth2/service-account#httprest describes it. The assertion's
 * RS256 signature is checked against the test key's public half, and its claims (iss, aud, scope, iat/exp) as Google
 * checks them; refusals are Google's `{"error":"invalid_grant","error_description":…}`.
 * @module
 */

export type ServiceAccountKey = { json: string; clientEmail: string; publicKey: CryptoKey }

const pem = (der: ArrayBuffer) =>
	`-----BEGIN PRIVATE KEY-----\n${
		Buffer.from(der)
			.toString('base64')
			.match(/.{1,64}/g)!
			.join('\n')
	}\n-----END PRIVATE KEY-----\n`

/**
 * A fresh RSA key pair as a service-account key file (the JSON Google Cloud downloads), its `token_uri` at `tokenUri`.
 * @example const sa = await testServiceAccount('https://mock/token', 'proj-1')
 */
export async function testServiceAccount(tokenUri: string, projectId: string, clientEmail = `gateway@${projectId}.iam.gserviceaccount.com`): Promise<ServiceAccountKey> {
	const pair = (await crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify'])) as CryptoKeyPair
	const der = await crypto.subtle.exportKey('pkcs8', pair.privateKey)
	const json = JSON.stringify({
		type: 'service_account',
		project_id: projectId,
		private_key_id: 'a1b2c3d4e5f6',
		private_key: pem(der),
		client_email: clientEmail,
		client_id: '100000000000000000001',
		auth_uri: 'https://accounts.google.com/o/oauth2/auth',
		token_uri: tokenUri,
	})
	return { json, clientEmail, publicKey: pair.publicKey }
}

export const refuse = (status: number, error: string, description: string) => Response.json({ error, error_description: description }, { status })

/** Why the assertion is refused, or undefined when it is good. */
export async function checkAssertion(assertion: string, account: { clientEmail: string; publicKey: CryptoKey }, audience: string): Promise<string | undefined> {
	const parts = assertion.split('.')
	if (parts.length !== 3) return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe'
	const [h, c, s] = parts as [string, string, string]
	const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string }
	if (header.alg !== 'RS256') return 'Invalid JWT: alg must be RS256'
	const ok = await crypto.subtle.verify('RSASSA-PKCS1-v1_5', account.publicKey, Buffer.from(s, 'base64url'), new TextEncoder().encode(`${h}.${c}`))
	if (!ok) return 'Invalid JWT Signature.'
	const claims = JSON.parse(Buffer.from(c, 'base64url').toString()) as { iss?: string; aud?: string; scope?: string; iat?: number; exp?: number }
	if (claims.iss !== account.clientEmail) return 'Invalid JWT: iss is not the service account'
	if (claims.aud !== audience) return 'Invalid JWT: aud must be the token endpoint'
	if (!claims.scope?.split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return 'Invalid OAuth scope or ID token audience provided.'
	const now = Date.now() / 1000
	if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number' || claims.exp <= now || claims.iat > now + 60 || claims.exp - claims.iat > 3600)
		return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.'
	return undefined
}

/**
 * A token request's form, or undefined when the request is no form POST (Google answers `invalid_request` then).
 * @example const form = await formOf(req)
 */
export async function formOf(req: Request): Promise<URLSearchParams | undefined> {
	if (req.method !== 'POST' || !req.headers.get('content-type')?.startsWith('application/x-www-form-urlencoded')) return undefined
	return new URLSearchParams(await req.text())
}

/** The token endpoint's answer to one JWT bearer grant (`form` from formOf); `issue` makes the token when the grant is good. */
export async function tokenResponse(form: URLSearchParams | undefined, account: { clientEmail: string; publicKey: CryptoKey }, audience: string, issue: () => { token: string; expiresIn: number }): Promise<Response> {
	if (!form) return refuse(400, 'invalid_request', 'Invalid request')
	if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse(400, 'unsupported_grant_type', 'Invalid grant_type: ')
	const why = await checkAssertion(form.get('assertion') ?? '', account, audience)
	if (why) return refuse(400, 'invalid_grant', why)
	const { token, expiresIn } = issue()
	return Response.json({ access_token: token, expires_in: expiresIn, token_type: 'Bearer' })
}
