/**
 * The upstream side of a Live session: the channel's Live endpoint (`{base_url}/ws/google.ai.generativelanguage.
 * {version}.GenerativeService.BidiGenerateContent` in ws/wss form, the version the client used) and its handshake,
 * authenticated with the channel's key in `x-goog-api-key` (never `?key=`, which ends up in access logs, and never
 * the client's key).
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import { channelHeaders, joinUrl } from '../../providers/adapter'
import { resolveModel } from '../../relay/budget'
import { openSocket } from '../../relay/socket-relay'
import type { AttemptResult } from '../../routing/attempts'
import type { Channel, ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'

/** The API versions the Live endpoint is served under (@google/genai 3.x connects to v1 by default; v1alpha for features still in preview, and ephemeral tokens). */
export const LIVE_VERSIONS = ['v1', 'v1beta', 'v1alpha'] as const
export type LiveVersion = (typeof LIVE_VERSIONS)[number]

/** The path of the Live endpoint: `BidiGenerateContent`, or `BidiGenerateContentConstrained` (ephemeral tokens, v1alpha). */
export const livePath = (version: LiveVersion, method = 'BidiGenerateContent') => `/ws/google.ai.generativelanguage.${version}.GenerativeService.${method}`

/** `https://generativelanguage.googleapis.com[/v1beta]` → `wss://…/ws/google.ai.generativelanguage.{version}.GenerativeService.BidiGenerateContent`. */
export function liveUrl(ch: Channel, version: LiveVersion): string {
	const u = new URL(joinUrl(ch.baseUrl.replace(/\/v1(alpha|beta)?\/?$/, ''), livePath(version)))
	u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
	return u.toString()
}

/** Opens the channel's Live socket (relay/socket-relay.ts); frames it sends go to `onFrame` from the start. */
export function openLiveUpstream(ch: Channel, version: LiveVersion, timeoutMs: number, onFrame: (data: string | ArrayBuffer) => void): Promise<AttemptResult<WebSocket>> {
	return openSocket(liveUrl(ch, version), { headers: { ...channelHeaders(ch), 'x-goog-api-key': ch.apiKey } }, timeoutMs, onFrame, 'Live')
}

/** The route of a Live model for a key: its `allowed_models`, the model's price and its Gemini-type channels (the only ones that speak Live). */
export function liveRoute(svc: Services, token: AuthToken, model: string): { channels: Channel[]; price: ModelInfo } {
	const route = resolveModel(svc, token, model)
	const channels = route.channels.filter((c) => c.type === 'gemini')
	if (!channels.length)
		throw new GatewayError('invalid_request', `The Live API is not available for model "${model}": it is served only by Gemini channels`, { code: 'unsupported_for_model', param: 'model' })
	return { channels, price: route.price }
}
