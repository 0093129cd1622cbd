/**
 * GET /v1/realtime?model=…: OpenAI's Realtime API over WebSocket, relayed to the model's OpenAI-type channels.
 * Everything that can refuse the session is decided before the upgrade, answered in OpenAI's error shape: the key
 * (`Authorization: Bearer`, or the `openai-insecure-api-key.<key>` subprotocol browsers send), its rate limit and
 * `allowed_models`, the model and its channels, the first hold (402 when the balance cannot cover a response) and
 * the upstream handshake (with failover, as other routes fail over). Then the client's socket is upgraded, answering
 * the `realtime` subprotocol when offered, and the session (session.ts) relays and bills. A transcription session
 * (`?intent=transcription`) names its model only once connected: past the key and rate limit its socket is accepted
 * and transcription.ts routes, refuses and bills it.
 * The upgrade goes through Bun's `server.upgrade` with the session's handlers in the socket's data: Elysia's own
 * `websocket` handler, which every `app.listen` installs, calls them (`ws.data.open/message/close`), and the frames
 * reach them as they came (Elysia's `.ws()` would parse JSON text first).
 * @module
 */
import type { Server, ServerWebSocket } from 'bun'
import type { AuthToken } from '../../auth/api-key'
import { Elysia, t } from 'elysia'
import { GatewayError } from '../../core/errors'
import { missingKey, presentedKey } from '../../http/model-auth'
import { usageRecord } from '../../billing/usage-record'
import { openaiErrors } from '../../passthrough/schemas'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { responseBound, type SocketHandlers } from '../../relay/socket-relay'
import { channelTimeouts } from '../../relay/upstream-fetch'
import { tryChannels } from '../../routing/attempts'
import type { Services } from '../../services'
import { errorEvent, RealtimeSession } from './session'
import { isClientSecret, openClientSecret } from './client-secret'
import { realtimeSecretsModule } from './secrets'
import { TranscriptionSession } from './transcription'
import { openUpstream, realtimeRoute } from './upstream'

/** A minted session config as a `session.update` carries it: the model is the URL's (mapped per channel). */
const sessionConfig = ({ model: _model, ...rest }: Record<string, unknown>) => rest

const KEY_PROTOCOL = 'openai-insecure-api-key.'

/** The subprotocols a client offered (`Sec-WebSocket-Protocol: realtime, openai-insecure-api-key.sk-…`). */
const offeredProtocols = (request: Request): string[] =>
	(request.headers.get('sec-websocket-protocol') ?? '')
		.split(',')
		.map((p) => p.trim())
		.filter(Boolean)

/** The key in the Authorization header, else in the subprotocol browsers use (they cannot set headers). */
function realtimeKey(request: Request, protocols: string[]): string | undefined {
	const header = presentedKey(request, false)
	if (header) return header
	const p = protocols.find((x) => x.startsWith(KEY_PROTOCOL))
	return p ? p.slice(KEY_PROTOCOL.length) || undefined : undefined
}

/** The session kinds the gateway does not relay, as the error that says so. */
function unsupportedSession(query: Record<string, unknown>): GatewayError | undefined {
	if (typeof query.call_id === 'string')
		return new GatewayError('invalid_request', 'Sideband connections to a WebRTC or SIP call (?call_id=…) are not supported by this gateway: open a WebSocket session with ?model=…', {
			code: 'unsupported_value',
			param: 'call_id',
		})
}

/**
 * Accepts the socket only to tell the client why it is refused: an OpenAI `error` event, then close 1008 (policy
 * violation). False when the upgrade failed (the caller answers the error over HTTP).
 */
function refuseOnSocket(server: Server<unknown>, request: Request, protocols: string[], requestId: string, err: GatewayError): boolean {
	const event = errorEvent(`event_${requestId}`, err, null)
	const handlers: SocketHandlers = {
		open: (ws) => {
			ws.send(event)
			ws.close(1008, 'unsupported session')
		},
		message: () => {},
		close: () => {},
	}
	const headers: Record<string, string> = { 'x-request-id': requestId }
	if (protocols.includes('realtime')) headers['sec-websocket-protocol'] = 'realtime'
	return server.upgrade(request, { headers, data: handlers })
}

/**
 * A transcription session (transcription.ts): its model comes in its first session.update, so the socket is accepted
 * before anything is routed or held, and the session refuses on it (an `error` event) what it cannot serve.
 */
function transcriptionSession(
	svc: Services,
	c: { request: Request; server: Server<unknown> | null; requestId: string; startedAt: number; protocols: string[]; token: AuthToken; secretSession?: Record<string, unknown> },
) {
	if (c.request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || !c.server)
		throw new GatewayError('invalid_request', 'The Realtime API takes a WebSocket connection (Upgrade: websocket)', { status: 426, code: 'websocket_required' })
	const session = new TranscriptionSession({
		svc,
		token: c.token,
		requestId: c.requestId,
		startedAt: c.startedAt,
		handshake: { protocols: c.protocols, beta: c.request.headers.get('openai-beta') },
		secretSession: c.secretSession,
	})
	const handlers: SocketHandlers = {
		open: (ws) => session.clientOpen(ws),
		message: (_ws, data) => session.fromClient(data),
		close: (_ws, code, reason) => void session.clientClosed(code, reason),
	}
	const headers: Record<string, string> = { 'x-request-id': c.requestId }
	if (c.protocols.includes('realtime')) headers['sec-websocket-protocol'] = 'realtime'
	if (c.server.upgrade(c.request, { headers, data: handlers })) return
	throw new GatewayError('invalid_request', 'The WebSocket upgrade failed', { status: 426, code: 'websocket_required' })
}

/**
 * The socket's route, then the secrets' (secrets.ts): in this order, so the key check those take from modelAuth
 * stays off the socket's route, which reads its key from a subprotocol too.
 */
export const realtimeModule = (svc: Services) => new Elysia({ name: 'realtime' }).use(realtimeSocketModule(svc)).use(realtimeSecretsModule(svc))

const realtimeSocketModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).get(
		'/v1/realtime',
		async ({ request, server, set, query }) => {
			const requestId = set.headers['x-request-id'] as string
			const startedAt = Date.now()
			const protocols = offeredProtocols(request)
			const key = realtimeKey(request, protocols)
			if (!key) throw missingKey('openai')
			// An ephemeral client secret (secrets.ts) stands for its key, for the model and config it was minted for.
			const secret = isClientSecret(key) ? await openClientSecret(svc, key) : undefined
			const token = secret?.token ?? svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
			const admitted = svc.limits.admit(token)
			if (admitted) await admitted
			// Sideband connections to a WebRTC/SIP call (`?call_id=`, a call the gateway never saw): not relayed.
			const unsupported = unsupportedSession(query)
			if (unsupported) {
				// A WebSocket client cannot read a refused handshake's body (the AI SDK's streamTranscribe reported only
				// "OpenAI realtime transcription error"): the reason goes as an `error` event on an accepted socket.
				if (server && request.headers.get('upgrade')?.toLowerCase() === 'websocket' && refuseOnSocket(server as Server<unknown>, request, protocols, requestId, unsupported)) return
				throw unsupported
			}
			const transcription = secret ? secret.grant.session.type === 'transcription' : query.intent === 'transcription'
			if (secret && query.intent === 'transcription' && !transcription)
				throw new GatewayError('invalid_request', 'This client secret is for a conversation session, not a transcription one', { code: 'invalid_value', param: 'intent' })
			if (transcription) return transcriptionSession(svc, { request, server, requestId, startedAt, protocols, token, secretSession: secret?.grant.session })
			const asked = typeof query.model === 'string' ? query.model : ''
			if (secret && asked && asked !== secret.grant.model)
				throw new GatewayError('invalid_request', `This client secret is for model "${secret.grant.model}", not "${asked}"`, { code: 'invalid_value', param: 'model' })
			const model = secret?.grant.model ?? asked
			if (!model) throw new GatewayError('invalid_request', 'Missing required parameter: model (GET /v1/realtime?model=…)', { code: 'missing_required_parameter', param: 'model' })
			if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || !server)
				throw new GatewayError('invalid_request', 'The Realtime API takes a WebSocket connection (Upgrade: websocket)', { status: 426, code: 'websocket_required' })
			const route = realtimeRoute(svc, token, model)
			const channels = route.channels

			const owner = { accountId: token.accountId, tokenId: token.id }
			const bound = responseBound(route.price, 0)
			const hold = svc.ledger.reserveNow(owner, requestId, bound.want) ?? (await svc.ledger.reserve(owner, requestId, bound.want, bound.min))
			const session = new RealtimeSession({
				svc,
				token,
				requestId,
				startedAt,
				model,
				price: route.price,
				hold,
			})
			const handshake = { protocols, beta: request.headers.get('openai-beta') }
			const opened = await tryChannels(svc, channels, request.signal, (ch) =>
				openUpstream(ch, { model: ch.modelMap[model] ?? model }, handshake, channelTimeouts(ch.settings).firstByteMs, (data) => session.fromUpstream(data)),
			)
			if ('error' in opened) {
				const base = {
					requestId,
					token,
					model,
					endpoint: '/v1/realtime',
					stream: true,
					startedAt,
				}
				await hold.release(
					usageRecord(base, {
						channel: opened.channel,
						status: opened.error.status,
						endReason: 'error',
					}),
				)
				throw opened.error
			}
			session.connected(opened.ok, opened.channel, opened.channel.modelMap[model] ?? model)
			// The config the secret was minted with, before anything of the client's (the upstream model is in the URL).
			if (secret) session.configure({ type: 'session.update', session: sessionConfig(secret.grant.session) })
			const handlers: SocketHandlers = {
				open: (ws) => session.clientOpen(ws),
				message: (_ws, data) => session.fromClient(data),
				close: (_ws, code, reason) => void session.clientClosed(code, reason),
			}
			const headers: Record<string, string> = { 'x-request-id': requestId }
			// A browser fails the handshake unless the server picks one of the subprotocols it offered.
			if (protocols.includes('realtime')) headers['sec-websocket-protocol'] = 'realtime'
			if (
				(server as Server<unknown>).upgrade(request, {
					headers,
					data: handlers,
				})
			)
				return
			opened.ok.close(1000)
			await session.clientClosed(1000, '')
			throw new GatewayError('invalid_request', 'The WebSocket upgrade failed', { status: 426, code: 'websocket_required' })
		},
		{
			// Checked in the handler, after the key (as OpenAI answers a request without a key 401 whatever it asks).
			query: t.Object(
				{
					model: t.Optional(
						t.String({
							description: 'The model of the session, e.g. gpt-realtime (with a client secret: its model, or left out)',
						}),
					),
					intent: t.Optional(t.String({ description: '`transcription`: a transcription session, its model named in the first `session.update` (`audio.input.transcription.model`)' })),
					call_id: t.Optional(t.String({ description: 'Sideband connections to WebRTC/SIP calls are not supported: an `error` event (unsupported_value) on the socket, then close 1008; 400 to a plain GET' })),
				},
				{ additionalProperties: true },
			),
			response: {
				426: OpenAIErrorBody,
				...openaiErrors,
				503: OpenAIErrorBody,
				504: OpenAIErrorBody,
			},
			detail: {
				summary: 'Realtime API session (WebSocket)',
				description:
					'OpenAI Realtime API over WebSocket (`wss://…/v1/realtime?model=…`), relayed to OpenAI-compatible channels. Authenticate with `Authorization: Bearer sk-…` or the `openai-insecure-api-key.sk-…` subprotocol, or with an `ek_…` client secret (POST /v1/realtime/client_secrets) the same ways: then `model` may be left out (the secret names it) and the secret\'s session config is applied first. Each `response.done` is billed from its `response.usage` (one usage row per response). With `?intent=transcription` (or a client secret of `type: "transcription"`) a transcription session: its model comes in the first `session.update`, each completed transcription is billed at that model\'s audio prices from its `usage` (one row each). A conversation session that turns input audio transcription on (`session.audio.input.transcription.model`) is billed for each completed transcription the same way, besides its responses; an update naming a model the key may not use or without a price is answered with an `error` event and not forwarded. The session ends with an `error` event (`insufficient_quota`) when the balance cannot cover another response. A successful handshake answers 101 Switching Protocols; a plain GET without `Upgrade: websocket` answers 426.',
			},
		},
	)
