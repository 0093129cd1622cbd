/**
 * Gemini's Live API over WebSocket, where @google/genai's `ai.live.connect` opens it:
 * `{root}/ws/google.ai.generativelanguage.{v1|v1beta|v1alpha}.GenerativeService.BidiGenerateContent?key=…` (the SDK
 * joins its base URL's origin and the path with a second slash, `{root}//ws/…`, which Google's servers take too, so
 * both are served), and `BidiGenerateContentConstrained?access_token=…` (ai.google.dev/gemini-api/docs/live-api/get-started-websocket;
 * the gateway mints no ephemeral tokens, so there the access token is a gateway key like any other).
 * The key (`?key=`, `x-goog-api-key`, Bearer) and its rate limit are checked before the upgrade, but a refusal is
 * told on the socket, as Google tells it (close.ts): the model comes only in the first message, and the session
 * (session.ts) routes, refuses, relays and bills. The upgrade goes through Bun's `server.upgrade` with the session's
 * handlers in the socket's data, as the Realtime relay does (modules/realtime/index.ts).
 * @module
 */
import type { Server } from 'bun'
import { Elysia, t } from 'elysia'
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import { missingKey, presentedKey } from '../../http/model-auth'
import { GeminiErrorBody } from '../../protocols/gemini'
import type { SocketHandlers } from '../../relay/socket-relay'
import type { Services } from '../../services'
import { liveClose } from './close'
import { LiveSession } from './session'
import { LIVE_VERSIONS, livePath, type LiveVersion } from './upstream'

const CONSTRAINED = 'BidiGenerateContentConstrained'

/** The key, its rate limit, and the catalog being reloaded: what the socket is refused for before its setup. */
async function admit(svc: Services, request: Request, method: string): Promise<AuthToken> {
	const key = presentedKey(request, true) ?? (method === CONSTRAINED ? new URL(request.url).searchParams.get('access_token')?.trim() || undefined : undefined)
	if (!key) throw missingKey('gemini')
	const token = svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
	const admitted = svc.limits.admit(token)
	if (admitted) await admitted
	const settling = svc.catalog.settling
	if (settling) await settling
	return token
}

/** How long a refused socket waits for the client's setup before it is closed anyway. */
const REFUSE_AFTER_MS = 5_000

/**
 * Handlers that only close the socket, with Google's code and reason for `err`: on the client's first message (its
 * setup), as every other refusal comes, else after `REFUSE_AFTER_MS`. google-genai for Python sends the setup right
 * after the handshake and reads a close only while it waits for `setupComplete` (an `APIError` "1007 …"): a close
 * already there when it sends comes out of websockets' `send` as a bare ConnectionClosedError instead.
 */
const refusing = (err: GatewayError, version: string): SocketHandlers => {
	let timer: Timer | undefined
	let closed = false
	const refuse = (ws: Parameters<SocketHandlers['open']>[0]) => {
		clearTimeout(timer)
		if (closed) return
		closed = true
		const { code, reason } = liveClose(err, '', version)
		ws.close(code, reason)
	}
	return {
		open: (ws) => void (timer = setTimeout(() => refuse(ws), REFUSE_AFTER_MS)),
		message: (ws) => refuse(ws),
		close: () => {
			closed = true
			clearTimeout(timer)
		},
	}
}

const liveSocket = (svc: Services, version: LiveVersion, method: string) => async ({ request, server, set }: { request: Request; server: Server<unknown> | null; set: { headers: Record<string, unknown> } }) => {
	const requestId = set.headers['x-request-id'] as string
	const startedAt = Date.now()
	if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || !server)
		throw new GatewayError('invalid_request', 'The Live API takes a WebSocket connection (Upgrade: websocket)', { status: 426, code: 'websocket_required' })
	let handlers: SocketHandlers
	try {
		const token = await admit(svc, request, method)
		const session = new LiveSession({ svc, token, requestId, startedAt, version, endpoint: livePath(version) })
		handlers = {
			open: (ws) => session.clientOpen(ws),
			message: (_ws, data) => session.fromClient(data),
			close: (_ws, code, reason) => void session.clientClosed(code, reason),
		}
	} catch (e) {
		if (!(e instanceof GatewayError)) throw e
		handlers = refusing(e, version)
	}
	if (server.upgrade(request, { headers: { 'x-request-id': requestId }, data: handlers })) return
	throw new GatewayError('invalid_request', 'The WebSocket upgrade failed', { status: 426, code: 'websocket_required' })
}

const DESCRIPTION =
	"Gemini Live API over WebSocket (`ai.live.connect` of @google/genai with `httpOptions.baseUrl` at the gateway), relayed to Gemini channels' Live endpoint with the channel's key. Authenticate with `?key=`, `x-goog-api-key` or Bearer (`?access_token=` on the Constrained method). The first message is the `setup`; its model is checked (allowed, known, priced, on a Gemini channel) and a refusal closes the socket with Google's code and reason (1007 a bad key or setup, 1008 a model or balance refused). Frames then pass both ways untouched; each turn (up to `serverContent.turnComplete`) is one usage row, billed from its `usageMetadata`. A plain GET without `Upgrade: websocket` answers 426."

/** Both versions, both methods, each at `/ws/…` and at the `//ws/…` the SDK builds (left out of the OpenAPI document). */
export const liveModule = (svc: Services) => {
	const app = new Elysia({ name: 'live', detail: { tags: ['Gemini'] } })
	for (const version of LIVE_VERSIONS)
		for (const method of ['BidiGenerateContent', CONSTRAINED]) {
			const path = livePath(version, method)
			const query = t.Object(
				{
					key: t.Optional(t.String({ description: 'The gateway key (or `x-goog-api-key`, Bearer)' })),
					...(method === CONSTRAINED ? { access_token: t.Optional(t.String({ description: 'A gateway key (the gateway mints no ephemeral tokens)' })) } : {}),
				},
				{ additionalProperties: true },
			)
			const hook = { query, response: { 400: GeminiErrorBody, 426: GeminiErrorBody } }
			const summary = method === CONSTRAINED ? `Live API session, ephemeral-token method (WebSocket, ${version})` : `Live API session (WebSocket, ${version})`
			app.get(path, liveSocket(svc, version, method), { ...hook, detail: { summary, description: DESCRIPTION } })
			app.get(`/${path}`, liveSocket(svc, version, method), { ...hook, detail: { hide: true } })
		}
	return app
}
