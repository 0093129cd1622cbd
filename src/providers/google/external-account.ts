/**
 * Workload identity federation's credential configuration (`{"type": "external_account", "audience",
 * "subject_token_type", "token_url", "credential_source", "service_account_impersonation_url"?}`, as `gcloud iam
 * workload-identity-pools create-cred-config` writes it: https://cloud.google.com/iam/docs/workload-identity-federation,
 * https://google.aip.dev/auth/4117). A token comes in up to three steps, each fetch of the channel's token doing all:
 * 1. the subject token, the workload's own credential, read from its file or URL (subject-token.ts), signed with its
 *    AWS credentials (aws-subject-token.ts), or printed by a command (executable-subject-token.ts): credential-source.ts;
 * 2. exchanged at `token_url` (Google's Security Token Service, `https://sts.googleapis.com/v1/token`) by the RFC 8693
 *    token exchange: `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, `audience`, `scope`,
 *    `requested_token_type=urn:ietf:params:oauth:token-type:access_token`, `subject_token`, `subject_token_type`
 *    (https://cloud.google.com/iam/docs/reference/sts/rest/v1/TopLevel/token), with the client's Basic authentication
 *    when the file has `client_id`, or a workforce pool's `options: {"userProject"}`;
 * 3. when `service_account_impersonation_url` is set, the federated token impersonates that service account
 *    (impersonation.ts) for `service_account_impersonation.token_lifetime_seconds` (default an hour).
 * The project: `settings.project`, else `quota_project_id` (also sent as `x-goog-user-project`).
 * @module
 */
import { TokenCache, type IssuedToken } from '../cached-token'
import { requestToken } from '../token-endpoint'
import { type GoogleCredential, misconfigured, objectField, optionalString, requiredString, urlField, VERTEX_SCOPE } from './credential-json'
import { type CredentialSource, credentialSourceOf, hostMemberOf, subjectTokenOf } from './credential-source'
import { checkExecutablesAllowed } from './executable-subject-token'
import { impersonatedToken } from './impersonation'

export type ExternalAccount = {
	audience: string
	subjectTokenType: string
	tokenUrl: string
	source: CredentialSource
	impersonationUrl?: string
	lifetimeSeconds: number
	clientId?: string
	clientSecret?: string
	userProject?: string
	quotaProject?: string
	/** Why the subject token URL may be fetched from a public address only (credentials.ts), when it may. */
	publicOnly?: string
}

/** How the key's subject token URL is fetched: `publicOnly`, why it may connect to a public address only. */
export type SourceGuard = { publicOnly?: string }

const STS_TOKEN_URL = 'https://sts.googleapis.com/v1/token'
const WHAT = 'an external_account key'
/** generateAccessToken's bounds: 10 minutes to 12 hours (the latter with an organization policy). */
const LIFETIME = { min: 600, max: 43_200, default: 3600 }

const tokens = new TokenCache()

/**
 * The credential configuration of a key file's JSON; a missing or malformed member is refused naming it, never quoting it.
 * @example externalAccountOf({ type: 'external_account', audience: '//iam.googleapis.com/projects/123/…/providers/k8s', subject_token_type: 'urn:ietf:params:oauth:token-type:jwt', credential_source: { file: '/var/run/secrets/tokens/gcp' } })
 */
export function externalAccountOf(o: Record<string, unknown>, guard: SourceGuard = {}): ExternalAccount {
	const audience = requiredString(o, 'audience', WHAT)
	const subjectTokenType = requiredString(o, 'subject_token_type', WHAT)
	const source = credentialSourceOf(o)
	const impersonation = objectField(o, 'service_account_impersonation') ?? {}
	const lifetime = impersonation.token_lifetime_seconds ?? LIFETIME.default
	if (typeof lifetime !== 'number' || !Number.isInteger(lifetime) || lifetime < LIFETIME.min || lifetime > LIFETIME.max)
		throw misconfigured(`\`service_account_impersonation.token_lifetime_seconds\` must be a whole number of seconds from ${LIFETIME.min} to ${LIFETIME.max}`)
	return {
		audience,
		subjectTokenType,
		tokenUrl: urlField(o, 'token_url', STS_TOKEN_URL)!,
		source,
		impersonationUrl: urlField(o, 'service_account_impersonation_url', undefined),
		lifetimeSeconds: lifetime,
		clientId: optionalString(o, 'client_id'),
		clientSecret: optionalString(o, 'client_secret'),
		userProject: optionalString(o, 'workforce_pool_user_project'),
		quotaProject: optionalString(o, 'quota_project_id'),
		publicOnly: guard.publicOnly,
	}
}

/** The workload as a channel's credential: the whole exchange on each fetch, its final token cached per channel. */
export const externalAccountCredential = (x: ExternalAccount): GoogleCredential => ({
	kind: 'the external_account key',
	projectId: x.quotaProject,
	projectField: 'quota_project_id',
	quotaProject: x.quotaProject,
	hostFile: hostMemberOf(x.source),
	federation: {
		source: x.source.kind === 'read' && x.source.read.url ? { url: x.source.read.url } : 'host',
		sends: [{ field: 'token_url', url: x.tokenUrl }, ...(x.impersonationUrl ? [{ field: 'service_account_impersonation_url', url: x.impersonationUrl }] : [])],
	},
	token: (channelId, channelKey, signal) => tokens.get(channelId, channelKey, () => fetchToken(x), signal),
	drop: (channelId, token) => tokens.drop(channelId, token),
	check: x.source.kind === 'executable' ? async () => checkExecutablesAllowed() : undefined,
})

async function fetchToken(x: ExternalAccount): Promise<IssuedToken> {
	const { token: subject, secrets } = await subjectTokenOf(x.source, x)
	const form: Record<string, string> = {
		grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
		audience: x.audience,
		scope: VERTEX_SCOPE,
		requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
		subject_token: subject,
		subject_token_type: x.subjectTokenType,
	}
	const headers: Record<string, string> = {}
	if (x.clientId) {
		const basic = Buffer.from(`${x.clientId}:${x.clientSecret ?? ''}`).toString('base64')
		headers.authorization = `Basic ${basic}`
		secrets.push(basic)
		if (x.clientSecret) secrets.push(x.clientSecret)
	} else if (x.userProject) {
		// A workforce pool's user project, which STS takes only from a caller without client authentication.
		form.options = JSON.stringify({ userProject: x.userProject })
	}
	const sts = await requestToken(x.tokenUrl, form, { endpoint: 'google sts endpoint', principal: `the workload identity provider ${x.audience}`, secrets, defaultExpiresIn: 3600, headers })
	if (!x.impersonationUrl) return sts
	return impersonatedToken(x.impersonationUrl, sts.token, x.lifetimeSeconds, [sts.token, ...secrets])
}
