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
 * Transcription sessions (`?intent=transcription`, platform.openai.com/docs/guides/realtime-transcription):
 * `session.created` of `type: "transcription"`; `session.update` / `transcription_session.update` set the
 * transcription model (answered `session.updated` / `transcription_session.updated`); `input_audio_buffer.append`
 * fills the buffer (`….clear` empties it); `input_audio_buffer.commit` answers `input_audio_buffer.committed`, a
 * `conversation.item.input_audio_transcription.delta` and `….completed` with `transcriptionUsage` (whisper-1 by
 * duration, the others by tokens), or the `error` `input_audio_buffer_commit_empty` under 100 ms of audio. Knobs: a
 * transcription `prompt` of `mock:silent` never completes a commit, `mock:fail` answers `….failed`.
 * Conversation sessions transcribe their input audio the same way once a `session.update` turns transcription on
 * (GA `audio.input.transcription`, the beta's `input_audio_transcription`; answered `session.updated` with the
 * transcription in force, null when off): a commit answers `input_audio_buffer.committed`, `conversation.item.added`
 * and, when on, the transcription events above.
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

/** PCM16 at 24 kHz mono, the transcription sessions' default format. */
const PCM_BYTES_PER_SECOND = 48_000

/**
 * The `usage` of a completed transcription of `bytes` of PCM16 audio: whisper-1 by duration, the others by tokens
 * (10 audio tokens a second, 4 output tokens).
 */
export function transcriptionUsage(model: string, bytes: number) {
	const seconds = bytes / PCM_BYTES_PER_SECOND
	if (model === 'whisper-1') return { type: 'duration' as const, seconds }
	const audio = Math.ceil(seconds * 10)
	return { type: 'tokens' as const, total_tokens: audio + 4, input_tokens: audio, input_token_details: { text_tokens: 0, audio_tokens: audio }, output_tokens: 4 }
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
type Transcribing = { model: string; prompt: string; bytes: number; beta: boolean }
type Conn = { model: string; seq: number; held: Map<string, boolean>; transcription?: Transcribing; input: Transcribing }

const AUDIO_CHUNKS = ['AAABAAIAAwAEAAUABgAHAAgACQAKAAsADAANAA4ADwAQ', 'EQASABMAFAAVABYAFwAYABkAGgAbABwAHQAeAB8AIAAh']

export async function startRealtimeMock(opts: { apiKey: string }): Promise<RealtimeMock> {
	const handshakes: RealtimeHandshake[] = []
	const received: Array<string | Uint8Array> = []
	const closed: number[] = []
	const send = (ws: ServerWebSocket<Conn>, event: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: `event_${++ws.data.seq}`, ...event }))

	const transcribe = (ws: ServerWebSocket<Conn>, event: Record<string, any>, tr: NonNullable<Conn['transcription']>): void => {
		if (!ws.data.transcription && event.type === 'session.update') {
			// A conversation session: the transcription set (null turns it off), left as it was when not mentioned.
			const ga = event.session?.audio?.input
			const beta = event.session && 'input_audio_transcription' in event.session
			const t = ga && 'transcription' in ga ? ga.transcription : beta ? event.session.input_audio_transcription : undefined
			if (t === null) tr.model = ''
			else if (t) {
				if (t.model) tr.model = t.model
				tr.prompt = typeof t.prompt === 'string' ? t.prompt : ''
			}
			const transcription = tr.model ? { model: tr.model, prompt: tr.prompt } : null
			const session = beta
				? { id: 'sess_mock1', object: 'realtime.session', model: ws.data.model, input_audio_format: 'pcm16', input_audio_transcription: transcription && { model: tr.model } }
				: { id: 'sess_mock1', object: 'realtime.session', type: 'realtime', model: ws.data.model, audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription } } }
			send(ws, { type: 'session.updated', session })
			return
		}
		if (event.type === 'session.update' || event.type === 'transcription_session.update') {
			const t = event.session?.audio?.input?.transcription ?? event.session?.input_audio_transcription
			if (t?.model) tr.model = t.model
			if (typeof t?.prompt === 'string') tr.prompt = t.prompt
			const session = { id: 'sess_mock1', object: 'realtime.session', type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: { model: tr.model, prompt: tr.prompt } } } }
			send(ws, { type: event.type === 'session.update' ? 'session.updated' : 'transcription_session.updated', session })
			return
		}
		if (event.type === 'input_audio_buffer.append') tr.bytes += Buffer.from(String(event.audio ?? ''), 'base64').length
		else if (event.type === 'input_audio_buffer.clear') {
			tr.bytes = 0
			send(ws, { type: 'input_audio_buffer.cleared' })
		} else if (event.type === 'input_audio_buffer.commit') {
			if (tr.bytes < PCM_BYTES_PER_SECOND / 10) {
				send(ws, {
					type: 'error',
					error: { type: 'invalid_request_error', code: 'input_audio_buffer_commit_empty', message: 'Error committing input audio buffer: buffer too small.', param: null, event_id: event.event_id ?? null },
				})
				return
			}
			const item = `item_${++ws.data.seq}`
			const bytes = tr.bytes
			tr.bytes = 0
			send(ws, { type: 'input_audio_buffer.committed', previous_item_id: null, item_id: item })
			if (!ws.data.transcription) {
				send(ws, { type: 'conversation.item.added', previous_item_id: null, item: { id: item, type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_audio', transcript: null }] } })
				if (!tr.model) return
			}
			if (tr.prompt === 'mock:silent') return
			if (tr.prompt === 'mock:fail') {
				send(ws, {
					type: 'conversation.item.input_audio_transcription.failed',
					item_id: item,
					content_index: 0,
					error: { type: 'transcription_error', code: 'audio_unintelligible', message: 'The audio could not be transcribed.', param: null },
				})
				return
			}
			send(ws, { type: 'conversation.item.input_audio_transcription.delta', item_id: item, content_index: 0, delta: 'Hello' })
			send(ws, { type: 'conversation.item.input_audio_transcription.completed', item_id: item, content_index: 0, transcript: 'Hello world.', usage: transcriptionUsage(tr.model, bytes) })
		} else if (event.type === 'response.create') send(ws, { type: 'error', error: { type: 'invalid_request_error', code: 'invalid_request', message: 'Transcription sessions have no responses', param: null } })
	}

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
				data: {
					model: u.searchParams.get('model') ?? '',
					seq: 0,
					held: new Map(),
					transcription: u.searchParams.get('intent') === 'transcription' ? { model: '', prompt: '', bytes: 0, beta: !!req.headers.get('openai-beta') } : undefined,
					input: { model: '', prompt: '', bytes: 0, beta: !!req.headers.get('openai-beta') },
				},
				headers: protocols.includes('realtime') ? { 'sec-websocket-protocol': 'realtime' } : undefined,
			})
			return ok ? undefined : new Response('Expected a WebSocket upgrade', { status: 426 })
		},
		websocket: {
			open(ws) {
				const tr = ws.data.transcription
				if (tr) {
					const session = { id: 'sess_mock1', object: 'realtime.session', type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 24_000 }, transcription: null } } }
					send(ws, { type: tr.beta ? 'transcription_session.created' : 'session.created', session })
					return
				}
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
				if (ws.data.transcription) {
					transcribe(ws, event as Record<string, any>, ws.data.transcription)
					return
				}
				if (event.type === 'session.update' || event.type.startsWith('input_audio_buffer.')) {
					transcribe(ws, event as Record<string, any>, ws.data.input)
					return
				}
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
