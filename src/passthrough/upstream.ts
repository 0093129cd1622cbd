/**
 * Where passthrough calls go and how they authenticate, per channel type. OpenAI-style channels (openai, rerank,
 * video, musicsvc) take `Authorization: Bearer`; midjourney-proxy (imgsvc) its `mj-api-secret` header; Gemini
 * `x-goog-api-key`; Anthropic `x-api-key` with its `anthropic-version`; Azure `api-key`, or an Entra ID token that
 * `credentialHooks` has fetchUpstream set. Channel `settings.headers` are added first so they can never replace the credentials.
 * @module
 */
import { type CallVia, channelHeaders, joinUrl } from '../providers/adapter'
import { ANTHROPIC_VERSION } from '../providers/anthropic'
import { azureAuth, azureCredentials, azureUrl } from '../providers/azure'
import { usesEntra } from '../providers/azure-entra'
import type { ChannelType } from '../providers/channel-types'
import { sentCredentials } from '../relay/sent-credentials'
import type { Channel } from '../routing/catalog'

/** Credentials (and configured extra headers) for a call to this channel. */
export function authHeaders(ch: Channel): Record<string, string> {
	const extra = channelHeaders(ch)
	switch (ch.type) {
		case 'imgsvc':
			return { ...extra, 'mj-api-secret': ch.apiKey }
		case 'gemini':
			return { ...extra, 'x-goog-api-key': ch.apiKey }
		case 'anthropic':
			return { ...extra, 'x-api-key': ch.apiKey, 'anthropic-version': ANTHROPIC_VERSION }
		case 'azure':
			return azureAuth(ch)
		default:
			return { ...extra, authorization: `Bearer ${ch.apiKey}` }
	}
}

const NO_HOOKS: CallVia = {}

/**
 * The credential hooks of a call to this channel, spread into fetchUpstream's init next to `authHeaders(ch)`: an Azure
 * channel whose key is a service principal gets its Entra ID token so (providers/azure-entra.ts), fetched, cached and
 * renewed after a 401; `{}` for every channel whose headers carry its key.
 * @example await fetchUpstream(url, { headers: jsonHeaders(ch), body, ...credentialHooks(ch) }, timeouts, signal)
 */
export const credentialHooks = (ch: Channel): CallVia => (ch.type === 'azure' && usesEntra(ch) ? { ch, adapter: azureCredentials } : NO_HOOKS)

/**
 * What `authHeaders(ch)` sends as credentials: cut from the task services' answers, which go back as they came
 * (midjourney-proxy refuses with HTTP 200 and its own words, which may repeat them; relay/sent-credentials.ts).
 */
export const channelCredentials = (ch: Channel): string[] => sentCredentials('', authHeaders(ch))

/** Headers for a JSON call to this channel. */
export const jsonHeaders = (ch: Channel): Record<string, string> => ({ ...authHeaders(ch), 'content-type': 'application/json' })

/**
 * `{base_url}{path}`, less a `key` query parameter (withoutKeyParam); for Gemini the API root without a trailing /v1
 * or /v1beta (as providers/gemini.ts does).
 */
export function channelUrl(ch: Channel, path: string): string {
	const base = ch.type === 'gemini' ? ch.baseUrl.replace(/\/v1(beta)?$/, '') : ch.baseUrl
	return joinUrl(base, withoutKeyParam(path))
}

/** Channel types that serve OpenAI's endpoints (embeddings, images, audio) in OpenAI's format. */
export const OPENAI_TYPES: readonly ChannelType[] = ['openai', 'azure']

/**
 * URL of an OpenAI endpoint (`/embeddings`, `/images/generations`…) for an upstream model: `{base_url}{path}`, or on
 * Azure the model's deployment (providers/azure.ts).
 * @example openaiUrl(ch, 'text-embedding-3-small', '/embeddings')
 */
export const openaiUrl = (ch: Channel, upstreamModel: string, path: string): string => (ch.type === 'azure' ? azureUrl(ch, upstreamModel, path) : channelUrl(ch, path))

/**
 * `path` without a `key` query parameter: the gateway reads `?key=` as a caller's key (Gemini routes), so a client
 * that sends it everywhere must not have it handed to a task service, a third party's server: every passthrough URL
 * (channelUrl) goes without it, submits and owned-task paths as well as the catch-alls.
 * @example withoutKeyParam('/mj/task/list?key=sk-1&page=2') === '/mj/task/list?page=2'
 */
export function withoutKeyParam(path: string): string {
	const q = path.indexOf('?')
	if (q < 0) return path
	const params = new URLSearchParams(path.slice(q + 1))
	if (!params.has('key')) return path
	params.delete('key')
	const rest = params.toString()
	return rest ? `${path.slice(0, q)}?${rest}` : path.slice(0, q)
}

/** The body's `model` renamed to the upstream's name (model_map), other fields untouched. */
export const withModel = <T extends Record<string, unknown>>(body: T, upstreamModel: string): T => ({ ...body, model: upstreamModel })
