/**
 * Google Vertex AI: Claude (Anthropic's Messages protocol in Vertex's envelope) and Gemini (Gemini's own protocol) on
 * one channel, the protocol chosen by the upstream model's name (`claude-*`: Anthropic).
 * - URL `{origin}/v1/projects/{project}/locations/{region}/publishers/{anthropic|google}/models/{model}:{method}`;
 *   Claude `:rawPredict` / `:streamRawPredict`, Gemini `:generateContent` / `:streamGenerateContent?alt=sse`
 *   (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude,
 *   https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference). `region` defaults to the one a
 *   `{region}-aiplatform.googleapis.com` base_url names, else `global`; on Google's own hosts the origin follows the
 *   region (`global`: `aiplatform.googleapis.com`), any other base_url (a proxy, a private endpoint) is kept.
 * - Claude's body: Anthropic's without `model`, with `anthropic_version: "vertex-2023-10-16"` (the version goes in the
 *   body, not a header: https://docs.anthropic.com/en/api/claude-on-vertex-ai); betas stay in `anthropic-beta`, those
 *   Vertex refuses left out (platform-betas.ts).
 *   Its answers and streams are Anthropic's, so Anthropic clients keep the fast path.
 * - Auth: a Google credentials JSON as an OAuth bearer token (google/credentials.ts: a service account's key, a user's
 *   `authorized_user` refresh token, workload identity federation's `external_account`, a service account impersonated
 *   with any of those, `impersonated_service_account`), re-fetched once when Vertex
 *   refuses a cached one with 401; or, for Gemini only, a Vertex express mode API key (`x-goog-api-key`, on
 *   `{origin}/v1/publishers/google/models/…`: https://cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/overview);
 *   or `ambient`: the token of the service account the gateway runs as, from the metadata server, and its project when
 *   `settings.project` names none (google/metadata.ts), Claude and Gemini alike.
 * - Errors are Google's `{error:{code,message,status}}`, read as Gemini's (upstream-error.ts).
 * - Besides chat: Gemini-publisher methods (`:countTokens`, text embeddings' `:predict`) by {@link vertexGoogleUrl}, and
 *   Claude's token counting at `publishers/anthropic/models/count-tokens:rawPredict` with the model in the body
 *   (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/count-tokens), through
 *   {@link vertexClaudeCountAdapter}. Both authorize as chat does (fetchUpstream's `adapter` hooks).
 * @module
 */
import { GatewayError } from '../core/errors'
import { anthropicMessages } from '../protocols/anthropic-messages'
import { gemini } from '../protocols/gemini'
import type { Channel } from '../routing/catalog'
import { type ChatAdapter, channelHeaders, type UpstreamRequest } from './adapter'
import { anthropicAdapter } from './anthropic'
import { channelKeyMemo, stringSetting } from './channel-key-memo'
import { dropMetadataToken, metadataAccessToken, metadataProject } from './google/metadata'
import type { GoogleCredential } from './google/credential-json'
import { googleCredentialOf } from './google/credentials'
import { isAmbient } from './metadata-service'
import { afterVertexRefusal, cloudBetas, foldSystemMessages, splitBetas, withoutRefused } from './platform-betas'

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'
const GOOGLE_HOST = /^(?:([a-z0-9-]+)-)?aiplatform\.googleapis\.com$/

/** Claude models (`claude-sonnet-4-5@20250929`) go over Anthropic's protocol; every other model is Gemini's. */
export const isClaudeModel = (model: string) => model.startsWith('claude-')

/** The channel's key read once per key: chatUrl needs the project on every call, not a JSON parse each time. */
const keyOf = channelKeyMemo((key, from): { cred?: GoogleCredential; ambient?: true } => (isAmbient(key) ? { ambient: true } : { cred: googleCredentialOf(key, from) }))

/**
 * The project segment of an `ambient` channel without `settings.project`, until `authorize` puts in the one the
 * metadata server names (the url is built before any fetch can be awaited).
 */
const METADATA_PROJECT = `/projects/${encodeURIComponent('{project}')}/`


/** The base URL's origin and the region its host names (`us-east5-aiplatform.googleapis.com`), if any. */
function baseOf(ch: Channel): { url: URL; hostRegion?: string; google: boolean } {
	const url = new URL(ch.baseUrl)
	const m = GOOGLE_HOST.exec(url.hostname)
	return { url, hostRegion: m?.[1], google: m !== null }
}

/** `settings.region`, else the base URL's, else `global`. */
export function vertexRegion(ch: Channel, base = baseOf(ch)): string {
	return stringSetting(ch, 'region') ?? base.hostRegion ?? 'global'
}

/**
 * The origin and version prefix calls go to: on Google's hosts, the region's own (`global` has none in its name).
 * @example vertexRoot({ baseUrl: 'https://aiplatform.googleapis.com', settings: { region: 'us-east5' } }) === 'https://us-east5-aiplatform.googleapis.com/v1'
 */
export function vertexRoot(ch: Channel, region: string, base = baseOf(ch)): string {
	const { url, google } = base
	if (google) return `${url.protocol}//${region === 'global' ? '' : `${region}-`}aiplatform.googleapis.com/v1`
	return `${ch.baseUrl.replace(/\/+$/, '').replace(/\/v1(beta1?)?$/, '')}/v1`
}

/** A model name as one path segment; `@` (Claude's version suffix) stays as Vertex shows it. */
const segment = (model: string) => encodeURIComponent(model).replace(/%40/g, '@')

/**
 * The model's resource path under the project and region, or the express mode one (no project) for an API key.
 * The project is left empty when unknown: `authorize`, which every call runs, refuses it then (or, for `ambient`, asks
 * the metadata server and puts it in).
 */
function modelUrl(ch: Channel, publisher: 'anthropic' | 'google', model: string, method: string): string {
	const base = baseOf(ch)
	const region = vertexRegion(ch, base)
	const root = vertexRoot(ch, region, base)
	const k = keyOf(ch)
	if (!k.cred && !k.bad && !k.ambient && publisher === 'google') return `${root}/publishers/google/models/${segment(model)}:${method}`
	const project = stringSetting(ch, 'project') ?? k.cred?.projectId
	const projectPath = project === undefined && k.ambient ? METADATA_PROJECT : `/projects/${encodeURIComponent(project ?? '')}/`
	return `${root}${projectPath}locations/${encodeURIComponent(region)}/publishers/${publisher}/models/${segment(model)}:${method}`
}

/**
 * The bearer token of a credentials JSON (with its quota project, for user and workload credentials) or of the metadata
 * server; an express key for Gemini; a configuration error otherwise.
 */
async function authorizeVertex(ch: Channel, req: UpstreamRequest, claude: boolean, signal?: AbortSignal) {
	const k = keyOf(ch)
	if (k.bad) throw k.bad
	if (k.ambient) {
		if (req.url.includes(METADATA_PROJECT)) req.url = req.url.replace(METADATA_PROJECT, `/projects/${encodeURIComponent(await metadataProject())}/`)
		req.headers.authorization = `Bearer ${await metadataAccessToken(ch.id, ch.apiKey, signal)}`
		return
	}
	if (!k.cred) {
		if (claude) {
			const why = 'Claude on Vertex AI takes a credentials JSON (service_account, authorized_user, external_account, impersonated_service_account) or ambient, not an express mode API key'
			throw new GatewayError('unavailable', `channel ${ch.name} (vertex): ${why}`, { retryable: true, code: 'channel_misconfigured' })
		}
		req.headers['x-goog-api-key'] = ch.apiKey
		return
	}
	if (!stringSetting(ch, 'project') && !k.cred.projectId)
		throw new GatewayError('unavailable', `channel ${ch.name} (vertex): no project: set settings.project or use a key file with ${k.cred.projectField}`, { retryable: true, code: 'channel_misconfigured' })
	req.headers.authorization = `Bearer ${await k.cred.token(ch.id, ch.apiKey, signal)}`
	if (k.cred.quotaProject) req.headers['x-goog-user-project'] = k.cred.quotaProject
}

/** A 401 to a cached token: forgotten, and the call is made once more with a fresh one. An express key has nothing to renew. */
function reauthorizeVertex(ch: Channel, req: UpstreamRequest): boolean {
	const auth = req.headers.authorization
	if (auth === undefined || !auth.startsWith('Bearer ')) return false
	const k = keyOf(ch)
	if (k.ambient) return dropMetadataToken(ch.id, auth.slice(7))
	return k.cred?.drop(ch.id, auth.slice(7)) ?? false
}

const baseHeaders = (ch: Channel): Record<string, string> => ({ 'content-type': 'application/json', ...channelHeaders(ch) })

export const vertexClaudeAdapter: ChatAdapter = {
	protocol: anthropicMessages,
	chatUrl: (ch, model, stream) => modelUrl(ch, 'anthropic', model, stream ? 'streamRawPredict' : 'rawPredict'),
	headers(ch, inbound) {
		const h = baseHeaders(ch)
		// Vertex takes Anthropic's betas as the header (the version goes in the body).
		const beta = inbound?.get('anthropic-beta')
		if (beta) h['anthropic-beta'] = beta
		return h
	},
	// Automatic (request-level) caching is not documented for rawPredict: a whole-prompt cache marks the last block.
	upstreamOptions: (ch, model) => ({ ...anthropicAdapter.upstreamOptions!(ch, model), requestCacheControl: false }),
	// "The MCP connector … is not currently available on Amazon Bedrock or Vertex AI"
	// (https://platform.claude.com/docs/en/agents-and-tools/mcp-connector): the gateway runs the MCP servers.
	withoutMcpConnector: true,
	reshape(ch, req) {
		if (req.body === undefined) return
		const body = JSON.parse(req.body) as Record<string, unknown>
		// The model is in the URL; `stream` stays: streamRawPredict streams only when the body asks.
		delete body.model
		body.anthropic_version = VERTEX_ANTHROPIC_VERSION
		// In Vertex's names, without those this endpoint refused before (platform-betas.ts).
		const beta = req.headers['anthropic-beta']
		const betas = beta ? withoutRefused(ch, req.url, cloudBetas(splitBetas(beta))) : []
		if (beta) setBetas(req, betas)
		foldSystemMessages(body, betas)
		req.body = JSON.stringify(body)
	},
	authorize: (ch, req, signal) => authorizeVertex(ch, req, true, signal),
	reauthorize: reauthorizeVertex,
	async refused(ch, req, res) {
		const sent = req.headers['anthropic-beta']
		if (!sent) return false
		const said = (await res.json().catch(() => undefined)) as { error?: { message?: unknown } } | undefined
		const message = typeof said?.error?.message === 'string' ? said.error.message : ''
		const next = afterVertexRefusal(ch, req.url, splitBetas(sent), message)
		if (!next) return false
		setBetas(req, next)
		if (req.body !== undefined) {
			const body = JSON.parse(req.body) as Record<string, unknown>
			if (foldSystemMessages(body, next)) req.body = JSON.stringify(body)
		}
		return true
	},
}

const setBetas = (req: UpstreamRequest, betas: string[]) => {
	if (betas.length) req.headers['anthropic-beta'] = betas.join(',')
	else delete req.headers['anthropic-beta']
}

export const vertexGeminiAdapter: ChatAdapter = {
	protocol: gemini,
	chatUrl: (ch, model, stream) => modelUrl(ch, 'google', model, stream ? 'streamGenerateContent?alt=sse' : 'generateContent'),
	headers: baseHeaders,
	authorize: (ch, req, signal) => authorizeVertex(ch, req, false, signal),
	reauthorize: reauthorizeVertex,
}

/**
 * A method of a Gemini-publisher model (`countTokens`, `predict`) on this channel: the project's path, or express mode's.
 * @example vertexGoogleUrl(ch, 'text-embedding-005', 'predict') // '{root}/projects/p/locations/us-east5/publishers/google/models/text-embedding-005:predict'
 */
export const vertexGoogleUrl = (ch: Channel, model: string, method: string): string => modelUrl(ch, 'google', model, method)

/** Claude's token counter: one endpoint for every Claude model, which the body names. */
export const vertexClaudeCountUrl = (ch: Channel): string => modelUrl(ch, 'anthropic', 'count-tokens', 'rawPredict')

/**
 * Claude's hooks for `count-tokens:rawPredict`: as chat, but the body keeps its `model` (the endpoint serves every
 * Claude model and reads which from the body), with `anthropic_version` put in as Anthropic's Vertex SDK does.
 */
export const vertexClaudeCountAdapter: ChatAdapter = {
	...vertexClaudeAdapter,
	reshape(ch, req) {
		if (req.body === undefined) return
		req.body = JSON.stringify({ ...(JSON.parse(req.body) as Record<string, unknown>), anthropic_version: VERTEX_ANTHROPIC_VERSION })
		const beta = req.headers['anthropic-beta']
		if (beta) setBetas(req, withoutRefused(ch, req.url, cloudBetas(splitBetas(beta))))
	},
}

/** The channel type's adapter: Claude's until the model is known (`forModel`), as for the catalog's protocol questions. */
export const vertexAdapter: ChatAdapter = {
	...vertexClaudeAdapter,
	forModel: (model) => (isClaudeModel(model) ? vertexClaudeAdapter : vertexGeminiAdapter),
}
