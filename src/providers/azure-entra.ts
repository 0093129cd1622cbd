/**
 * Microsoft Entra ID credentials for Azure OpenAI channels, for resources whose key auth is disabled
 * (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/managed-identity): the channel key is a service
 * principal, `{"tenant_id":…,"client_id":…,"client_secret":…}`, whose client credentials the tenant's token endpoint
 * `{authority_host}/{tenant_id}/oauth2/v2.0/token` exchanges for an access token with the scope
 * `https://cognitiveservices.azure.com/.default`
 * (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow), sent as
 * `Authorization: Bearer …`. `settings.authority_host` (default https://login.microsoftonline.com) and
 * `settings.token_scope` serve sovereign clouds (Azure Government: https://login.microsoftonline.us,
 * https://cognitiveservices.azure.us/.default). Tokens are cached per channel (cached-token.ts). A channel keyed
 * `ambient` gets its token from the managed identity the gateway runs as instead (azure-managed-identity.ts).
 * @module
 */
import { GatewayError } from '../core/errors'
import type { Channel } from '../routing/catalog'
import type { UpstreamRequest } from './adapter'
import { dropManagedIdentityToken, managedIdentityToken } from './azure-managed-identity'
import { TokenCache } from './cached-token'
import { channelKeyMemo, stringSetting } from './channel-key-memo'
import { isAmbient } from './metadata-service'
import { requestToken } from './token-endpoint'

export const ENTRA_AUTHORITY_HOST = 'https://login.microsoftonline.com'
/** The scope of Azure OpenAI (Cognitive Services) in Azure's public cloud. */
export const ENTRA_SCOPE = 'https://cognitiveservices.azure.com/.default'
/** Entra's app tokens live 60 to 90 minutes; an answer without `expires_in` is taken for the shortest. */
const DEFAULT_EXPIRES_IN = 3600

export type ServicePrincipal = { tenantId: string; clientId: string; clientSecret: string }

/** A directory (tenant) id: a GUID, or one of its domain names (contoso.onmicrosoft.com). One URL path segment. */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9.-]*$/
/** An application (client) id is a GUID. */
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The service principal of an Azure channel key, undefined for a resource key (not JSON). Throws, saying what is wrong
 * and never the secret, for a JSON key that is not a service principal.
 * @example servicePrincipalOf('{"tenant_id":"contoso.onmicrosoft.com","client_id":"00000000-0000-0000-0000-000000000001","client_secret":"…"}')
 */
export function servicePrincipalOf(key: string): ServicePrincipal | undefined {
	if (!key.trimStart().startsWith('{')) return undefined
	let o: unknown
	try {
		o = JSON.parse(key)
	} catch {
		throw misconfigured('the key starts like JSON but is not valid JSON')
	}
	const p = (o ?? {}) as Record<string, unknown>
	const missing = ['tenant_id', 'client_id', 'client_secret'].filter((k) => typeof p[k] !== 'string' || !p[k])
	if (missing.length)
		throw misconfigured(`a service principal needs ${missing.map((k) => `\`${k}\``).join(', ')} (strings): {"tenant_id":…,"client_id":…,"client_secret":…}`)
	const [tenantId, clientId, clientSecret] = [p.tenant_id, p.client_id, p.client_secret] as [string, string, string]
	if (!TENANT.test(tenantId)) throw misconfigured('`tenant_id` is the directory (tenant) id, a GUID, or its domain name such as contoso.onmicrosoft.com')
	if (!GUID.test(clientId)) throw misconfigured('`client_id` is the application (client) id, a GUID')
	if (clientSecret.trim() !== clientSecret) throw misconfigured('`client_secret` starts or ends with spaces or a line break')
	return { tenantId, clientId, clientSecret }
}

const misconfigured = (why: string) => new GatewayError('unavailable', `azure channel key: ${why}`, { retryable: true, code: 'channel_misconfigured' })


/**
 * The tenant's token endpoint.
 * @example entraTokenUrl({ settings: {} }, principal) === 'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token'
 */
export const entraTokenUrl = (ch: Pick<Channel, 'settings'>, sp: ServicePrincipal): string =>
	`${(stringSetting(ch, 'authority_host') ?? ENTRA_AUTHORITY_HOST).replace(/\/+$/, '')}/${encodeURIComponent(sp.tenantId)}/oauth2/v2.0/token`

/** The channel's key read as a service principal, once per key: every call asks whether it is one. */
const keyOf = channelKeyMemo((key): { sp?: ServicePrincipal } => ({ sp: servicePrincipalOf(key) }))

/** Whether the channel's key is for Entra ID (a service principal, or JSON meant as one, or `ambient`): never sent as `api-key` then. */
export function usesEntra(ch: Channel): boolean {
	if (isAmbient(ch.apiKey)) return true
	const k = keyOf(ch)
	return k.sp !== undefined || k.bad !== undefined
}

const tokens = new TokenCache()

function fetchToken(ch: Channel, sp: ServicePrincipal) {
	const form = { grant_type: 'client_credentials', client_id: sp.clientId, client_secret: sp.clientSecret, scope: stringSetting(ch, 'token_scope') ?? ENTRA_SCOPE }
	return requestToken(entraTokenUrl(ch, sp), form, {
		endpoint: 'azure entra token endpoint',
		principal: `the client ${sp.clientId} of tenant ${sp.tenantId}`,
		secrets: [sp.clientSecret],
		defaultExpiresIn: DEFAULT_EXPIRES_IN,
	})
}

/**
 * The `authorize` hook of Azure calls: a service principal's bearer token (cached, one fetch shared by concurrent
 * calls); nothing for a resource key, which `azureAuth` put in `api-key`. Throws the token endpoint's refusal as the
 * channel's failure (`upstream_auth`), a key that is no service principal as `channel_misconfigured`.
 */
export async function authorizeEntra(ch: Channel, req: UpstreamRequest, signal?: AbortSignal): Promise<void> {
	if (isAmbient(ch.apiKey)) {
		req.headers.authorization = `Bearer ${await managedIdentityToken(ch, signal)}`
		return
	}
	const k = keyOf(ch)
	if (k.bad) throw k.bad
	if (!k.sp) return
	req.headers.authorization = `Bearer ${await tokens.get(ch.id, ch.apiKey, () => fetchToken(ch, k.sp!), signal)}`
}

/** The `reauthorize` hook: Azure refused the cached token with 401 (revoked, expired early), so it is dropped and the call made again once. */
export function reauthorizeEntra(ch: Channel, req: UpstreamRequest): boolean {
	const auth = req.headers.authorization
	if (auth === undefined || !auth.startsWith('Bearer ')) return false
	if (isAmbient(ch.apiKey)) return dropManagedIdentityToken(ch.id, auth.slice(7))
	return keyOf(ch).sp !== undefined && tokens.drop(ch.id, auth.slice(7))
}
