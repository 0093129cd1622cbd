/**
 * Microsoft Entra ID credentials for Azure OpenAI channels, for resources whose key auth is disabled
 * (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/managed-identity): the channel key is a service
 * principal, `{"tenant_id":…,"client_id":…}` with one proof of the application: `client_secret`; `certificate`, a PEM
 * or a PFX in base64 (with `certificate_password` when encrypted) whose key signs a client assertion
 * (azure-entra-certificate.ts); or `federated_token_file`, another issuer's token
 * (workload identity, azure-entra-federated.ts). The tenant's token endpoint
 * `{authority_host}/{tenant_id}/oauth2/v2.0/token` exchanges those client credentials for an access token with the scope
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
import { certificateAssertion, certificateOf, certificateOutOfDate, type EntraCertificate } from './azure-entra-certificate'
import { federatedAssertion } from './azure-entra-federated'
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

/** What the application proves itself with: a client secret, a certificate's signed assertion, or another issuer's token (a file). */
export type EntraProof =
	| { kind: 'secret'; clientSecret: string }
	| { kind: 'certificate'; certificate: EntraCertificate; sendChain: boolean }
	| { kind: 'federated'; tokenFile: string }
export type ServicePrincipal = { tenantId: string; clientId: string; proof: EntraProof }

/** A directory (tenant) id: a GUID, or one of its domain names (contoso.onmicrosoft.com). One URL path segment. */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9.-]*$/
/** An application (client) id is a GUID. */
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const PROOFS = ['client_secret', 'certificate', 'federated_token_file'] as const
const SHAPES = '{"tenant_id","client_id"} with one of "client_secret", "certificate" (a PEM, or a PFX in base64; "certificate_password" if encrypted) or "federated_token_file" (a path)'

/**
 * The service principal of an Azure channel key, undefined for a resource key (not JSON). Throws, saying what is wrong
 * (by field) and never the secret or key material, for a JSON key that is not a service principal.
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
	const given = PROOFS.filter((k) => p[k] !== undefined)
	const missing = ['tenant_id', 'client_id'].filter((k) => typeof p[k] !== 'string' || !p[k])
	if (given.length === 0) missing.push('client_secret')
	if (missing.length) throw misconfigured(`a service principal needs ${missing.map((k) => `\`${k}\``).join(', ')} (strings): ${SHAPES}`)
	if (given.length > 1) throw misconfigured(`give one of ${given.map((k) => `\`${k}\``).join(', ')}, not ${given.length === 2 ? 'both' : 'all three'}: ${SHAPES}`)
	const [tenantId, clientId] = [p.tenant_id, p.client_id] as [string, string]
	if (!TENANT.test(tenantId)) throw misconfigured('`tenant_id` is the directory (tenant) id, a GUID, or its domain name such as contoso.onmicrosoft.com')
	if (!GUID.test(clientId)) throw misconfigured('`client_id` is the application (client) id, a GUID')
	return { tenantId, clientId, proof: proofOf(given[0]!, p) }
}

function proofOf(field: (typeof PROOFS)[number], p: Record<string, unknown>): EntraProof {
	const v = p[field]
	if (typeof v !== 'string' || !v) throw misconfigured(`\`${field}\` must be a non-empty string`)
	for (const with_ of ['send_certificate_chain', 'certificate_password'])
		if (field !== 'certificate' && p[with_] !== undefined) throw misconfigured(`\`${with_}\` goes with \`certificate\` only`)
	if (field === 'client_secret') {
		if (v.trim() !== v) throw misconfigured('`client_secret` starts or ends with spaces or a line break')
		return { kind: 'secret', clientSecret: v }
	}
	if (field === 'federated_token_file') {
		if (!v.startsWith('/')) throw misconfigured('`federated_token_file` is the absolute path of the token file, such as /var/run/secrets/azure/tokens/azure-identity-token')
		return { kind: 'federated', tokenFile: v }
	}
	const send = p.send_certificate_chain
	if (send !== undefined && typeof send !== 'boolean') throw misconfigured('`send_certificate_chain` is true or false')
	const password = p.certificate_password
	// Empty is a password too: Key Vault's PFX downloads have that one.
	if (password !== undefined && typeof password !== 'string') throw misconfigured('`certificate_password` is a string')
	try {
		return { kind: 'certificate', certificate: certificateOf(v, password), sendChain: send === true }
	} catch (e) {
		throw misconfigured(`\`certificate\` ${(e as Error).message}`)
	}
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
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** What the token request proves the application with: the secret, or a client assertion (RFC 7521 §4.2). */
async function credentialsOf(sp: ServicePrincipal, audience: string): Promise<Record<string, string>> {
	const p = sp.proof
	if (p.kind === 'secret') return { client_secret: p.clientSecret }
	let assertion: string
	if (p.kind === 'certificate') {
		const stale = certificateOutOfDate(p.certificate, new Date())
		// Entra would refuse it too: said here with the date, and the channel disabled until its key is replaced.
		if (stale)
			throw new GatewayError('upstream', "the upstream provider refused the gateway's credentials for this model", { retryable: true, code: 'upstream_auth', detail: `azure channel key: the \`certificate\` ${stale}` })
		assertion = await certificateAssertion(p.certificate, { clientId: sp.clientId, audience, sendChain: p.sendChain }, Math.floor(Date.now() / 1000))
	} else {
		try {
			assertion = await federatedAssertion(p.tokenFile)
		} catch (e) {
			throw misconfigured(`\`federated_token_file\` ${(e as Error).message}`)
		}
	}
	return { client_assertion_type: ASSERTION_TYPE, client_assertion: assertion }
}

async function fetchToken(ch: Channel, sp: ServicePrincipal) {
	const url = entraTokenUrl(ch, sp)
	const proof = await credentialsOf(sp, url)
	const form = { grant_type: 'client_credentials', client_id: sp.clientId, ...proof, scope: stringSetting(ch, 'token_scope') ?? ENTRA_SCOPE }
	return requestToken(url, form, {
		endpoint: 'azure entra token endpoint',
		principal: `the client ${sp.clientId} of tenant ${sp.tenantId}${sp.proof.kind === 'secret' ? '' : ` (${sp.proof.kind === 'certificate' ? 'certificate' : 'federated token'})`}`,
		secrets: [proof.client_secret ?? proof.client_assertion!],
		defaultExpiresIn: DEFAULT_EXPIRES_IN,
	})
}

/** The token's cache key: the channel key, and where and for what it is asked (an edited setting starts over too). */
const cacheKeyOf = (ch: Channel) => `${ch.apiKey}\n${stringSetting(ch, 'authority_host') ?? ''}\n${stringSetting(ch, 'token_scope') ?? ''}`

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
	req.headers.authorization = `Bearer ${await tokens.get(ch.id, cacheKeyOf(ch), () => fetchToken(ch, k.sp!), signal)}`
}

/** The `reauthorize` hook: Azure refused the cached token with 401 (revoked, expired early), so it is dropped and the call made again once. */
export function reauthorizeEntra(ch: Channel, req: UpstreamRequest): boolean {
	const auth = req.headers.authorization
	if (auth === undefined || !auth.startsWith('Bearer ')) return false
	if (isAmbient(ch.apiKey)) return dropManagedIdentityToken(ch.id, auth.slice(7))
	return keyOf(ch).sp !== undefined && tokens.drop(ch.id, auth.slice(7))
}
