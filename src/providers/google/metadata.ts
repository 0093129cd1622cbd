/**
 * The Google Cloud service account the gateway runs as (Compute Engine, GKE, Cloud Run…), for Vertex AI channels
 * keyed `ambient`, from the metadata server
 * (https://cloud.google.com/compute/docs/access/authenticate-workloads#applications):
 * `GET http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token` with
 * `Metadata-Flavor: Google`, answered `{access_token, expires_in, token_type}`; the project, when the channel's
 * `settings.project` names none, from `GET /computeMetadata/v1/project/project-id`. `GCE_METADATA_HOST` (host[:port],
 * as google-auth-library and gcp-metadata read it) replaces the host. An answer without the server's own
 * `Metadata-Flavor: Google` header is not the metadata server (a proxy's or captive portal's page), and is not read.
 * Tokens are cached per channel until five minutes before they expire (cached-token.ts); the project once per process.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { TokenCache } from '../cached-token'
import { metadataFailed, metadataRequest, noAmbient } from '../metadata-service'

const METADATA_HOST = 'metadata.google.internal'
const SERVICE = 'google metadata server'
/** The metadata server's tokens live about an hour; an answer without `expires_in` is taken for a shorter life. */
const DEFAULT_EXPIRES_IN = 1800

const tokens = new TokenCache()
/** Metadata server → the project it names (one in production; tests start several). */
const projects = new Map<string, Promise<string>>()

const metadataUrl = (path: string) => `http://${process.env.GCE_METADATA_HOST || METADATA_HOST}/computeMetadata/v1/${path}`

async function metadataGet(path: string, what: string): Promise<string> {
	const { res, text } = await metadataRequest(SERVICE, metadataUrl(path), { headers: { 'metadata-flavor': 'Google' } })
	if (res.headers.get('metadata-flavor') !== 'Google') throw noAmbient(`${SERVICE} at ${new URL(metadataUrl(path)).origin} answered without Metadata-Flavor: Google: not a metadata server`)
	if (res.status >= 500 || res.status === 429) throw metadataFailed(SERVICE, res.status)
	if (res.status === 404) throw noAmbient(`${SERVICE} has no ${what} (HTTP 404): is a service account attached to this instance?`)
	if (!res.ok) throw noAmbient(`${SERVICE} refused the ${what} (HTTP ${res.status})`)
	return text
}

/** The default service account's access token for a channel: cached while fresh, else one fetch shared by the calls waiting. */
export const metadataAccessToken = (channelId: number, channelKey: string, signal?: AbortSignal): Promise<string> =>
	tokens.get(
		channelId,
		channelKey,
		async () => {
		let said: { access_token?: unknown; expires_in?: unknown } = {}
		try {
			said = JSON.parse(await metadataGet('instance/service-accounts/default/token', 'token for the default service account'))
		} catch (e) {
			if (e instanceof GatewayError) throw e
		}
		if (typeof said.access_token !== 'string' || !said.access_token)
			throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed', detail: `${SERVICE} answered without access_token` })
		return { token: said.access_token, expiresIn: typeof said.expires_in === 'number' && said.expires_in > 0 ? said.expires_in : DEFAULT_EXPIRES_IN }
		},
		signal,
	)

/** Forgets the channel's token when it is `token` (Vertex refused it), so the next call fetches another. */
export const dropMetadataToken = (channelId: number, token: string): boolean => tokens.drop(channelId, token)

/** The project the gateway runs in: asked once per metadata host, again only after a failure. */
export function metadataProject(): Promise<string> {
	const host = metadataUrl('')
	const had = projects.get(host)
	if (had) return had
	const asked = metadataGet('project/project-id', 'project id').then((text) => {
		const id = text.trim()
		if (!/^[a-z][a-z0-9.:-]*$/.test(id)) throw noAmbient(`${SERVICE} answered a project id that is none`)
		return id
	})
	asked.catch(() => {
		if (projects.get(host) === asked) projects.delete(host)
	})
	projects.set(host, asked)
	return asked
}
