/**
 * Mock of OpenAI's Realtime API over WebSocket (`wss://api.openai.com/v1/realtime?model=…`), from the documented
 * events (platform.openai.com/docs/api-reference/realtime-server-events): `session.created` on connect; on
 * `response.create`, `response.created`, two `response.output_audio.delta`, a transcript delta and `response.done`
 * carrying `response.usage` (`REALTIME_USAGE`); on `response.cancel` of a response still running (its `response_id`, else the latest), its
 * `response.done` with status `cancelled` and the usage so far. Binary frames are echoed back as they came.
 * Test knobs: a `response.create` whose `response.metadata.mock` is `"hold"` stops after its first delta until
 * cancelled (`"stall"`: never answers the cancel either; `response.metadata.audio_ms`: its delta carries that many ms of
 * PCM16 24 kHz audio); a client event `mock.hangup` makes the server close the socket (code 1011); `mock.flood` with
 * `count` and `bytes` sends that many binary frames of that size at once.
 * Its own server, since the shared mock server speaks HTTP only. Records every handshake and every frame received.
 * @module
 */
import type { ServerWebSocket } from 'bun'

/** `response.usage` of every completed response: 120 input tokens (40 of them cached text), 250 output. */
export const REALTIME_USAGE = {
	total_tokens: 370,
	input_tokens: 120,
	output_tokens: 250,
	input_token_details: {
		text_tokens: 50,
		audio_tokens: 70,
		image_tokens: 0,
		cached_tokens: 40,
		cached_tokens_details: {
			text_tokens: 40,
			audio_tokens: 0,
			image_tokens: 0,
		},
	},
	output_token_details: { text_tokens: 50, audio_tokens: 200 },
}

/** `response.usage` of a cancelled held response. */
export const REALTIME_CANCELLED_USAGE = {
	total_tokens: 130,
	input_tokens: 120,
	output_tokens: 10,
	input_token_details: {
		text_tokens: 120,
		audio_tokens: 0,
		image_tokens: 0,
		cached_tokens: 0,
		cached_tokens_details: { text_tokens: 0, audio_tokens: 0, image_tokens: 0 },
	},
	output_token_details: { text_tokens: 2, audio_tokens: 8 },
}

export type RealtimeHandshake = {
	url: string
	headers: Record<string, string>
	protocols: string[]
}

export type RealtimeMock = {
	/** http:// base, as a channel's `base_url` (…/v1). */
	url: string
	handshakes: RealtimeHandshake[]
	/** Frames received from the gateway, in order (text as strings, binary as bytes). */
	received: Array<string | Uint8Array>
	/** Sockets the gateway closed, with their close code. */
	closed: number[]
	stop(): Promise<void>
}

/** `held`: responses stopped after their first delta, by id, oldest first; true when they never answer a cancel. */
type Conn = { model: string; seq: number; held: Map<string, boolean> }

const AUDIO_CHUNKS = ['AAABAAIAAwAEAAUABgAHAAgACQAKAAsADAANAA4ADwAQ', 'EQASABMAFAAVABYAFwAYABkAGgAbABwAHQAeAB8AIAAh']

export async function startRealtimeMock(opts: { apiKey: string }): Promise<RealtimeMock> {
	const handshakes: RealtimeHandshake[] = []
	const received: Array<string | Uint8Array> = []
	const closed: number[] = []
	const send = (ws: ServerWebSocket<Conn>, event: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: `event_${++ws.data.seq}`, ...event }))

	const server = Bun.serve<Conn, never>({
		port: 0,
		hostname: '127.0.0.1',
		fetch(req, srv) {
			const u = new URL(req.url)
			const headers = Object.fromEntries(req.headers)
			const protocols = (req.headers.get('sec-websocket-protocol') ?? '')
				.split(',')
				.map((p) => p.trim())
				.filter(Boolean)
			handshakes.push({ url: req.url, headers, protocols })
			if (u.pathname !== '/v1/realtime')
				return Response.json(
					{
						error: {
							message: `Invalid URL (GET ${u.pathname})`,
							type: 'invalid_request_error',
							param: null,
							code: null,
						},
					},
					{ status: 404 },
				)
			if (req.headers.get('authorization') !== `Bearer ${opts.apiKey}`)
				return Response.json(
					{
						error: {
							message: 'Incorrect API key provided',
							type: 'invalid_request_error',
							param: null,
							code: 'invalid_api_key',
						},
					},
					{ status: 401 },
				)
			const ok = srv.upgrade(req, {
				data: { model: u.searchParams.get('model') ?? '', seq: 0, held: new Map() },
				headers: protocols.includes('realtime') ? { 'sec-websocket-protocol': 'realtime' } : undefined,
			})
			return ok ? undefined : new Response('Expected a WebSocket upgrade', { status: 426 })
		},
		websocket: {
			open(ws) {
				send(ws, {
					type: 'session.created',
					session: {
						id: 'sess_mock1',
						object: 'realtime.session',
						type: 'realtime',
						model: ws.data.model,
						output_modalities: ['audio'],
					},
				})
			},
			message(ws, message) {
				if (typeof message !== 'string') {
					received.push(new Uint8Array(message))
					ws.send(message)
					return
				}
				received.push(message)
				const event = JSON.parse(message) as {
					type: string
					response?: { metadata?: Record<string, string> }
					response_id?: string
					count?: number
					bytes?: number
				}
				if (event.type === 'mock.hangup') return ws.close(1011, 'mock hangup')
				if (event.type === 'mock.flood') {
					for (let i = 0; i < (event.count ?? 0); i++) ws.send(new Uint8Array(event.bytes ?? 0).fill(i & 255))
					return
				}
				// The named response, else the latest: several may run at once (out-of-band, `conversation: "none"`).
				const cancelled = event.type === 'response.cancel' ? (event.response_id ?? [...ws.data.held.keys()].at(-1)) : undefined
				if (cancelled && ws.data.held.get(cancelled) === false) {
					ws.data.held.delete(cancelled)
					send(ws, {
						type: 'response.done',
						response: {
							id: cancelled,
							object: 'realtime.response',
							status: 'cancelled',
							status_details: { type: 'cancelled', reason: 'client_cancelled' },
							output: [],
							usage: REALTIME_CANCELLED_USAGE,
						},
					})
					return
				}
				if (event.type !== 'response.create') return
				const id = `resp_${ws.data.seq + 1}`
				send(ws, {
					type: 'response.created',
					response: {
						id,
						object: 'realtime.response',
						status: 'in_progress',
						output: [],
						usage: null,
					},
				})
				send(ws, {
					type: 'response.output_audio.delta',
					response_id: id,
					item_id: 'item_1',
					output_index: 0,
					content_index: 0,
					delta: event.response?.metadata?.audio_ms ? Buffer.alloc(Number(event.response.metadata.audio_ms) * 48).toString('base64') : AUDIO_CHUNKS[0],
				})
				const mock = event.response?.metadata?.mock
				if (mock === 'hold' || mock === 'stall') {
					ws.data.held.set(id, mock === 'stall')
					return
				}
				send(ws, {
					type: 'response.output_audio.delta',
					response_id: id,
					item_id: 'item_1',
					output_index: 0,
					content_index: 0,
					delta: AUDIO_CHUNKS[1],
				})
				send(ws, {
					type: 'response.output_audio_transcript.delta',
					response_id: id,
					item_id: 'item_1',
					output_index: 0,
					content_index: 0,
					delta: 'Hello there.',
				})
				send(ws, {
					type: 'response.done',
					response: {
						id,
						object: 'realtime.response',
						status: 'completed',
						status_details: null,
						output: [],
						usage: REALTIME_USAGE,
					},
				})
			},
			close(_ws, code) {
				closed.push(code)
			},
		},
	})
	return {
		url: `http://127.0.0.1:${server.port}/v1`,
		handshakes,
		received,
		closed,
		stop: () => server.stop(true),
	}
}
