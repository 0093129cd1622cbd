/**
 * The Azure managed identity the gateway runs as, for Azure OpenAI channels keyed `ambient`: a Microsoft Entra ID token
 * for the resource `https://cognitiveservices.azure.com` (`settings.token_scope` without its `/.default` in sovereign
 * clouds), of the system-assigned identity, or of the user-assigned one whose client id `settings.client_id` names.
 * - App Service, Functions, Container Apps: `GET {IDENTITY_ENDPOINT}?api-version=2019-08-01&resource=…[&client_id=…]`
 *   with `X-IDENTITY-HEADER: {IDENTITY_HEADER}` (https://learn.microsoft.com/azure/app-service/overview-managed-identity#rest-endpoint-reference);
 * - elsewhere (virtual machines, scale sets, AKS): the instance metadata service,
 *   `GET http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=…[&client_id=…]` with
 *   `Metadata: true` (https://learn.microsoft.com/entra/identity/managed-identities-azure-resources/how-to-use-vm-token#get-a-token-using-http),
 *   whose host `AZURE_POD_IDENTITY_AUTHORITY_HOST` replaces, as azure-identity reads it.
 * Both answer `{access_token, expires_in | expires_on, resource, token_type}` (`expires_in` and `expires_on` as strings
 * of seconds), refusals `{error, error_description}`. Tokens are cached per channel until five minutes before they
 * expire (cached-token.ts).
 * @module
 */
import { GatewayError } from '../core/errors'
import type { Channel } from '../routing/catalog'
import { TokenCache } from './cached-token'
import { stringSetting } from './channel-key-memo'
import { metadataFailed, metadataRequest, noAmbient, secondsUntil } from './metadata-service'

const IMDS_HOST = 'http://169.254.169.254'
const IMDS_PATH = '/metadata/identity/oauth2/token'
/** Azure OpenAI's resource (audience) in Azure's public cloud: the Entra scope without `/.default`. */
const RESOURCE = 'https://cognitiveservices.azure.com'
/** Managed identity tokens live about a day; an answer that says nothing is taken for an hour. */
const DEFAULT_EXPIRES_IN = 3600

const tokens = new TokenCache()


/** The resource a token is asked for: `settings.token_scope` less `/.default`, else Azure OpenAI's. */
export const managedIdentityResource = (ch: Pick<Channel, 'settings'>): string => stringSetting(ch, 'token_scope')?.replace(/\/\.default$/, '') ?? RESOURCE

/** The endpoint a token comes from, from the process's environment only. */
function endpointOf(ch: Channel, env: Record<string, string | undefined>): { service: string; url: URL; headers: Record<string, string> } {
	const clientId = stringSetting(ch, 'client_id')
	let e: { service: string; url: URL; headers: Record<string, string> }
	if (env.IDENTITY_ENDPOINT && env.IDENTITY_HEADER) {
		let url: URL
		try {
			url = new URL(env.IDENTITY_ENDPOINT)
		} catch {
			throw noAmbient('IDENTITY_ENDPOINT is not a URL')
		}
		url.searchParams.set('api-version', '2019-08-01')
		e = { service: 'azure managed identity endpoint (IDENTITY_ENDPOINT)', url, headers: { 'x-identity-header': env.IDENTITY_HEADER } }
	} else {
		const url = new URL(IMDS_PATH, env.AZURE_POD_IDENTITY_AUTHORITY_HOST || IMDS_HOST)
		url.searchParams.set('api-version', '2018-02-01')
		e = { service: 'azure instance metadata service', url, headers: { metadata: 'true' } }
	}
	e.url.searchParams.set('resource', managedIdentityResource(ch))
	if (clientId) e.url.searchParams.set('client_id', clientId)
	return e
}

async function fetchToken(ch: Channel) {
	const { service, url, headers } = endpointOf(ch, process.env)
	const { res, text } = await metadataRequest(service, url.href, { headers: { ...headers, accept: 'application/json' } })
	let said: { access_token?: unknown; expires_in?: unknown; expires_on?: unknown; error?: unknown; error_description?: unknown } = {}
	try {
		said = JSON.parse(text)
	} catch {
		// not JSON: the status speaks
	}
	if (res.status >= 500 || res.status === 429) throw metadataFailed(service, res.status)
	if (!res.ok) {
		// Only the OAuth error's own two members ("invalid_request: Identity not found"): nothing else is repeated.
		const why = [said.error, said.error_description].filter((x) => typeof x === 'string').join(': ').slice(0, 300) || `HTTP ${res.status}`
		throw noAmbient(`${service} refused a token${stringSetting(ch, 'client_id') ? ` for the identity ${stringSetting(ch, 'client_id')}` : ''}: ${why}`)
	}
	if (typeof said.access_token !== 'string' || !said.access_token)
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed', detail: `${service} answered without access_token` })
	const expiresIn = typeof said.expires_in === 'number' || (typeof said.expires_in === 'string' && /^\d+$/.test(said.expires_in)) ? Number(said.expires_in) : secondsUntil(said.expires_on)
	return { token: said.access_token, expiresIn: expiresIn ?? DEFAULT_EXPIRES_IN }
}

/** The identity's token for a channel: cached while fresh, else one fetch shared by the calls that wait on it. */
export const managedIdentityToken = (ch: Channel, signal?: AbortSignal): Promise<string> =>
	tokens.get(ch.id, `${ch.apiKey} ${stringSetting(ch, 'client_id') ?? ''} ${managedIdentityResource(ch)}`, () => fetchToken(ch), signal)

/** Forgets the channel's token when it is `token` (Azure refused it), so the next call fetches another. */
export const dropManagedIdentityToken = (channelId: number, token: string): boolean => tokens.drop(channelId, token)
