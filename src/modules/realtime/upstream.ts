/**
 * The upstream side of a Realtime session: the channel's WebSocket URL (`{base_url}/realtime?model=…` in ws/wss
 * form) and the handshake, authenticated with the channel's key. Of the client's subprotocols only those that select
 * the protocol itself go upstream (`realtime`, the beta's `openai-beta.realtime-v1`): never the client's key
 * (`openai-insecure-api-key.…`) nor its organization or project.
 * @module
 */
import { GatewayError } from '../../core/errors'
import type { AttemptResult } from '../../routing/attempts'
import type { AuthToken } from '../../auth/api-key'
import { resolveModel } from '../../relay/budget'
import type { Channel, ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { authHeaders } from '../../passthrough/upstream'
import { joinUrl } from '../../providers/adapter'
import { openSocket } from '../../relay/socket-relay'

/** What a session connects to: a conversation with a model, or a transcription session (its model named in session.update). */
export type RealtimeTarget = { model: string } | { intent: 'transcription' }

/** `http(s)://host/v1` → `ws(s)://host/v1/realtime?model=…` (or `?intent=transcription`). */
export function realtimeUrl(ch: Channel, target: RealtimeTarget): string {
	const u = new URL(joinUrl(ch.baseUrl, '/realtime'))
	u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
	if ('model' in target) u.searchParams.set('model', target.model)
	else u.searchParams.set('intent', target.intent)
	return u.toString()
}

/** Subprotocols that carry the client's credentials or account routing: for the gateway alone. */
const PRIVATE_PROTOCOL = /^openai-(insecure-api-key|organization|project)\./i

export const forwardedProtocols = (offered: string[]) => offered.filter((p) => !PRIVATE_PROTOCOL.test(p))

/** What of the client's handshake goes upstream. */
export type ClientHandshake = { protocols: string[]; beta: string | null }

/** Opens the upstream socket (relay/socket-relay.ts), with the channel's key and the client's protocol selection. */
export function openUpstream(
	ch: Channel,
	target: RealtimeTarget,
	client: ClientHandshake,
	timeoutMs: number,
	onFrame: (data: string | ArrayBuffer) => void,
): Promise<AttemptResult<WebSocket>> {
	const headers: Record<string, string> = authHeaders(ch)
	if (client.beta) headers['openai-beta'] = client.beta
	return openSocket(realtimeUrl(ch, target), { headers, protocols: forwardedProtocols(client.protocols) }, timeoutMs, onFrame, 'Realtime')
}

/**
 * The route of a Realtime model for a key: its `allowed_models`, the model's price and its OpenAI-type channels (the
 * only ones that speak the Realtime protocol).
 */
export function realtimeRoute(svc: Services, token: AuthToken, model: string): { channels: Channel[]; price: ModelInfo } {
	const route = resolveModel(svc, token, model)
	const channels = route.channels.filter((c) => c.type === 'openai')
	if (!channels.length)
		throw new GatewayError('invalid_request', `The Realtime API is not available for model "${model}": it is served only by OpenAI-compatible channels`, {
			code: 'unsupported_for_model',
			param: 'model',
		})
	return { channels, price: route.price }
}
