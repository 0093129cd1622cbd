/**
 * The mock's user credentials, as `gcloud auth application-default login` writes them (an `authorized_user` file:
 * https://cloud.google.com/docs/authentication/application-default-credentials), and the refresh grant Google's token
 * endpoint answers for them (RFC 6749 §6, https://developers.google.com/identity/protocols/oauth2/web-server#offline):
 * a form of `grant_type=refresh_token`, `client_id`, `client_secret`, `refresh_token`, answered
 * `{access_token, expires_in, scope, token_type: "Bearer"}`; refused as Google does, 401 `invalid_client` ("Unauthorized")
 * for a wrong client or secret, 400 `invalid_grant` ("Token has been expired or revoked.") for a refresh token it does
 * not know.
 * @module
 */
import { refuse } from './oauth'

export type AuthorizedUserKey = { json: string; clientId: string; clientSecret: string; refreshToken: string }

const rand = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString('base64url')

/**
 * Fresh user credentials (a random secret and refresh token), their token endpoint at `tokenUri`; `quotaProject` as
 * `gcloud auth application-default set-quota-project` writes it (omitted when undefined).
 * @example const u = testAuthorizedUser('http://127.0.0.1:PORT/token', 'proj-1')
 */
export function testAuthorizedUser(tokenUri: string, quotaProject: string | undefined): AuthorizedUserKey {
	const clientId = `${100000000000 + Math.floor(Math.random() * 1e11)}-mock${rand(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}.apps.googleusercontent.com`
	const clientSecret = `d-FL95Q19q7M${rand(12)}`
	const refreshToken = `1//0g${rand(48)}`
	const file: Record<string, unknown> = { account: '', client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken, type: 'authorized_user', universe_domain: 'googleapis.com', token_uri: tokenUri }
	if (quotaProject !== undefined) file.quota_project_id = quotaProject
	return { json: JSON.stringify(file), clientId, clientSecret, refreshToken }
}

/** The token endpoint's answer to a refresh grant (`form` from formOf); `issue` makes the token when the grant is good. */
export function refreshResponse(form: URLSearchParams, user: Omit<AuthorizedUserKey, 'json'>, revoked: boolean, issue: () => { token: string; expiresIn: number }): Response {
	if (form.get('client_id') !== user.clientId || form.get('client_secret') !== user.clientSecret) return refuse(401, 'invalid_client', 'Unauthorized')
	if (form.get('refresh_token') !== user.refreshToken || revoked) return refuse(400, 'invalid_grant', 'Token has been expired or revoked.')
	const { token, expiresIn } = issue()
	return Response.json({ access_token: token, expires_in: expiresIn, scope: 'https://www.googleapis.com/auth/cloud-platform openid https://www.googleapis.com/auth/userinfo.email', token_type: 'Bearer' })
}
