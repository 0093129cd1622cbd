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
 * Billing: each committed audio buffer (`input_audio_buffer.committed`, by the client or the server's voice
 * detection) is one transcription, billed from its `conversation.item.input_audio_transcription.completed` usage
 * (transcription-usage.ts): one usage row per completed transcription, so the balance and the key's limit follow a
 * long session as it runs, as conversation sessions bill each response. Before audio is forwarded the buffer it goes
 * into holds enough for it (`transcriptionBound` of its duration, taken `HOLD_SECONDS` ahead); when no more can be
 * held the client gets an `error` event (`insufficient_quota`) and both sockets close. A completion settles its
 * buffer's holds; a failed transcription (`….failed`) releases them; one whose completion never came (the upstream
 * closed, or the client left and it did not come within `DRAIN_MS`) is charged as estimated from its audio. Audio
 * never committed is not transcribed and costs nothing. Nothing stays held once both sockets are closed.
 * @module
 */
import type { ServerWebSocket } from 'bun'
import type { AuthToken } from '../../auth/api-key'
import type { Hold } from '../../billing/ledger'
import { type RecordBase, usageRecord } from '../../billing/usage-record'
import { GatewayError } from '../../core/errors'
import { observeUsage } from '../../metrics/observe-usage'
import { channelTimeouts } from '../../relay/upstream-fetch'
import type { Channel, ModelInfo } from '../../routing/catalog'
import { tryChannels } from '../../routing/attempts'
import type { Services } from '../../services'
import { transcriptionBound } from '../audio/transcriptions'
import { audioBytesPerSecond, base64Bytes } from './estimate'
import { DRAIN_MS, errorEvent, live, SHUTDOWN_DRAIN_MS } from './session'
import { transcriptionCharge } from './transcription-usage'
import { type ClientHandshake, openUpstream, realtimeRoute } from './upstream'

/** Seconds of audio a new hold covers beyond what the buffer already needs (fewer ledger calls for a steady stream). */
export const HOLD_SECONDS = 60

type Json = Record<string, any>
type Frame = string | ArrayBuffer | Uint8Array

/** One input audio buffer: its holds (what they sum to) and the bytes of audio forwarded into it. */
type Buffered = { holds: Hold[]; held: number; bytes: number }

const parse = (text: string): Json | undefined => {
	try {
		const v = JSON.parse(text)
		return v && typeof v === 'object' ? v : undefined
	} catch {
		return undefined
	}
}

const UPDATES = new Set(['session.update', 'transcription_session.update'])

/** The transcription model a session config names: GA `audio.input.transcription.model`, the beta's `input_audio_transcription.model`. */
export const transcriptionModelOf = (session: Json | undefined): unknown => session?.audio?.input?.transcription?.model ?? session?.input_audio_transcription?.model

/** The config with the model renamed for the upstream (only where it was named). */
function withModel(session: Json, model: string): Json {
	if (session.audio?.input?.transcription?.model !== undefined)
		return { ...session, audio: { ...session.audio, input: { ...session.audio.input, transcription: { ...session.audio.input.transcription, model } } } }
	if (session.input_audio_transcription?.model !== undefined) return { ...session, input_audio_transcription: { ...session.input_audio_transcription, model } }
	return session
}

/** GA `audio.input.format`, the beta's `input_audio_format`: undefined when the config does not set it. */
const formatOf = (session: Json | undefined): unknown => session?.audio?.input?.format ?? session?.input_audio_format

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
	private price: ModelInfo | undefined
	/** Client frames waiting for the upstream or for a hold, in order; undefined when none wait. */
	private queued: Array<string | Buffer> | undefined
	/** Upstream frames that came before the client's socket was open. */
	private waiting: Frame[] = []
	private buffer: Buffered = { holds: [], held: 0, bytes: 0 }
	/** Committed buffers waiting for their transcription, by item id, oldest first. */
	private committed = new Map<string, Buffered>()
	private bytesPerSecond = audioBytesPerSecond(undefined)
	private billing: Promise<void> = Promise.resolve()
	private drained: (() => void) | undefined
	private refusals = 0
	private clientGone = false
	private finished = false
	private shuttingDown = false
	private readonly abort = new AbortController()
	private readonly base: RecordBase

	constructor(private readonly s: TranscriptionInit) {
		this.base = { requestId: s.requestId, token: s.token, model: '', endpoint: '/v1/realtime', stream: true, startedAt: s.startedAt }
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
			if (event.type === 'input_audio_buffer.clear') this.buffer.bytes = 0
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
		this.price = route.price
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
		if (format !== undefined) this.bytesPerSecond = audioBytesPerSecond(format)
		this.send(JSON.stringify({ ...event, session: withModel(session, this.upstreamModel!) }))
	}

	/** An `error` event answering a client event the gateway does not forward; the session runs on. */
	private refuse(err: GatewayError, event: Json) {
		this.client?.send(errorEvent(`event_${this.s.requestId}_refused_${++this.refusals}`, err, typeof event.event_id === 'string' ? event.event_id : null))
	}

	/** Audio into the buffer: forwarded once its holds cover it, else after one more hold (or the session ends). */
	private append(data: string, bytes: number) {
		const b = this.buffer
		const need = transcriptionBound(this.price!, (b.bytes + bytes) / this.bytesPerSecond) - b.held
		if (need <= 0) {
			b.bytes += bytes
			return this.send(data)
		}
		const want = transcriptionBound(this.price!, (b.bytes + bytes) / this.bytesPerSecond + HOLD_SECONDS) - b.held
		const now = this.s.svc.ledger.reserveNow(this.owner(), this.s.requestId, want)
		if (now) {
			this.take(b, now)
			b.bytes += bytes
			return this.send(data)
		}
		this.queued = []
		void this.holdFor(b, data, bytes, want, need)
	}

	private take(b: Buffered, hold: Hold) {
		b.holds.push(hold)
		b.held += hold.amount
	}

	private async holdFor(b: Buffered, data: string, bytes: number, want: number, need: number) {
		try {
			const hold = await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, want, need)
			if (this.clientGone || this.finished) {
				await hold.release()
				return
			}
			this.take(b, hold)
		} catch (e) {
			this.queued = undefined
			return this.end(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'))
		}
		b.bytes += bytes
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
		const type = event?.type
		if (type === 'input_audio_buffer.committed') {
			// What was forwarded so far is this item; audio after it goes into a new buffer, with new holds.
			this.committed.set(String(event!.item_id), this.buffer)
			this.buffer = { holds: [], held: 0, bytes: 0 }
		} else if (type === 'input_audio_buffer.speech_started') {
			// Server voice detection: the silence before the speech is no part of the item (its holds stay with the buffer).
			this.buffer.bytes = 0
		} else if (type === 'conversation.item.input_audio_transcription.completed') {
			const b = this.itemOf(event!.item_id)
			this.bill(b, event!.usage, typeof event!.transcript === 'string' ? event!.transcript : '', this.clientGone ? this.abandonReason() : 'ok')
		} else if (type === 'conversation.item.input_audio_transcription.failed') {
			const b = this.itemOf(event!.item_id)
			this.queue(() => this.releaseAll(b, 'error'))
		} else return
		// A client that left waits for the transcriptions of what it committed (closeUpstream).
		if (!this.committed.size) this.billing.then(() => this.drained?.())
	}

	/** The committed buffer of an item (removed), else an empty one (charged from the headroom). */
	private itemOf(id: unknown): Buffered {
		const b = this.committed.get(String(id)) ?? { holds: [], held: 0, bytes: 0 }
		this.committed.delete(String(id))
		return b
	}

	private queue(step: () => Promise<void>) {
		this.billing = this.billing.then(step).catch((e) => this.s.svc.log.warn('realtime transcription settlement failed', { request_id: this.s.requestId, error: String(e) }))
	}

	/** One transcription's charge from its holds: the others go back first, so the one settled can use their money. */
	private bill(b: Buffered, usage: unknown, text: string, endReason: string) {
		const charge = transcriptionCharge(this.price!, usage, b.bytes / this.bytesPerSecond, text)
		this.queue(async () => {
			const [first, ...rest] = b.holds
			await Promise.all(rest.map((h) => h.release()))
			const h = first ?? (await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, 0, 0))
			const record = usageRecord(this.base, {
				channel: this.channel,
				upstreamModel: this.upstreamModel,
				status: endReason === 'upstream_cut' ? 502 : 200,
				endReason,
				usage: charge.usage,
				estimated: charge.estimated,
			})
			const charged = await h.settle(charge.cost, record)
			observeUsage(this.s.svc, this.s.token, record, charged)
		})
	}

	private async releaseAll(b: Buffered, endReason: string) {
		const [first, ...rest] = b.holds
		await Promise.all(rest.map((h) => h.release()))
		await first?.release(usageRecord(this.base, { channel: this.channel, upstreamModel: this.upstreamModel, status: 200, endReason }))
	}

	private owner = () => ({ accountId: this.s.token.accountId, tokenId: this.s.token.id })

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
		if (this.committed.size && up?.readyState === WebSocket.OPEN) {
			const done = new Promise<void>((resolve) => (this.drained = resolve))
			await Promise.race([done, Bun.sleep(waitMs)])
		}
		this.estimateCommitted(this.abandonReason())
		if (up && up.readyState < WebSocket.CLOSING) up.close(code, reason)
		await this.finish()
	}

	/** Committed audio whose transcription never came: charged as estimated from its duration. */
	private estimateCommitted(endReason: string) {
		const cut = [...this.committed.values()]
		this.committed.clear()
		for (const b of cut) this.bill(b, undefined, '', endReason)
	}

	private async upstreamClosed(code: number, reason: string) {
		this.estimateCommitted(this.clientGone ? this.abandonReason() : 'upstream_cut')
		this.drained?.()
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
		this.estimateCommitted(this.abandonReason())
		await this.billing
		const held = this.buffer.holds
		this.buffer = { holds: [], held: 0, bytes: 0 }
		await Promise.all(held.map((h) => h.release()))
	}
}
