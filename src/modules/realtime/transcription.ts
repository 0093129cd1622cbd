/**
 * A Realtime transcription session (`/v1/realtime?intent=transcription`, or a client secret minted for
 * `session.type: "transcription"`): the client's audio is transcribed as it comes, no responses. Its model is named
 * only in the session config (`audio.input.transcription.model`, the beta's `input_audio_transcription.model`), so
 * the client's socket is accepted first and the session waits for the first `session.update` /
 * `transcription_session.update` (a secret's config names it at once): then the model is checked for the key
 * (allowed, priced, served by an OpenAI channel; else an `error` event and close 1008), the upstream opened with
 * failover and the update forwarded, the model renamed as the channel maps it. The client's frames sent meanwhile
 * wait, in order. A later update naming another model, or a `response.create`, is answered with an `error` event and
 * not forwarded (it would bill another model's price, or a response at none).
 *
 * Billing (transcription-meter.ts): each completed transcription is billed from its usage at the model's price, one
 * usage row each, so the balance and the key's limit follow a long session as it runs, as conversation sessions bill
 * each response; audio is forwarded only once held for. When no more can be held the client gets an `error` event
 * (`insufficient_quota`) and both sockets close. A client that left waits at most `DRAIN_MS` for the transcriptions
 * of what it committed; nothing stays held once both sockets are closed.
 * @module
 */
import type { ServerWebSocket } from 'bun'
import type { AuthToken } from '../../auth/api-key'
import type { RecordBase } from '../../billing/usage-record'
import { GatewayError } from '../../core/errors'
import { channelTimeouts } from '../../relay/upstream-fetch'
import type { Channel } from '../../routing/catalog'
import { tryChannels } from '../../routing/attempts'
import type { Services } from '../../services'
import { audioBytesPerSecond, base64Bytes } from './estimate'
import { DRAIN_MS, live, SHUTDOWN_DRAIN_MS } from '../../relay/socket-relay'
import { errorEvent } from './session'
import { formatOf, transcriptionModelOf, withModel } from './transcription-config'
import { TranscriptionMeter } from './transcription-meter'
import { type ClientHandshake, openUpstream, realtimeRoute } from './upstream'

type Json = Record<string, any>
type Frame = string | ArrayBuffer | Uint8Array

const parse = (text: string): Json | undefined => {
	try {
		const v = JSON.parse(text)
		return v && typeof v === 'object' ? v : undefined
	} catch {
		return undefined
	}
}

const UPDATES = new Set(['session.update', 'transcription_session.update'])

export type TranscriptionInit = {
	svc: Services
	token: AuthToken
	requestId: string
	startedAt: number
	handshake: ClientHandshake
	/** A client secret's config (it names the model): applied upstream first. */
	secretSession?: Json
}

export class TranscriptionSession {
	private client: ServerWebSocket<unknown> | undefined
	private upstream: WebSocket | undefined
	private channel: Channel | undefined
	private model: string | undefined
	private upstreamModel: string | undefined
	/** Client frames waiting for the upstream or for a hold, in order; undefined when none wait. */
	private queued: Array<string | Buffer> | undefined
	/** Upstream frames that came before the client's socket was open. */
	private waiting: Frame[] = []
	private readonly meter: TranscriptionMeter
	private refusals = 0
	private clientGone = false
	private finished = false
	private shuttingDown = false
	private readonly abort = new AbortController()
	private readonly base: RecordBase

	constructor(private readonly s: TranscriptionInit) {
		this.base = { requestId: s.requestId, token: s.token, model: '', endpoint: '/v1/realtime', stream: true, startedAt: s.startedAt }
		this.meter = new TranscriptionMeter({ svc: s.svc, token: s.token, base: this.base, channel: () => this.channel, endReason: () => (this.clientGone ? this.abandonReason() : 'ok') })
	}

	clientOpen(ws: ServerWebSocket<unknown>) {
		this.client = ws
		live.add(this)
		for (const f of this.waiting) ws.send(f)
		this.waiting = []
		if (this.s.secretSession) {
			this.queued = []
			void this.connect(this.s.secretSession, undefined)
		}
	}

	fromClient(data: string | Buffer) {
		if (this.clientGone) return
		if (this.queued) {
			this.queued.push(data)
			return
		}
		const event = typeof data === 'string' ? parse(data) : undefined
		if (!this.upstream) {
			// The first event must name the model: nothing can be billed, or routed, before.
			const model = UPDATES.has(event?.type) ? transcriptionModelOf(event?.session) : undefined
			if (typeof model !== 'string' || !model)
				return this.end(
					new GatewayError('invalid_request', 'A transcription session starts with a session.update naming its model (session.audio.input.transcription.model)', {
						code: 'missing_required_parameter',
						param: 'session.audio.input.transcription.model',
					}),
				)
			this.queued = []
			void this.connect(event!.session, data as string)
			return
		}
		if (event) {
			if (UPDATES.has(event.type)) return this.update(event)
			if (event.type === 'response.create')
				return this.refuse(new GatewayError('invalid_request', 'A transcription session has no responses: open a conversation session (?model=…) for them', { code: 'unsupported_value', param: 'type' }), event)
			if (event.type === 'input_audio_buffer.append' && typeof event.audio === 'string') return this.append(data as string, base64Bytes(event.audio))
			if (event.type === 'input_audio_buffer.clear') this.meter.cleared()
		}
		this.send(data)
	}

	private send(data: string | Buffer) {
		if (this.upstream?.readyState === WebSocket.OPEN) this.upstream.send(data)
	}

	/** The model checked, the upstream opened and the first config sent; then the frames that waited. */
	private async connect(session: Json, clientEvent: string | undefined) {
		const model = String(transcriptionModelOf(session))
		const { svc, token } = this.s
		let route: ReturnType<typeof realtimeRoute>
		try {
			route = realtimeRoute(svc, token, model)
		} catch (e) {
			return this.end(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'))
		}
		this.model = model
		this.base.model = model
		const opened = await tryChannels(svc, route.channels, this.abort.signal, (ch) =>
			openUpstream(ch, { intent: 'transcription' }, this.s.handshake, channelTimeouts(ch.settings).firstByteMs, (data) => this.fromUpstream(data)),
		)
		if ('error' in opened) {
			if (!this.clientGone) this.end(opened.error)
			await this.finish()
			return
		}
		const up = opened.ok
		if (this.clientGone) {
			up.close(1000)
			return
		}
		this.upstream = up
		this.channel = opened.channel
		this.upstreamModel = opened.channel.modelMap[model] ?? model
		this.meter.holdFor = this.meter.applied = { model, upstreamModel: this.upstreamModel, price: route.price }
		up.addEventListener('close', (e) => void this.upstreamClosed(e.code, e.reason))
		// A secret's config goes first (it names the model); then the client's own first event.
		const first = clientEvent ? (parse(clientEvent) as Json) : { type: 'session.update', session: { type: 'transcription', ...session } }
		this.update(first)
		this.drain()
	}

	/** Replays the frames that waited, until one has to wait again. */
	private drain() {
		const waiting = this.queued ?? []
		this.queued = undefined
		for (let i = 0; i < waiting.length; i++) {
			const again = this.queued as Array<string | Buffer> | undefined
			if (again) {
				again.push(...waiting.slice(i))
				return
			}
			this.fromClient(waiting[i]!)
		}
	}

	/** A session update: forwarded with the upstream's model name, unless it names another model or session type. */
	private update(event: Json) {
		const session: Json = event.session && typeof event.session === 'object' ? event.session : {}
		const named = transcriptionModelOf(session)
		if (named !== undefined && named !== this.model)
			return this.refuse(
				new GatewayError('invalid_request', `This transcription session is for model "${this.model}": open another session for "${String(named)}"`, {
					code: 'invalid_value',
					param: 'session.audio.input.transcription.model',
				}),
				event,
			)
		if (session.type !== undefined && session.type !== 'transcription')
			return this.refuse(new GatewayError('invalid_request', 'A transcription session stays one (session.type "transcription")', { code: 'invalid_value', param: 'session.type' }), event)
		const format = formatOf(session)
		if (format !== undefined) this.meter.bytesPerSecond = audioBytesPerSecond(format)
		this.send(JSON.stringify({ ...event, session: withModel(session, this.upstreamModel!) }))
	}

	/** An `error` event answering a client event the gateway does not forward; the session runs on. */
	private refuse(err: GatewayError, event: Json) {
		this.client?.send(errorEvent(`event_${this.s.requestId}_refused_${++this.refusals}`, err, typeof event.event_id === 'string' ? event.event_id : null))
	}

	/** Audio into the buffer: forwarded once its holds cover it, else after one more hold (or the session ends). */
	private append(data: string, bytes: number) {
		if (this.meter.coverNow(bytes)) return this.send(data)
		this.queued = []
		void this.holdFor(data, bytes)
	}

	private async holdFor(data: string, bytes: number) {
		try {
			await this.meter.cover(bytes)
		} catch (e) {
			this.queued = undefined
			return this.end(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'))
		}
		if (this.clientGone || this.finished) return
		this.send(data)
		this.drain()
	}

	fromUpstream(data: Frame) {
		if (!this.clientGone) {
			if (this.client) this.client.send(data)
			else this.waiting.push(data)
		}
		if (typeof data !== 'string' || !data.includes('input_audio_')) return
		const event = parse(data)
		if (event) this.meter.seen(event)
	}

	private abandonReason = () => (this.shuttingDown ? 'shutdown' : 'client_abort')

	/** The client left: transcriptions of committed audio are awaited (at most `DRAIN_MS`), then the upstream closes. */
	async clientClosed(_code: number, _reason: string) {
		if (this.clientGone) return
		this.clientGone = true
		await this.closeUpstream(DRAIN_MS, 1000, 'client closed')
	}

	async shutdown() {
		this.shuttingDown = true
		if (this.client && !this.clientGone) this.client.close(1001, 'server shutting down')
		this.clientGone = true
		await this.closeUpstream(SHUTDOWN_DRAIN_MS, 1001, 'server shutting down')
	}

	private async closeUpstream(waitMs: number, code: number, reason: string) {
		this.queued = undefined
		this.abort.abort()
		const up = this.upstream
		const done = up?.readyState === WebSocket.OPEN ? this.meter.pending() : undefined
		if (done) await Promise.race([done, Bun.sleep(waitMs)])
		this.meter.abandon(this.abandonReason())
		if (up && up.readyState < WebSocket.CLOSING) up.close(code, reason)
		await this.finish()
	}

	private async upstreamClosed(code: number, reason: string) {
		this.meter.abandon(this.clientGone ? this.abandonReason() : 'upstream_cut')
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.close(code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 && code !== 1015 ? code : 1011, reason)
		}
		await this.finish()
	}

	/** Tells the client why (an OpenAI Realtime `error` event) and closes both sockets. */
	private end(err: GatewayError) {
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.send(errorEvent(`event_${this.s.requestId}`, err, null))
			this.client.close(1008, err.code ?? 'session ended')
		}
		this.clientGone = true
		this.abort.abort()
		const up = this.upstream
		if (up && up.readyState < WebSocket.CLOSING) up.close(1000, 'session ended')
		else if (!up) void this.finish()
	}

	/** Once both sides are done with: what is still held goes back. */
	private async finish() {
		if (this.finished) return
		this.finished = true
		live.delete(this)
		await this.meter.close(this.abandonReason())
	}
}
