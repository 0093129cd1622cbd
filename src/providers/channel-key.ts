/**
 * Whether a channel's key has the shape its type takes, checked when the key is saved (management API): a key that
 * cannot work is refused then, with why, rather than failing the first call. Only types whose key has a shape are
 * checked (`bedrock`, `vertex`, and `azure`, whose key may be an Entra ID service principal: a secret, a certificate or a
 * federated token file); the reasons never quote the key.
 * All three take the literal key `ambient`: the credentials of the cloud the gateway runs on (metadata-service.ts).
 * @module
 */
import type { GatewayError } from '../core/errors'
import type { Channel } from '../routing/catalog'
import { type Cloud, foreignSend, identityEndpointProblem, isHostAddress } from './ambient-endpoints'
import { servicePrincipalOf } from './azure-entra'
import { certificateOutOfDate } from './azure-entra-certificate'
import { federatedAssertion } from './azure-entra-federated'
import { bedrockRegion, iamKeys } from './bedrock'
import { googleCredentialOf } from './google/credentials'
import { isAmbient } from './metadata-service'
import { isClaudeModel } from './vertex'

const EXPRESS_KEY = /^[A-Za-z0-9._-]+$/

/** The field at fault (`api_key`, `settings.region`, `settings.project`) and why, in words that never quote the key. */
export type KeyProblem = { param: string; reason: string }

type Saved = { type: string; apiKey: string; baseUrl: string; settings: Record<string, unknown>; models: string[]; modelMap: Record<string, string> }

/**
 * Where the key comes from. `hostFiles: false` (a key given through the management API) refuses one naming a file on
 * the gateway's host, read (or run) at every token fetch and its output sent to the token endpoint the key names (an
 * `azure` key's `federated_token_file`, a `vertex` external_account's `credential_source.file` or
 * `credential_source.executable` command): such keys come only from the operator's side of the host (GATEWAY_CONFIG,
 * the quick-start variables), or a console administrator could have any one-line file of the host (a Kubernetes
 * service-account token, the gateway's secret key) sent to a server of theirs, or any command run.
 * `ambientEndpoints` (set when where the channel's credentials go was given through the management API) keeps those
 * made from the host's own identity to the cloud's own hosts and these (AMBIENT_ENDPOINTS; ambient-endpoints.ts): an
 * `ambient` key's `base_url` (and a Bedrock `settings.control_plane_url`), a `vertex` external_account's `token_url`,
 * `service_account_impersonation_url` and `base_url` when its subject token is the host's. Else an administrator could
 * have the host role's signed requests, or a token of its service account or managed identity, sent to a server of theirs.
 * The calls a channel stored through the management API serves parse its key with it too (catalog.ts `keySource`): a
 * subject token URL that was public at the save is read from a public address only (google/credentials.ts).
 */
export type KeySource = { hostFiles: boolean; ambientEndpoints?: readonly string[] }

const hostFileRefused = (field: string): KeyProblem => ({
	param: 'api_key',
	reason: `a key naming a file on the gateway's host (\`${field}\`) is taken only from GATEWAY_CONFIG or the quick-start variables, not through the management API; use a secret, a certificate or ambient here`,
})

const asChannel = (c: Saved) => ({ id: 0, name: '', type: c.type, baseUrl: c.baseUrl, apiKey: c.apiKey, settings: c.settings, models: c.models, modelMap: c.modelMap, priority: 0, weight: 1 }) as unknown as Channel

/**
 * Why the key cannot serve a channel of its type, or undefined when it can (or its type's keys have no shape).
 * @example await channelKeyProblem({ type: 'bedrock', apiKey: 'AKIA…:', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', settings: {} }) // { param: 'api_key', … }
 */
export async function channelKeyProblem(c: Saved, from: KeySource = { hostFiles: true }): Promise<KeyProblem | undefined> {
	const problem = c.type === 'bedrock' ? bedrockKeyProblem(c) : c.type === 'vertex' ? await vertexKeyProblem(c, from) : c.type === 'azure' ? await azureKeyProblem(c, from) : undefined
	if (problem || !from.ambientEndpoints) return problem
	return hostIdentityProblem(c, from.ambientEndpoints)
}

const CLOUD: Record<string, Cloud> = { bedrock: 'aws', vertex: 'google', azure: 'azure' }

/**
 * The KeySource of channels stored through the management API (source `api`), as the calls they serve parse their keys
 * (catalog.ts): one object per AMBIENT_ENDPOINTS list, so a key parsed once for it (channel-key-memo.ts) is parsed again
 * only when its channel's source changes.
 */
export function apiKeySource(allow: readonly string[]): KeySource {
	let from = apiSources.get(allow)
	if (!from) apiSources.set(allow, (from = Object.freeze({ hostFiles: false, ambientEndpoints: allow })))
	return from
}
const apiSources = new WeakMap<readonly string[], KeySource>()

/**
 * The first field sending credentials made from the host's identity anywhere but the cloud's own hosts (or
 * AMBIENT_ENDPOINTS). Where a key's token goes is read before whether its subject token is the host's, which may ask
 * DNS: a key whose tokens go only to the cloud's hosts asks nothing.
 */
export async function hostIdentityProblem(c: Saved, allow: readonly string[]): Promise<KeyProblem | undefined> {
	const cloud = CLOUD[c.type]
	if (!cloud) return undefined
	const sent = (param: string, url: string, what: string): KeyProblem | undefined => {
		const why = identityEndpointProblem(url, cloud, allow)
		return why === undefined ? undefined : { param, reason: `${what}: ${why}` }
	}
	if (isAmbient(c.apiKey)) {
		const what = `an \`ambient\` key sends the gateway host's own credentials (${cloud === 'aws' ? 'requests signed with its AWS role' : cloud === 'google' ? "its service account's tokens" : "its managed identity's tokens"}) to`
		const controlPlane = c.type === 'bedrock' && typeof c.settings.control_plane_url === 'string' ? c.settings.control_plane_url : undefined
		return sent('base_url', c.baseUrl, `${what} base_url`) ?? (controlPlane === undefined ? undefined : sent('settings.control_plane_url', controlPlane, `${what} settings.control_plane_url`))
	}
	if (c.type !== 'vertex') return undefined
	let federation
	try {
		federation = googleCredentialOf(c.apiKey)?.federation
	} catch {
		return undefined
	}
	if (!federation) return undefined
	const away = foreignSend([...federation.sends, { field: 'base_url', url: c.baseUrl }], cloud, allow)
	if (!away || (federation.source !== 'host' && !(await isHostAddress(federation.source.url)))) return undefined
	const what = "the key's subject token is the gateway host's own (its AWS role, or a metadata, loopback or private address), and what it is exchanged for goes to"
	return away.field === 'base_url' ? { param: 'base_url', reason: `${what} base_url: ${away.why}` } : { param: 'api_key', reason: `${what} \`${away.field}\`: ${away.why}` }
}

function bedrockKeyProblem(c: Saved): KeyProblem | undefined {
	// Sent as a header: a line break pasted along would fail every call.
	if (/\s/.test(c.apiKey)) return { param: 'api_key', reason: 'a Bedrock key has no spaces or line breaks' }
	const ambient = isAmbient(c.apiKey)
	if (!ambient && !c.apiKey.includes(':')) return undefined
	if (!ambient && !iamKeys(c.apiKey))
		return { param: 'api_key', reason: 'IAM keys go as ACCESS_KEY_ID:SECRET_ACCESS_KEY, or ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN (a Bedrock API key has no colon)' }
	if (!bedrockRegion(asChannel(c)))
		return { param: 'settings.region', reason: `${ambient ? "the role's keys (ambient)" : 'IAM keys'} are signed for a region: set settings.region (e.g. us-east-1), or use a bedrock-runtime.{region}.amazonaws.com base_url` }
	return undefined
}

async function vertexKeyProblem(c: Saved, from: KeySource): Promise<KeyProblem | undefined> {
	// The metadata server's token serves Claude and Gemini; its project is asked when settings.project names none.
	if (isAmbient(c.apiKey)) return undefined
	let cred
	try {
		cred = googleCredentialOf(c.apiKey)
		if (cred?.hostFile && !from.hostFiles) return hostFileRefused(cred.hostFile)
		await cred?.check?.()
	} catch (e) {
		return { param: 'api_key', reason: (e as GatewayError).message.replace(/^vertex channel key: /, '') }
	}
	// Google's API keys (`AIza…`, express mode's `AQ.…`) are URL-safe characters only.
	if (!cred) {
		if (!EXPRESS_KEY.test(c.apiKey))
			return { param: 'api_key', reason: 'neither a Google credentials JSON (a service-account key file, authorized_user, external_account or impersonated_service_account; starting with {) nor an express mode API key (letters, digits, . _ -)' }
		// Globs count: `claude-*` would route Claude models to a key that cannot call them.
		const claude = c.models.map((m) => c.modelMap[m] ?? m).filter(isClaudeModel)
		if (claude.length) return { param: 'api_key', reason: `Claude on Vertex AI takes a credentials JSON (service_account, authorized_user, external_account, impersonated_service_account) or ambient, not an express mode API key (models ${claude.join(', ')})` }
		return undefined
	}
	if (!cred.projectId && !(typeof c.settings.project === 'string' && c.settings.project))
		return { param: 'settings.project', reason: `${cred.kind} has no ${cred.projectField}: set settings.project to the Google Cloud project calls go to` }
	return undefined
}

/**
 * A resource key goes in a header as it is; a JSON key is a service principal (azure-entra.ts), said wrong by its
 * field: a certificate that does not parse, whose key is not its own, or that is out of date; a federated token file
 * that cannot be read or holds no JWT (read here as at every token request: the gateway's instances share the path).
 */
async function azureKeyProblem(c: Saved, from: KeySource): Promise<KeyProblem | undefined> {
	if (isAmbient(c.apiKey)) return undefined
	const bad = (why: string): KeyProblem => ({ param: 'api_key', reason: why.replace(/^azure channel key: /, '') })
	let sp
	try {
		sp = servicePrincipalOf(c.apiKey)
	} catch (e) {
		return bad((e as GatewayError).message)
	}
	if (sp?.proof.kind === 'certificate') {
		const stale = certificateOutOfDate(sp.proof.certificate, new Date())
		if (stale) return bad(`the \`certificate\` ${stale}`)
	}
	if (sp?.proof.kind === 'federated') {
		if (!from.hostFiles) return hostFileRefused('federated_token_file')
		try {
			await federatedAssertion(sp.proof.tokenFile)
		} catch (e) {
			return bad(`\`federated_token_file\` ${(e as Error).message}`)
		}
	}
	if (sp) return undefined
	// Sent as the api-key header, which drops the ends' whitespace (a key file's final newline) but not a space within.
	if (/\s/.test(c.apiKey.trim())) return { param: 'api_key', reason: 'neither a resource key (no spaces or line breaks) nor a service principal ({"tenant_id":…,"client_id":…,"client_secret":…})' }
	return undefined
}
