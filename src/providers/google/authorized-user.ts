/**
 * Google user credentials, as `gcloud auth application-default login` writes them (Application Default Credentials,
 * https://cloud.google.com/docs/authentication/application-default-credentials): `{"type": "authorized_user",
 * "client_id", "client_secret", "refresh_token", "quota_project_id"?}`. The refresh token is exchanged at Google's token
 * endpoint (`token_uri` when the file names one, as google-auth reads it) by the refresh grant (RFC 6749 §6,
 * https://developers.google.com/identity/protocols/oauth2/web-server#offline): `grant_type=refresh_token`, `client_id`,
 * `client_secret`, `refresh_token`, answered `{access_token, expires_in}`. A user has no project of their own: calls
 * go to `settings.project`, else `quota_project_id`, which is also sent as `x-goog-user-project` (Vertex AI refuses user
 * credentials without a quota project: https://cloud.google.com/docs/authentication/adc-to-set-quota-project).
 * @module
 */
import { TokenCache } from '../cached-token'
import { requestToken } from '../token-endpoint'
import { type GoogleCredential, GOOGLE_TOKEN_URI, optionalString, requiredString, urlField } from './credential-json'

export type AuthorizedUser = { clientId: string; clientSecret: string; refreshToken: string; tokenUri: string; quotaProject?: string }

/** Google's access tokens live an hour. */
const DEFAULT_EXPIRES_IN = 3600
const WHAT = 'an authorized_user key'

const tokens = new TokenCache()

/**
 * The user credentials of a key file's JSON; a missing member is refused naming it, never quoting the key.
 * @example authorizedUserOf({ type: 'authorized_user', client_id: '…apps.googleusercontent.com', client_secret: '…', refresh_token: '1//…' })
 */
export function authorizedUserOf(o: Record<string, unknown>): AuthorizedUser {
	return {
		clientId: requiredString(o, 'client_id', WHAT),
		clientSecret: requiredString(o, 'client_secret', WHAT),
		refreshToken: requiredString(o, 'refresh_token', WHAT),
		tokenUri: urlField(o, 'token_uri', GOOGLE_TOKEN_URI)!,
		quotaProject: optionalString(o, 'quota_project_id'),
	}
}

/** The user as a channel's credential: a refreshed access token, cached per channel; the quota project sent along. */
export const authorizedUserCredential = (u: AuthorizedUser): GoogleCredential => ({
	kind: 'the authorized_user key',
	projectId: u.quotaProject,
	projectField: 'quota_project_id',
	quotaProject: u.quotaProject,
	token: (channelId, channelKey, signal) =>
		tokens.get(
			channelId,
			channelKey,
			() =>
				requestToken(
					u.tokenUri,
					{ grant_type: 'refresh_token', client_id: u.clientId, client_secret: u.clientSecret, refresh_token: u.refreshToken },
					// The client id is an OAuth client's public name (gcloud's is the same for everyone): the user's secrets are the other two.
					{ endpoint: 'vertex token endpoint', principal: `the authorized_user of client ${u.clientId}`, secrets: [u.refreshToken, u.clientSecret], defaultExpiresIn: DEFAULT_EXPIRES_IN },
				),
			signal,
		),
	drop: (channelId, token) => tokens.drop(channelId, token),
})
