/**
 * A service account impersonated with other credentials, the file `gcloud auth application-default login
 * --impersonate-service-account=SA` writes (https://cloud.google.com/docs/authentication/use-service-account-impersonation#adc):
 * `{"type": "impersonated_service_account", "service_account_impersonation_url", "source_credentials": {…},
 * "delegates": [...], "quota_project_id"?}`. The source credentials (`authorized_user` as gcloud writes them, or a
 * `service_account` key, or an `external_account` configuration) give a token, which asks IAM's generateAccessToken
 * (impersonation.ts) for the service account's own, through the `delegates` chain when there is one; that token, scope
 * `cloud-platform`, an hour long, is what the calls carry, cached per channel as the others are. The project:
 * `settings.project`, else `quota_project_id` (also sent as `x-goog-user-project`).
 * @module
 */
import { GatewayError } from '../../core/errors'
import { type IssuedToken, TokenCache } from '../cached-token'
import { type GoogleCredential, misconfigured, objectField, optionalString, urlField } from './credential-json'
import { impersonatedToken } from './impersonation'

export type ImpersonatedServiceAccount = { url: string; source: GoogleCredential; delegates: string[]; quotaProject?: string }

/** generateAccessToken's default (and, without an organization policy, its most). */
const LIFETIME_SECONDS = 3600
const WHAT = 'an impersonated_service_account key'
/** A delegate as IAM names it; a bare email (as some tools write it) is put in that form. */
const DELEGATE = /^projects\/-\/serviceAccounts\/[^/\s]+$/
const EMAIL = /^[^/\s@]+@[^/\s@]+$/

const tokens = new TokenCache()

/**
 * The impersonation a key file's JSON asks for; `sourceOf` reads `source_credentials` (credentials.ts, which knows the
 * types). A missing or malformed member is refused naming it, never quoting it.
 * @example impersonatedServiceAccountOf({ type: 'impersonated_service_account', service_account_impersonation_url: 'https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken', source_credentials: { type: 'authorized_user', … } }, sourceOf)
 */
export function impersonatedServiceAccountOf(o: Record<string, unknown>, sourceOf: (source: Record<string, unknown>) => GoogleCredential): ImpersonatedServiceAccount {
	const url = urlField(o, 'service_account_impersonation_url', undefined)
	if (!url) throw misconfigured(`${WHAT} needs \`service_account_impersonation_url\``)
	if (!/\/serviceAccounts\/[^/:]+:generateAccessToken$/.test(new URL(url).pathname))
		throw misconfigured('`service_account_impersonation_url` must be a generateAccessToken URL (…/projects/-/serviceAccounts/{email}:generateAccessToken)')
	const raw = objectField(o, 'source_credentials')
	if (!raw) throw misconfigured(`${WHAT} needs \`source_credentials\``)
	let source: GoogleCredential
	try {
		source = sourceOf(raw)
	} catch (e) {
		if (!(e instanceof GatewayError)) throw e
		throw misconfigured(`in \`source_credentials\`: ${e.message.replace(/^vertex channel key: /, '')}`)
	}
	const list = o.delegates ?? []
	if (!Array.isArray(list) || list.some((d) => typeof d !== 'string' || !(DELEGATE.test(d) || EMAIL.test(d))))
		throw misconfigured('`delegates` must be a list of service accounts (emails, or projects/-/serviceAccounts/{email})')
	const delegates = (list as string[]).map((d) => (DELEGATE.test(d) ? d : `projects/-/serviceAccounts/${d}`))
	return { url, source, delegates, quotaProject: optionalString(o, 'quota_project_id') }
}

/** The impersonated service account as a channel's credential: the source's token, then the service account's, cached per channel. */
export const impersonatedServiceAccountCredential = (x: ImpersonatedServiceAccount): GoogleCredential => ({
	kind: 'the impersonated_service_account key',
	projectId: x.quotaProject,
	projectField: 'quota_project_id',
	quotaProject: x.quotaProject,
	hostFile: x.source.hostFile && `source_credentials.${x.source.hostFile}`,
	// The source's token goes to IAM to be exchanged: where a federated source's goes, and here.
	federation: x.source.federation && {
		source: x.source.federation.source,
		sends: [...x.source.federation.sends.map((s) => ({ field: `source_credentials.${s.field}`, url: s.url })), { field: 'service_account_impersonation_url', url: x.url }],
	},
	token: (channelId, channelKey, signal) => tokens.get(channelId, channelKey, () => fetchToken(x, channelId, channelKey, signal), signal),
	drop: (channelId, token) => tokens.drop(channelId, token),
	check: x.source.check && (() => x.source.check!()),
})

async function fetchToken(x: ImpersonatedServiceAccount, channelId: number, channelKey: string, signal?: AbortSignal): Promise<IssuedToken> {
	// The source's token is kept in its own cache (per channel), so an hour's impersonations share one refresh.
	const bearer = await x.source.token(channelId, channelKey, signal)
	try {
		return await impersonatedToken(x.url, bearer, LIFETIME_SECONDS, [bearer], x.delegates)
	} catch (e) {
		// IAM may have refused the kept source token itself (revoked before it expired): once more with a new one.
		x.source.drop(channelId, bearer)
		const fresh = await x.source.token(channelId, channelKey, signal)
		if (fresh === bearer) throw e
		return impersonatedToken(x.url, fresh, LIFETIME_SECONDS, [fresh], x.delegates)
	}
}
