/**
 * One Realtime session: relays frames between the client's socket and the upstream's as they come (text and binary,
 * untouched, in order) and bills it response by response.
 *
 * Billing: every response in flight has a hold of its own, through the ledger, of a response's bound
 * (`responseBound`: the conversation so far plus a turn as input, the model's output cap as output, at the dearest
 * token prices), since several may run at once (out-of-band ones, `response.conversation: "none"`). The session
 * keeps one spare hold for the next response (taken at connect). A client `response.create` takes the spare, or a new
 * hold; when none can be held it is not sent upstream and the client gets an OpenAI `error` event
 * (`insufficient_quota`, naming its `event_id`), the session running on (the client's frames after it wait for that
 * answer, so their order is kept). A `response.created` the client did not ask for (server VAD) takes the spare or
 * a new hold. Each `response.done` settles its `response.usage` from its response's hold (one usage row per
 * response, under the session's request id) and the spare is renewed; when the balance or the key's limit cannot
 * cover a minimal response with none running, the client gets the `error` event and both sockets close. A client that leaves while a response
 * runs has it cancelled upstream and pays what its `response.done` reports (at most `DRAIN_MS` waited); a response
 * whose `response.done` never comes (the upstream cut it, or did not answer the cancel) is billed as estimated from
 * the frames seen (estimate.ts). Whatever is still held at the end goes back.
 *
 * A client that stops reading is closed (1008, an `error` event first) once `CLIENT_BUFFER_LIMIT` bytes wait for it
 * (or a frame was dropped): the upstream's socket cannot be paused, and Bun drops frames past its own limit. At shutdown (`shutdownSessions`, once
 * SHUTDOWN_GRACE_MS ran out) both sockets close with 1001 and the running response is billed as `shutdown`.
 *
 * Input audio transcription (`session.audio.input.transcription`, the beta's `input_audio_transcription`), which
 * OpenAI bills apart at the transcription model's prices, is billed as transcription sessions bill it
 * (transcription-meter.ts): a `session.update` naming a model the key may not use, or one without a price, is
 * refused with an `error` event (not forwarded, the session running on); while transcription is on, audio is
 * forwarded only once held for (else the session ends, `insufficient_quota`); each completed transcription is one
 * usage row of the transcription model.
 * @module
 */
import type { ServerWebSocket } from 'bun'
import type { AuthToken } from '../../auth/api-key'
import type { Hold } from '../../billing/ledger'
import { tokenCost } from '../../billing/pricing'
import { type RecordBase, usageRecord } from '../../billing/usage-record'
import { emptyUsage, type Usage } from '../../core/ir'
import { GatewayError } from '../../core/errors'
import { jsonObjectOrUndefined } from '../../core/json'
import { observeUsage } from '../../metrics/observe-usage'
import { errorBody } from '../../protocols/openai-chat/error'
import { countText } from '../../relay/estimate'
import { CLIENT_BUFFER_LIMIT, DRAIN_MS, live, responseBound, SHUTDOWN_DRAIN_MS, sendableCode, sendToClient } from '../../relay/socket-relay'
import type { Channel, ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { AUDIO_DELTAS, assistantAudioTokens, base64Bytes, audioBytesPerSecond, clientInput, TEXT_DELTAS, userAudioTokens } from './estimate'
import { transcriptionSetting, withModel } from './transcription-config'
import { type Transcriber, TranscriptionMeter } from './transcription-meter'
import { realtimeRoute } from './upstream'
import { realtimeUsage } from './usage'

type Frame = string | ArrayBuffer | Uint8Array

/** A response in flight: its hold (none yet while one is being reserved) and its output as seen, for an estimate. */
type Running = { hold: Hold | undefined; seen: { text: string; audioBytes: number } }

type Json = Record<string, unknown>

const parseEvent = (text: string) => jsonObjectOrUndefined(text) as Json | undefined

/** An OpenAI Realtime `error` server event; `clientEventId` names the client event it answers. */
export const errorEvent = (eventId: string, err: GatewayError, clientEventId: string | null) =>
	JSON.stringify({ type: 'error', event_id: eventId, error: { ...errorBody(err).error, event_id: clientEventId } })

export type SessionInit = {
	svc: Services
	token: AuthToken
	requestId: string
	startedAt: number
	model: string
	price: ModelInfo
	hold: Hold
}

export class RealtimeSession {
	private client: ServerWebSocket<unknown> | undefined
	private upstream: WebSocket | undefined
	private channel: Channel | undefined
	private upstreamModel: string | undefined
	/** Upstream frames that came before the client's socket was open. */
	private waiting: Frame[] = []
	/** The hold for the next response. */
	private spare: Hold | undefined
	/** Holds of the `response.create`s sent upstream whose `response.created` has not come yet, oldest first. */
	private pending: Hold[] = []
	/** Responses running upstream (`response.created` seen, their `response.done` not yet), by id. */
	private running = new Map<string, Running>()
	/** Client frames waiting while a hold is reserved for the `response.create` before them. */
	private queued: Array<string | Buffer> | undefined
	/** Settlements and reservations, one after another in the order of the events. */
	private billing: Promise<void> = Promise.resolve()
	/** Settlements queued on `billing` and not yet done. */
	private settling = 0
	private refusals = 0
	/** Conversation tokens as of the last response (its input and output), for the next hold. */
	private context = 0
	/** The client left (or was cut off): frames no longer go to it; a response it cancelled is `client_abort`. */
	private clientGone = false
	private cutOff = false
	private finished = false
	private shuttingDown = false
	private drained: (() => void) | undefined
	private readonly base: RecordBase
	/** Bytes per second of the session's input and output audio (session.created / session.updated). */
	private audioIn = audioBytesPerSecond(undefined)
	private audioOut = audioBytesPerSecond(undefined)
	/** Input the client added since the last response (text tokens, audio bytes), for an estimate. */
	private turn = { text: 0, audioBytes: 0 }
	/** Input audio transcription, billed apart at its model's prices. */
	private readonly transcriptions: TranscriptionMeter
	/** The transcription models the client named, by their upstream names (as the upstream's session events report them). */
	private transcribers = new Map<string, Transcriber>()

	constructor(private readonly s: SessionInit) {
		this.spare = s.hold
		this.base = {
			requestId: s.requestId,
			token: s.token,
			model: s.model,
			endpoint: '/v1/realtime',
			stream: true,
			startedAt: s.startedAt,
		}
		this.transcriptions = new TranscriptionMeter({ svc: s.svc, token: s.token, base: this.base, channel: () => this.channel, endReason: () => (this.clientGone ? this.abandonReason() : 'ok') })
	}

	/** The upstream socket is open (frames it sent meanwhile came through `fromUpstream`). */
	connected(upstream: WebSocket, channel: Channel, upstreamModel: string) {
		this.upstream = upstream
		this.channel = channel
		this.upstreamModel = upstreamModel
		// Only connected sessions: one whose handshake failed never finishes (its hold is released by the route).
		live.add(this)
		upstream.addEventListener('close', (e) => this.upstreamClosed(e.code, e.reason))
	}

	/** A client secret's config, sent before anything of the client's (its transcription model was checked at minting). */
	configure(event: Json) {
		const data = this.transcription(JSON.stringify(event), event)
		if (data) this.forward(data)
	}

	/** The client's socket is open: what the upstream already said goes first. */
	clientOpen(ws: ServerWebSocket<unknown>) {
		this.client = ws
		for (const f of this.waiting) ws.send(f)
		this.waiting = []
		if (this.upstream?.readyState !== WebSocket.OPEN) this.upstreamClosed(1011, 'upstream closed')
	}

	fromUpstream(data: Frame) {
		if (this.clientGone) {
			if (typeof data === 'string') this.meter(data)
			return
		}
		if (this.client) {
			if (!sendToClient(this.client, data)) {
				this.end(new GatewayError('invalid_request', `The client did not read the session's events: more than ${CLIENT_BUFFER_LIMIT} bytes were waiting for it`, { code: 'client_too_slow' }))
				return
			}
		} else this.waiting.push(data)
		if (typeof data === 'string') this.meter(data)
	}

	fromClient(data: string | Buffer) {
		if (this.cutOff) return
		if (this.queued) {
			this.queued.push(data)
			return
		}
		// An append parsed here is not parsed again by forward (audio frames are large).
		let parsed: Json | undefined
		if (typeof data === 'string' && (data.includes('"session.update"') || data.includes('"input_audio_buffer.'))) {
			const event = parseEvent(data)
			if (event?.type === 'session.update') {
				const update = this.transcription(data, event)
				if (update === undefined) return
				data = update
			} else if (event?.type === 'input_audio_buffer.append' && typeof event.audio === 'string') {
				const bytes = base64Bytes(event.audio)
				parsed = event
				if (!this.transcriptions.coverNow(bytes)) {
					this.queued = []
					void this.audioHold(data, bytes)
					return
				}
			} else if (event?.type === 'input_audio_buffer.clear') this.transcriptions.cleared()
		} else if (typeof data === 'string' && data.includes('"response.create"')) {
			const event = parseEvent(data)
			if (event?.type === 'response.create') {
				const hold = this.takeHold()
				if (!hold) {
					this.queued = []
					void this.holdFor(data, event)
					return
				}
				this.pending.push(hold)
			}
		}
		this.forward(data, parsed)
	}

	private forward(data: string | Buffer, parsed?: Json) {
		if (this.upstream?.readyState === WebSocket.OPEN) this.upstream.send(data)
		if (typeof data === 'string' && (parsed || data.includes('"input_audio_buffer.append"') || data.includes('"conversation.item.create"'))) {
			const event = parsed ?? parseEvent(data)
			if (!event) return // not JSON: the upstream answers it with an error event
			const added = clientInput(event)
			this.turn.text += added.text
			this.turn.audioBytes += added.audioBytes
		}
	}

	/** The spare hold, else one the lease covers at once. */
	private takeHold(): Hold | undefined {
		const spare = this.spare
		this.spare = undefined
		return spare ?? this.s.svc.ledger.reserveNow(this.owner(), this.s.requestId, responseBound(this.s.price, this.context).want)
	}

	/** A hold for a `response.create` that needs the ledger: sent upstream with it, else refused; then the frames that waited. */
	private async holdFor(data: string, event: Json) {
		const { want, min } = responseBound(this.s.price, this.context)
		let hold: Hold | undefined
		let refused: GatewayError | undefined
		try {
			hold = await this.reserveFor(want, min)
		} catch (e) {
			refused = e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')
		}
		const waiting = this.queued ?? []
		this.queued = undefined
		if (this.cutOff || this.clientGone || this.finished) {
			await hold?.release()
			return
		}
		if (hold) {
			this.pending.push(hold)
			this.forward(data)
		} else if (refused) this.refuse(refused, event)
		this.replay(waiting)
	}

	/** An `error` event answering a client event the gateway does not forward; the session runs on. */
	private refuse(err: GatewayError, event: Json) {
		this.client?.send(errorEvent(`event_${this.s.requestId}_refused_${++this.refusals}`, err, typeof event.event_id === 'string' ? event.event_id : null))
	}

	/** The client frames that waited for a hold, in order, until one has to wait again. */
	private replay(waiting: Array<string | Buffer>) {
		for (let i = 0; i < waiting.length; i++) {
			// fromClient may have started another wait (TypeScript keeps the narrowing from above).
			const again = this.queued as Array<string | Buffer> | undefined
			if (again) {
				// Another response.create is waiting for its hold: the rest waits behind it.
				again.push(...waiting.slice(i))
				return
			}
			this.fromClient(waiting[i]!)
		}
	}

	/**
	 * The transcription a `session.update` sets: its model checked for the key (allowed, priced, on an OpenAI channel)
	 * and renamed as the session's channel maps it. Undefined when refused (not forwarded), else the frame to forward.
	 */
	private transcription(data: string, event: Json): string | undefined {
		const session = event.session as Record<string, any> | undefined
		const setting = transcriptionSetting(session)
		if (setting === undefined) return data
		if (setting === null) {
			this.transcriptions.holdFor = undefined
			return data
		}
		const model = setting.model ?? this.transcriptions.holdFor?.model
		if (typeof model !== 'string' || !model) {
			const param = 'session.audio.input.transcription.model'
			this.refuse(new GatewayError('invalid_request', `Input audio transcription is billed at its model's prices: name the model (${param})`, { code: 'missing_required_parameter', param }), event)
			return undefined
		}
		let price: ModelInfo
		try {
			price = realtimeRoute(this.s.svc, this.s.token, model).price
		} catch (e) {
			this.refuse(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'), event)
			return undefined
		}
		const upstreamModel = this.channel?.modelMap[model] ?? model
		this.transcriptions.holdFor = { model, upstreamModel, price }
		this.transcribers.set(upstreamModel, this.transcriptions.holdFor)
		return setting.model === undefined || upstreamModel === model ? data : JSON.stringify({ ...event, session: withModel(session!, upstreamModel) })
	}

	/** Audio that needs one more transcription hold: forwarded once held, else the session ends; then the frames that waited. */
	private async audioHold(data: string, bytes: number) {
		let refused: GatewayError | undefined
		try {
			await this.transcriptions.cover(bytes)
		} catch (e) {
			refused = e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')
		}
		const waiting = this.queued ?? []
		this.queued = undefined
		if (this.cutOff || this.clientGone || this.finished) return
		if (refused) return this.end(refused)
		this.forward(data)
		this.replay(waiting)
	}

	/** The client left: cancel a running response and wait for its usage, then close upstream and settle. */
	async clientClosed(code: number, reason: string) {
		if (this.clientGone) return
		this.clientGone = true
		await this.cancelAndClose(DRAIN_MS, sendableCode(code), reason)
	}

	/** Shutdown: the client is told the server is going away (1001), the running response cancelled and billed. */
	async shutdown() {
		this.shuttingDown = true
		if (this.client && !this.clientGone) this.client.close(1001, 'server shutting down')
		this.clientGone = true
		await this.cancelAndClose(SHUTDOWN_DRAIN_MS, 1001, 'server shutting down')
	}

	/** Cancels a running response (its usage awaited at most `waitMs`, else estimated), then closes upstream and settles. */
	private async cancelAndClose(waitMs: number, code: number, reason: string) {
		const up = this.upstream
		this.queued = undefined
		const waits: Promise<void>[] = []
		if (this.running.size && up?.readyState === WebSocket.OPEN) {
			waits.push(new Promise<void>((resolve) => (this.drained = resolve)))
			for (const id of this.running.keys()) up.send(JSON.stringify({ type: 'response.cancel', response_id: id }))
		}
		// The transcriptions of what was committed come too (they are not cancelled).
		const transcribed = up?.readyState === WebSocket.OPEN ? this.transcriptions.pending() : undefined
		if (transcribed) waits.push(transcribed)
		if (waits.length) await Promise.race([Promise.all(waits), Bun.sleep(waitMs)])
		// Those whose response.done did not come in time: billed from what was seen.
		this.estimateRunning(this.abandonReason())
		this.transcriptions.abandon(this.abandonReason())
		if (up && up.readyState < WebSocket.CLOSING) up.close(code, reason)
		await this.finish()
	}

	/** Every response still running, billed as estimated from what was seen. */
	private estimateRunning(endReason: string) {
		const cut = [...this.running.values()]
		this.running.clear()
		for (const r of cut) this.closeResponse(r.hold, this.estimate(r), true, endReason)
	}

	/** A response the client did not wait for: it left, or the gateway is shutting down. */
	private abandonReason = () => (this.shuttingDown ? 'shutdown' : 'client_abort')

	/** The upstream closed: the client is told with the same code, a running response is recorded as cut. */
	async upstreamClosed(code: number, reason: string) {
		this.estimateRunning(this.clientGone ? this.abandonReason() : 'upstream_cut')
		this.transcriptions.abandon(this.clientGone ? this.abandonReason() : 'upstream_cut')
		this.drained?.()
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.close(sendableCode(code), reason)
		}
		await this.finish()
	}

	/** Reads what billing needs from an upstream text frame: the start and the end (with usage) of each response. */
	private meter(text: string) {
		const delta = this.running.size > 0 && text.includes('.delta"')
		const audioIn = text.includes('input_audio_')
		if (!delta && !audioIn && !text.includes('"response.created"') && !text.includes('"response.done"') && !text.includes('"session.')) return
		let event: {
			type?: unknown
			delta?: unknown
			response_id?: unknown
			session?: Record<string, any>
			response?: { id?: unknown; status?: unknown; usage?: unknown }
		}
		try {
			event = JSON.parse(text)
		} catch {
			return
		}
		const type = String(event.type)
		if (audioIn) this.transcriptions.seen(event)
		if (type === 'response.created') this.started(String(event.response?.id))
		else if (type === 'response.done') {
			const id = String(event.response?.id)
			const r = this.running.get(id) ?? { hold: undefined, seen: { text: '', audioBytes: 0 } }
			this.running.delete(id)
			const abandoned = this.clientGone
			const reported = realtimeUsage(event.response?.usage)
			const endReason = abandoned ? this.abandonReason() : event.response?.status === 'failed' ? 'error' : 'ok'
			this.closeResponse(r.hold, reported ?? this.estimate(r), reported === undefined, endReason)
			if (!this.running.size) this.billing.then(() => this.drained?.())
		} else if (typeof event.delta === 'string' && (TEXT_DELTAS.has(type) || AUDIO_DELTAS.has(type))) {
			const r = this.running.get(String(event.response_id)) ?? [...this.running.values()].at(-1)
			if (!r) return
			if (TEXT_DELTAS.has(type)) r.seen.text += event.delta
			else r.seen.audioBytes += base64Bytes(event.delta)
		}
		else if ((type === 'session.created' || type === 'session.updated') && event.session) {
			// GA: session.audio.{input,output}.format; the beta: input_audio_format / output_audio_format.
			const ss = event.session
			this.audioIn = audioBytesPerSecond(ss.audio?.input?.format ?? ss.input_audio_format)
			this.audioOut = audioBytesPerSecond(ss.audio?.output?.format ?? ss.output_audio_format)
			this.transcriptions.bytesPerSecond = this.audioIn
			// What the upstream transcribes from now on: its commits after this event are billed at it.
			const t = transcriptionSetting(ss)
			if (t === null) this.transcriptions.applied = undefined
			else if (t) this.transcriptions.applied = (typeof t.model === 'string' && this.transcribers.get(t.model)) || this.transcriptions.holdFor
		}
	}

	/**
	 * A response started upstream: it takes the hold of the oldest `response.create` sent, else (one the server
	 * started, e.g. on a turn its voice detection ended) the spare or a new hold; when none can be had, the session ends.
	 */
	private started(id: string) {
		const r: Running = { hold: this.pending.shift() ?? this.takeHold(), seen: { text: '', audioBytes: 0 } }
		this.running.set(id, r)
		if (r.hold || this.cutOff) return
		const { want, min } = responseBound(this.s.price, this.context)
		this.bill(async () => {
			try {
				r.hold = await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, want, min)
			} catch (e) {
				this.end(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'))
			}
		})
	}

	/** Queues a billing step; a failed one is logged (the ledger refuses nothing it already holds). */
	private bill(step: () => Promise<void>) {
		this.settling++
		this.billing = this.billing
			.then(step)
			.catch((e) => this.s.svc.log.warn('realtime settlement failed', { request_id: this.s.requestId, error: String(e) }))
			.finally(() => void this.settling--)
	}

	/**
	 * A response's hold. Refused while responses that ended are still being settled, it is asked again once they are:
	 * their holds go back then, and the spare renewed after them may be what this response needs (a `response.create`
	 * sent at once after a `response.done`, a small balance, a slow database).
	 */
	private async reserveFor(want: number, min: number): Promise<Hold> {
		const ledger = this.s.svc.ledger
		try {
			return await ledger.reserve(this.owner(), this.s.requestId, want, min)
		} catch (e) {
			if (this.settling === 0 || !(e instanceof GatewayError) || e.kind !== 'insufficient_quota') throw e
			await this.billing
			return this.takeHold() ?? (await ledger.reserve(this.owner(), this.s.requestId, want, min))
		}
	}

	/** A response ended: the conversation now includes it; its bill is queued. */
	private closeResponse(hold: Hold | undefined, usage: Usage, estimated: boolean, endReason: string) {
		this.context = usage.input + usage.cacheRead + usage.output
		this.turn = { text: 0, audioBytes: 0 }
		// Read when the step runs: a hold still being reserved (started) is in place by then.
		const r = { hold }
		this.bill(() => this.settle(r.hold, usage, estimated, endReason))
	}

	/** Charges one response from its hold, then renews the spare (or cuts the session off). */
	private async settle(hold: Hold | undefined, usage: Usage, estimated: boolean, endReason: string) {
		const record = usageRecord(this.base, {
			channel: this.channel,
			upstreamModel: this.upstreamModel,
			status: endReason === 'upstream_cut' ? 502 : 200,
			endReason,
			usage,
			estimated,
		})
		// No hold: the session is being cut off; what the response cost is still charged, as far as the headroom goes.
		const h = hold ?? (await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, 0, 0))
		const charged = await h.settle(tokenCost(usage, this.s.price), record)
		observeUsage(this.s.svc, this.s.token, record, charged)
		if (!this.clientGone && !this.cutOff && !this.spare) await this.reserveNext()
	}

	private owner = () => ({
		accountId: this.s.token.accountId,
		tokenId: this.s.token.id,
	})

	/**
	 * The spare hold for the next response; when the headroom cannot cover a minimal one and no response is in flight,
	 * the session ends (with responses in flight it runs on: a further response.create is refused on its own).
	 */
	private async reserveNext() {
		const { want, min } = responseBound(this.s.price, this.context)
		const ledger = this.s.svc.ledger
		try {
			this.spare = ledger.reserveNow(this.owner(), this.s.requestId, want) ?? (await ledger.reserve(this.owner(), this.s.requestId, want, min))
		} catch (e) {
			if (this.running.size || this.pending.length) return
			this.end(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'))
		}
	}

	/** Tells the client why (an OpenAI Realtime `error` event) and closes both sockets. */
	private end(err: GatewayError) {
		this.cutOff = true
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.send(errorEvent(`event_${this.s.requestId}`, err, null))
			this.client.close(1008, err.code ?? 'session ended')
		}
		const up = this.upstream
		if (up && up.readyState < WebSocket.CLOSING) up.close(1000, 'session ended')
	}

	/**
	 * What the running response used, from what the gateway saw: as input the conversation so far (the last
	 * response's input and output, and what the client added since), as output its text and audio deltas.
	 */
	private estimate(r: Running): Usage {
		const audioIn = userAudioTokens(this.turn.audioBytes, this.audioIn)
		const audioOut = assistantAudioTokens(r.seen.audioBytes, this.audioOut)
		return {
			...emptyUsage(),
			input: this.context + this.turn.text + audioIn,
			audioInput: audioIn,
			output: countText(r.seen.text) + audioOut,
			audioOutput: audioOut,
		}
	}

	/** Once both sides are done with: what is still held goes back. */
	private async finish() {
		if (this.finished) return
		this.finished = true
		live.delete(this)
		await Promise.all([this.billing, this.transcriptions.close(this.abandonReason())])
		const held = [this.spare, ...this.pending]
		this.spare = undefined
		this.pending = []
		await Promise.all(held.map((h) => h?.release()))
	}
}
