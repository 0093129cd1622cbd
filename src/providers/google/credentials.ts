/**
 * A `vertex` channel key that is a Google credentials JSON, by its `type` as Application Default Credentials files
 * name it (https://cloud.google.com/docs/authentication/application-default-credentials): `service_account` (a key
 * file; also a key without `type`, as older ones were saved), `authorized_user` (`gcloud auth application-default
 * login`), `external_account` (workload identity federation), `impersonated_service_account` (`gcloud auth
 * application-default login --impersonate-service-account`, its `source_credentials` one of the other three). Any other
 * type is refused naming it; a key that is not JSON is no credentials file at all (an express mode API key).
 * @module
 */
import { foreignSend } from '../ambient-endpoints'
import type { KeySource } from '../channel-key'
import { authorizedUserCredential, authorizedUserOf } from './authorized-user'
import { type GoogleCredential, misconfigured } from './credential-json'
import { externalAccountCredential, externalAccountOf, type SourceGuard } from './external-account'
import { impersonatedServiceAccountCredential, impersonatedServiceAccountOf } from './impersonated-service-account'
import { serviceAccountCredential, serviceAccountOf } from './service-account'

/** The types a key may have, for messages. */
export const GOOGLE_CREDENTIAL_TYPES = ['service_account', 'authorized_user', 'external_account', 'impersonated_service_account'] as const

/** The types an impersonated_service_account's `source_credentials` may have (gcloud refuses a chain of impersonations). */
const SOURCE_TYPES = GOOGLE_CREDENTIAL_TYPES.slice(0, 3)

/**
 * The credential of a channel key, or undefined when the key is not JSON. A JSON key that cannot work is refused with
 * why (GatewayError `channel_misconfigured`, its message naming the field), never quoting the key.
 * `from`: where the key came from (channel-key.ts). One given through the management API whose subject token URL's
 * tokens go off Google's hosts (and AMBIENT_ENDPOINTS) was taken because that URL was no address of the host's when
 * saved: its name may resolve to one since (DNS rebinding), so each fetch of it connects to a public address only.
 * @example googleCredentialOf('{"type":"authorized_user","client_id":"…","client_secret":"…","refresh_token":"…"}')?.quotaProject
 */
export function googleCredentialOf(key: string, from?: KeySource): GoogleCredential | undefined {
	if (!key.trimStart().startsWith('{')) return undefined
	let json: Record<string, unknown>
	try {
		json = JSON.parse(key) as Record<string, unknown>
	} catch {
		throw misconfigured('the key starts like JSON but is not valid JSON')
	}
	const cred = credentialOf(json, {})
	const fed = cred.federation
	if (!from?.ambientEndpoints || !fed || fed.source === 'host') return cred
	const away = foreignSend(fed.sends, 'google', from.ambientEndpoints)
	// Parsed again rather than changed: the source is deep in the credential (an impersonation's source_credentials).
	return away ? credentialOf(json, { publicOnly: `this key was given through the management API and its \`${away.field}\` is not Google's (nor in AMBIENT_ENDPOINTS)` }) : cred
}

const credentialOf = (json: Record<string, unknown>, guard: SourceGuard): GoogleCredential =>
	json.type === 'impersonated_service_account' ? impersonatedServiceAccountCredential(impersonatedServiceAccountOf(json, (o) => sourceCredentialOf(o, guard))) : sourceCredentialOf(json, guard, GOOGLE_CREDENTIAL_TYPES)

/** A credential that gives its own tokens: a key file, a user's, a workload's. */
function sourceCredentialOf(json: Record<string, unknown>, guard: SourceGuard, types: readonly string[] = SOURCE_TYPES): GoogleCredential {
	const type = json.type
	if (type === undefined || type === 'service_account') return serviceAccountCredential(serviceAccountOf(json))
	if (type === 'authorized_user') return authorizedUserCredential(authorizedUserOf(json))
	if (type === 'external_account') return externalAccountCredential(externalAccountOf(json, guard))
	// The type is said only when it looks like one: the field might hold anything.
	const named = typeof type === 'string' && /^[a-z_]{1,40}$/.test(type) ? `"${type}"` : 'given'
	throw misconfigured(`credentials of type ${named} are not supported: \`type\` must be ${types.join(', ')}`)
}
