/**
 * One Live session (Gemini's `BidiGenerateContent` over WebSocket): routed by the model of its first message
 * (`{setup: {model: "models/…", …}}`), then relayed both ways untouched (text and binary frames, in order) and billed
 * turn by turn.
 *
 * Setup: the model must be one the key may use, priced, and served by a Gemini channel; a first message without a
 * model is closed 1007, the others 1008, with the reason in Google's words (nothing held, sent upstream or charged).
 * Then a hold for the first turn (1008 when the balance cannot cover one) and the upstream socket, with failover as
 * other routes fail over; the setup goes upstream with the channel's `model_map` applied, and the client's frames
 * that came meanwhile after it.
 *
 * Billing, as the Realtime relay bills responses: the session keeps a spare hold (a turn's bound, `responseBound`),
 * which the next turn takes when the model starts answering (its first `serverContent` or `toolCall`). A turn ends at
 * `serverContent.turnComplete` and is one usage row, charged from the `usageMetadata` the server sent in it: within
 * one generation the latest report wins; a `toolCall` ends a generation (the answer after the `toolResponse` is a
 * new one), so a turn with a tool call is the sum of both. Then the spare is renewed; when the balance or the key's
 * limit cannot cover another turn the session ends (close 1008). A turn without a report, or cut (the upstream
 * closed: `upstream_cut`), is billed as estimated from the frames seen (usage.ts); so is the answer after a reported
 * tool call that ends without its own report, on top of the reported part. A client that leaves mid-turn
 * waits upstream (at most `DRAIN_MS`) for the turn's usage (`client_abort`); at shutdown both sockets close with 1001
 * and the running turn is billed as `shutdown`. A client that stops reading is closed 1008 past `CLIENT_BUFFER_LIMIT`.
 * @module
 */
import type { ServerWebSocket } from 'bun'
import type { AuthToken } from '../../auth/api-key'
import type { Hold } from '../../billing/ledger'
import { tokenCost } from '../../billing/pricing'
import { type RecordBase, usageRecord } from '../../billing/usage-record'
import { GatewayError } from '../../core/errors'
import { jsonObjectOrUndefined } from '../../core/json'
import { emptyUsage, type Usage } from '../../core/ir'
import { observeUsage } from '../../metrics/observe-usage'
import { get, isObj } from '../../protocols/gemini/read'
import { countText } from '../../relay/estimate'
import { CLIENT_BUFFER_LIMIT, DRAIN_MS, live, responseBound, SHUTDOWN_DRAIN_MS, sendableCode, sendToClient } from '../../relay/socket-relay'
import { channelTimeouts } from '../../relay/upstream-fetch'
import { tryChannels } from '../../routing/attempts'
import type { Channel, ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { closeReason, liveClose } from './close'
import { liveRoute, type LiveVersion, openLiveUpstream } from './upstream'
import { addUsage, audioTokens, INPUT_RATE, liveUsage, OUTPUT_RATE } from './usage'

type Json = Record<string, any>
type Frame = string | ArrayBuffer | Uint8Array

/**
 * A turn the model is answering: its hold (none while one is being reserved), the usage reported by the generations a
 * tool call ended (`reported`) and by the running one (`current`), and the output seen (since the last reported tool
 * call, once there is one). `after` is set once a reported generation ended in a tool call: the conversation that
 * generation saw and wrote (its prompt and output tokens), and whether the model has since answered (the generation
 * after the client's `toolResponse` started), so that one is estimated if it ends without its own report.
 */
type Turn = {
	hold: Hold | undefined
	reported: Usage | undefined
	current: Usage | undefined
	seen: { text: string; audio: number }
	after: { context: number; answering: boolean } | undefined
}

const parse = (text: string) => jsonObjectOrUndefined(text) as Json | undefined

const decoder = new TextDecoder()
const frameText = (data: Frame | Buffer): string => (typeof data === 'string' ? data : decoder.decode(data))

export type LiveInit = { svc: Services; token: AuthToken; requestId: string; startedAt: number; version: LiveVersion; endpoint: string }

export class LiveSession {
	private client: ServerWebSocket<unknown> | undefined
	private upstream: WebSocket | undefined
	private channel: Channel | undefined
	private price: ModelInfo | undefined
	private upstreamModel: string | undefined
	private base: RecordBase | undefined
	private phase: 'setup' | 'connecting' | 'open' = 'setup'
	/** Client frames that came while the setup was routed and connected. */
	private queued: Array<string | Buffer> = []
	/** Upstream frames that came before the client's socket was open (none in practice: the client speaks first). */
	private waiting: Frame[] = []
	private spare: Hold | undefined
	private turn: Turn | undefined
	/** What the client added since the last turn (text and audio tokens), for an estimate. */
	private input = { text: 0, audio: 0 }
	/** Conversation tokens as of the last turn, for the next hold and estimates. */
	private context = 0
	private billing: Promise<void> = Promise.resolve()
	private readonly leaving = new AbortController()
	private clientGone = false
	private cutOff = false
	private finished = false
	private shuttingDown = false
	private drained: (() => void) | undefined

	constructor(private readonly s: LiveInit) {}

	clientOpen(ws: ServerWebSocket<unknown>) {
		this.client = ws
		for (const f of this.waiting) ws.send(f)
		this.waiting = []
	}

	fromClient(data: string | Buffer) {
		if (this.cutOff || this.clientGone) return
		if (this.phase === 'setup') {
			this.phase = 'connecting'
			void this.setup(frameText(data))
		} else if (this.phase === 'connecting') this.queued.push(data)
		else this.forward(data)
	}

	/** Routes the session by its setup's model, holds for a first turn and connects upstream; refusals close the client's socket. */
	private async setup(text: string) {
		const setup = parse(text)?.setup
		const named = typeof setup?.model === 'string' ? setup.model : ''
		const model = named.replace(/^models\//, '')
		if (!model) return this.refuse(new GatewayError('invalid_request', 'Request contains an invalid argument.'), model)
		let route: ReturnType<typeof liveRoute>
		let hold: Hold
		try {
			route = liveRoute(this.s.svc, this.s.token, model)
			const { want, min } = responseBound(route.price, 0)
			hold = this.s.svc.ledger.reserveNow(this.owner(), this.s.requestId, want) ?? (await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, want, min))
		} catch (e) {
			return this.refuse(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'), model)
		}
		this.price = route.price
		this.base = { requestId: this.s.requestId, token: this.s.token, model, endpoint: this.s.endpoint, stream: true, startedAt: this.s.startedAt }
		const opened = await tryChannels(this.s.svc, route.channels, this.leaving.signal, (ch) =>
			openLiveUpstream(ch, this.s.version, channelTimeouts(ch.settings).firstByteMs, (data) => this.fromUpstream(data)),
		)
		if ('error' in opened) {
			await hold.release(usageRecord(this.base, { channel: opened.channel, status: opened.error.status, endReason: this.clientGone ? 'client_abort' : 'error' }))
			return this.refuse(opened.error, model)
		}
		const up = opened.ok
		if (this.clientGone) {
			up.close(1000, 'client closed')
			await hold.release()
			return
		}
		this.upstream = up
		this.channel = opened.channel
		this.spare = hold
		this.upstreamModel = opened.channel.modelMap[model] ?? model
		live.add(this)
		up.addEventListener('close', (e) => void this.upstreamClosed(e.code, e.reason))
		up.send(this.upstreamModel === model ? text : JSON.stringify({ setup: { ...setup, model: `models/${this.upstreamModel}` } }))
		this.phase = 'open'
		for (const f of this.queued) this.forward(f)
		this.queued = []
	}

	/** A session refused at setup: closed with Google's code and reason; nothing was sent upstream or charged. */
	private refuse(err: GatewayError, model: string) {
		this.cutOff = true
		this.finished = true
		const { code, reason } = liveClose(err, model, this.s.version)
		if (!this.clientGone) this.client?.close(code, reason)
		this.clientGone = true
	}

	private forward(data: string | Buffer) {
		if (this.upstream?.readyState === WebSocket.OPEN) this.upstream.send(data)
		const text = frameText(data)
		// Google's proto-JSON takes each field under its lowerCamel or snake_case name, and google-genai for Python
		// sends `client_content`, `realtime_input` and `tool_response` (an audio blob's `mime_type` too).
		if (!/"(clientContent|client_content|realtimeInput|realtime_input|toolResponse|tool_response)"/.test(text)) return
		const m = parse(text)
		if (!m) return
		const content = get(m, 'clientContent')
		const turns = isObj(content) ? content.turns : undefined
		for (const turn of Array.isArray(turns) ? turns : [])
			for (const part of Array.isArray(turn?.parts) ? turn.parts : []) if (typeof part?.text === 'string') this.input.text += countText(part.text)
		const rt = get(m, 'realtimeInput')
		if (isObj(rt)) {
			if (typeof rt.text === 'string') this.input.text += countText(rt.text)
			const chunks = get(rt, 'mediaChunks')
			for (const chunk of [rt.audio, ...(Array.isArray(chunks) ? chunks : [])]) {
				if (!isObj(chunk) || typeof chunk.data !== 'string') continue
				const mime = get(chunk, 'mimeType')
				if (String(mime ?? 'audio/pcm').startsWith('audio/')) this.input.audio += audioTokens(chunk.data.length, mime, INPUT_RATE)
			}
		}
		const toolResponse = get(m, 'toolResponse')
		if (toolResponse !== undefined) this.input.text += countText(JSON.stringify(toolResponse))
	}

	fromUpstream(data: Frame) {
		if (!this.clientGone) {
			if (!this.client) this.waiting.push(data)
			else if (!sendToClient(this.client, data))
				return this.end(1008, `The client did not read the session's messages: more than ${CLIENT_BUFFER_LIMIT} bytes were waiting for it`)
		}
		this.meter(frameText(data))
	}

	/** Reads what billing needs from a server message: a turn's start, its output, its usage and its end. */
	private meter(text: string) {
		if (!text.includes('"serverContent"') && !text.includes('"toolCall"') && !text.includes('"usageMetadata"')) return
		const m = parse(text)
		if (!m) return
		if (!m.serverContent && !m.toolCall && !this.turn) return
		const turn = this.startTurn()
		if (turn.after && (m.serverContent || m.toolCall)) turn.after.answering = true
		for (const part of Array.isArray(m.serverContent?.modelTurn?.parts) ? m.serverContent.modelTurn.parts : []) {
			if (typeof part?.text === 'string') turn.seen.text += part.text
			if (typeof part?.inlineData?.data === 'string') turn.seen.audio += audioTokens(part.inlineData.data.length, part.inlineData.mimeType, OUTPUT_RATE)
		}
		if (m.toolCall) turn.seen.text += JSON.stringify(m.toolCall)
		const reported = liveUsage(m.usageMetadata)
		if (reported) turn.current = reported
		if (m.toolCall && turn.current) {
			turn.reported = turn.reported ? addUsage(turn.reported, turn.current) : turn.current
			// The generation after the tool response is billed apart (its report, else its estimate): what was seen and
			// sent so far is in this one's report; the next one reads the conversation this one saw and wrote.
			turn.after = { context: turn.current.input + turn.current.cacheRead + turn.current.output, answering: false }
			turn.current = undefined
			turn.seen = { text: '', audio: 0 }
			this.input = { text: 0, audio: 0 }
		}
		if (m.serverContent?.turnComplete) {
			this.endTurn(this.clientGone ? this.abandonReason() : 'ok')
			this.billing.then(() => this.drained?.())
		}
	}

	/** The turn the model is answering, started now if none is: it takes the spare hold, or one reserved now. */
	private startTurn(): Turn {
		if (this.turn) return this.turn
		const turn: Turn = { hold: this.spare, reported: undefined, current: undefined, seen: { text: '', audio: 0 }, after: undefined }
		this.spare = undefined
		this.turn = turn
		if (!turn.hold && !this.cutOff) {
			const { want, min } = responseBound(this.price!, this.context)
			this.bill(async () => {
				try {
					turn.hold = await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, want, min)
				} catch (e) {
					this.end(1008, (e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')).message)
				}
			})
		}
		return turn
	}

	/**
	 * The turn ended (complete, cut or abandoned): charged from what was reported, else as estimated. A generation that
	 * started after a reported tool call and ended without a report of its own (the upstream cut it, the client left)
	 * is estimated on top of the reported part, which is charged once.
	 */
	private endTurn(endReason: string) {
		const t = this.turn
		if (!t) return
		this.turn = undefined
		const reported = t.reported && t.current ? addUsage(t.reported, t.current) : (t.reported ?? t.current)
		const unreported = !t.current && t.after?.answering
		const usage = !reported ? this.estimate(this.context, t) : unreported ? addUsage(reported, this.estimate(t.after!.context, t)) : reported
		this.context = usage.input + usage.cacheRead + usage.output
		this.input = { text: 0, audio: 0 }
		this.bill(() => this.settle(t, usage, !reported || !!unreported, endReason))
	}

	/** Charges one turn from its hold, then renews the spare (or ends the session). */
	private async settle(t: Turn, usage: Usage, estimated: boolean, endReason: string) {
		const record = usageRecord(this.base!, { channel: this.channel, upstreamModel: this.upstreamModel, status: endReason === 'upstream_cut' ? 502 : 200, endReason, usage, estimated })
		// No hold: the session is being cut off; what the turn cost is still charged, as far as the headroom goes.
		const h = t.hold ?? (await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, 0, 0))
		const charged = await h.settle(tokenCost(usage, this.price!), record)
		observeUsage(this.s.svc, this.s.token, record, charged)
		if (this.clientGone || this.cutOff || this.spare) return
		const { want, min } = responseBound(this.price!, this.context)
		try {
			this.spare = this.s.svc.ledger.reserveNow(this.owner(), this.s.requestId, want) ?? (await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, want, min))
		} catch (e) {
			if (!this.turn) this.end(1008, (e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')).message)
		}
	}

	/** Queues a billing step; a failed one is logged (the ledger refuses nothing it already holds). */
	private bill(step: () => Promise<void>) {
		this.billing = this.billing.then(step).catch((e) => this.s.svc.log.warn('live settlement failed', { request_id: this.s.requestId, error: String(e) }))
	}

	/** What the running generation used, from what was seen: the conversation (`context` tokens) and the client's input since, and the output. */
	private estimate(context: number, t: Turn): Usage {
		return {
			...emptyUsage(),
			input: context + this.input.text + this.input.audio,
			audioInput: this.input.audio,
			output: countText(t.seen.text) + t.seen.audio,
			audioOutput: t.seen.audio,
		}
	}

	private owner = () => ({ accountId: this.s.token.accountId, tokenId: this.s.token.id })

	private abandonReason = () => (this.shuttingDown ? 'shutdown' : 'client_abort')

	/** Ends the session on the gateway's side: the client is told why (close code and reason), the upstream closed. */
	private end(code: number, reason: string) {
		this.cutOff = true
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.close(code, closeReason(reason))
		}
		const up = this.upstream
		if (up && up.readyState < WebSocket.CLOSING) up.close(1000, 'session ended')
	}

	/** The client left: a running turn's usage is awaited upstream (at most `DRAIN_MS`), then the upstream closes. */
	async clientClosed(code: number, reason: string) {
		if (this.clientGone && !this.cutOff) return
		this.clientGone = true
		this.leaving.abort()
		await this.closeUpstream(DRAIN_MS, sendableCode(code), reason)
	}

	/** Shutdown: the client is told the server is going away (1001), the running turn billed as `shutdown`. */
	async shutdown() {
		this.shuttingDown = true
		if (this.client && !this.clientGone) this.client.close(1001, 'server shutting down')
		this.clientGone = true
		await this.closeUpstream(SHUTDOWN_DRAIN_MS, 1001, 'server shutting down')
	}

	private async closeUpstream(waitMs: number, code: number, reason: string) {
		const up = this.upstream
		if (!up) return
		if (this.turn && up.readyState === WebSocket.OPEN) await Promise.race([new Promise<void>((resolve) => (this.drained = resolve)), Bun.sleep(waitMs)])
		this.endTurn(this.abandonReason())
		if (up.readyState < WebSocket.CLOSING) up.close(code, reason)
		await this.finish()
	}

	/** The upstream closed: the client is told with the same code and reason, a running turn is billed as cut. */
	async upstreamClosed(code: number, reason: string) {
		this.endTurn(this.clientGone ? this.abandonReason() : 'upstream_cut')
		this.drained?.()
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.close(sendableCode(code), closeReason(reason))
		}
		await this.finish()
	}

	/** Once both sides are done with: what is still held goes back. */
	private async finish() {
		if (this.finished) return
		this.finished = true
		live.delete(this)
		await this.billing
		const spare = this.spare
		this.spare = undefined
		await spare?.release()
	}
}
