/**
 * Where passthrough calls go and how they authenticate, per channel type. OpenAI-style channels (openai, rerank,
 * video, musicsvc) take `Authorization: Bearer`; midjourney-proxy (imgsvc) its `mj-api-secret` header; Gemini
 * `x-goog-api-key`; Anthropic `x-api-key` with its `anthropic-version`. Channel `settings.headers` are added first so they can never replace the credentials.
 * @module
 */
import { channelHeaders, joinUrl } from '../providers/adapter'
import { ANTHROPIC_VERSION } from '../providers/anthropic'
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
		default:
			return { ...extra, authorization: `Bearer ${ch.apiKey}` }
	}
}

/**
 * What `authHeaders(ch)` sends as credentials: cut from the task services' answers, which go back as they came
 * (midjourney-proxy refuses with HTTP 200 and its own words, which may repeat them; relay/sent-credentials.ts).
 */
export const channelCredentials = (ch: Channel): string[] => sentCredentials('', authHeaders(ch))

/** Headers for a JSON call to this channel. */
export const jsonHeaders = (ch: Channel): Record<string, string> => ({ ...authHeaders(ch), 'content-type': 'application/json' })

/** `{base_url}{path}`; for Gemini the API root without a trailing /v1 or /v1beta (as providers/gemini.ts does). */
export function channelUrl(ch: Channel, path: string): string {
	const base = ch.type === 'gemini' ? ch.baseUrl.replace(/\/v1(beta)?$/, '') : ch.baseUrl
	return joinUrl(base, path)
}

/** The body's `model` renamed to the upstream's name (model_map), other fields untouched. */
export const withModel = <T extends Record<string, unknown>>(body: T, upstreamModel: string): T => ({ ...body, model: upstreamModel })
