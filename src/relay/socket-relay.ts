/**
 * What the WebSocket relays (OpenAI's Realtime API, Gemini's Live API) share: the hold for an answer, the handlers an upgraded socket runs,
 * the open sessions (closed and billed at shutdown), the limits on a client that does not read and on the wait for a
 * turn's usage, and the upstream socket's opening (with a timeout and failover-worthy refusals).
 * @module
 */
import type { ServerWebSocket } from 'bun'
import { upperBound } from '../billing/pricing'
import { GatewayError } from '../core/errors'
import type { AttemptResult } from '../routing/attempts'
import type { ModelInfo } from '../routing/catalog'
import { DEFAULT_MAX_OUTPUT, MIN_ANSWER_TOKENS } from './budget'

/** How long a client that left waits, upstream, for the usage of the answer it left running. */
export const DRAIN_MS = 5_000
/** How long a session cut at shutdown waits for the usage of its running answer before estimating it. */
export const SHUTDOWN_DRAIN_MS = 1_000
/**
 * Bytes that may wait for a client that does not read (a minute of PCM16 audio is about 3.8 MB in base64 events).
 * Below Bun's own per-socket `backpressureLimit` (16 MB), past which `send` silently drops frames: the client would
 * get a session with holes in it, never told.
 */
export const CLIENT_BUFFER_LIMIT = 8 * 1024 * 1024

/** Input tokens a new turn may add to the conversation before the next answer (about 3 minutes of audio input). */
export const TURN_TOKENS = 2048

/**
 * The hold for one more answer (a Realtime response, a Live turn) after a conversation of `context` tokens: `want`
 * when the headroom allows, at least `min`.
 */
export function responseBound(price: ModelInfo, context: number): { want: number; min: number } {
	const input = context + TURN_TOKENS
	return {
		want: upperBound(input, price.maxOutputTokens ?? DEFAULT_MAX_OUTPUT, price),
		min: upperBound(input, MIN_ANSWER_TOKENS, price),
	}
}

/** What Elysia's `websocket` handler calls for a socket upgraded with these handlers in its data. */
export type SocketHandlers = {
	open(ws: ServerWebSocket<unknown>): void
	message(ws: ServerWebSocket<unknown>, data: string | Buffer): void
	close(ws: ServerWebSocket<unknown>, code: number, reason: string): void
}

/** The sessions open in this process (every kind), for shutdown. */
export const live = new Set<{ shutdown(): Promise<void> }>()

/** Shutdown, once the grace period ran out: closes every open session (1001 both ways) and bills what each was running. */
export async function shutdownSessions(): Promise<void> {
	await Promise.all([...live].map((s) => s.shutdown()))
}

/** WebSocket close codes that are reported, never sent (RFC 6455 §7.4.1): relayed as 1011. */
const UNSENDABLE = new Set([1004, 1005, 1006, 1015])
export const sendableCode = (code: number) => (UNSENDABLE.has(code) || code < 1000 || code > 4999 ? 1011 : code)

/**
 * Sends an upstream frame to the client; false when the client is too slow (a frame dropped, or more than
 * `CLIENT_BUFFER_LIMIT` bytes waiting for it), and the session should end.
 */
export function sendToClient(ws: ServerWebSocket<unknown>, data: string | ArrayBuffer | Uint8Array): boolean {
	const sent = ws.send(data)
	return sent !== 0 && ws.getBufferedAmount() <= CLIENT_BUFFER_LIMIT
}

/**
 * Opens an upstream socket; resolves once it is open (frames it sends meanwhile go to `onFrame` from the start). A
 * refused handshake or silence past `timeoutMs` is a retryable failure: another channel may serve the session.
 * `what` names the API in the errors ("Realtime", "Live").
 */
export function openSocket(
	url: string,
	init: { headers: Record<string, string>; protocols?: string[] },
	timeoutMs: number,
	onFrame: (data: string | ArrayBuffer) => void,
	what: string,
): Promise<AttemptResult<WebSocket>> {
	return new Promise((resolve) => {
		let ws: WebSocket
		try {
			// Bun's WebSocket takes headers in its options object (not in the standard constructor's types).
			ws = new WebSocket(url, init as unknown as string[])
		} catch (e) {
			return resolve({
				error: new GatewayError('upstream', `Could not open the upstream ${what} socket: ${(e as Error).message}`, { code: 'upstream_error', retryable: true }),
			})
		}
		ws.binaryType = 'arraybuffer'
		ws.addEventListener('message', (e) => onFrame(e.data as string | ArrayBuffer))
		const fail = (error: GatewayError) => {
			clearTimeout(timer)
			ws.close()
			resolve({ error })
		}
		const timer = setTimeout(() => fail(new GatewayError('timeout', `The upstream ${what} socket did not open in time`, { code: 'upstream_timeout', retryable: true })), timeoutMs)
		ws.addEventListener('open', () => {
			clearTimeout(timer)
			resolve({ ok: ws })
		})
		// Before `open` only: a handshake the upstream refused (its status is not exposed to WebSocket clients).
		const refused = () => fail(new GatewayError('upstream', `The upstream refused the ${what} connection`, { code: 'upstream_error', retryable: true }))
		ws.addEventListener('error', refused, { once: true })
		ws.addEventListener('open', () => ws.removeEventListener('error', refused), { once: true })
	})
}
