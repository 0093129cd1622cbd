/**
 * One Realtime session: relays frames between the client's socket and the upstream's as they come (text and binary,
 * untouched, in order) and bills it response by response.
 *
 * Billing: the session always holds, through the ledger, enough for one more response (`responseBound`: the
 * conversation so far plus a turn as input, the model's output cap as output, at the dearest token prices). Each
 * `response.done` settles its `response.usage` from that hold (one usage row per response, under the session's
 * request id) and reserves the next; when the balance or the key's limit cannot cover a minimal response the client
 * gets an OpenAI `error` event (`insufficient_quota`) and both sockets close. A client that leaves while a response
 * runs has it cancelled upstream and pays what its `response.done` reports (at most `DRAIN_MS` waited); an upstream
 * that closes mid-response leaves no usage to bill (row `upstream_cut`, cost 0). Whatever is still held at the end
 * goes back.
 * @module
 */
import type { ServerWebSocket } from 'bun'
import type { AuthToken } from '../../auth/api-key'
import type { Hold } from '../../billing/ledger'
import { tokenCost, upperBound } from '../../billing/pricing'
import { type RecordBase, usageRecord } from '../../billing/usage-record'
import { emptyUsage, type Usage } from '../../core/ir'
import { GatewayError } from '../../core/errors'
import { observeUsage } from '../../metrics/observe-usage'
import { errorBody } from '../../protocols/openai-chat/error'
import { DEFAULT_MAX_OUTPUT, MIN_ANSWER_TOKENS } from '../../relay/budget'
import type { Channel, ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { realtimeUsage } from './usage'

/** Input tokens a new turn may add to the conversation before the next response (about 3 minutes of audio input). */
export const TURN_TOKENS = 2048
/** How long a client that left waits, upstream, for the `response.done` of the response it cancelled. */
export const DRAIN_MS = 5_000

/** The hold for one more response after a conversation of `context` tokens: `want` when the headroom allows, at least `min`. */
export function responseBound(price: ModelInfo, context: number): { want: number; min: number } {
	const input = context + TURN_TOKENS
	return {
		want: upperBound(input, price.maxOutputTokens ?? DEFAULT_MAX_OUTPUT, price),
		min: upperBound(input, MIN_ANSWER_TOKENS, price),
	}
}

type Frame = string | ArrayBuffer | Uint8Array

/** WebSocket close codes that are reported, never sent (RFC 6455 §7.4.1): relayed as 1011. */
const UNSENDABLE = new Set([1004, 1005, 1006, 1015])
const sendableCode = (code: number) => (UNSENDABLE.has(code) || code < 1000 || code > 4999 ? 1011 : code)

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
	private hold: Hold | undefined
	/** Settlements and reservations, one after another in the order of the events. */
	private billing: Promise<void> = Promise.resolve()
	/** A response is running upstream (`response.created` seen, its `response.done` not yet). */
	private responding = false
	/** Conversation tokens as of the last response (its input and output), for the next hold. */
	private context = 0
	/** The client left (or was cut off): frames no longer go to it; a response it cancelled is `client_abort`. */
	private clientGone = false
	private cutOff = false
	private finished = false
	private drained: (() => void) | undefined
	private readonly base: RecordBase

	constructor(private readonly s: SessionInit) {
		this.hold = s.hold
		this.base = {
			requestId: s.requestId,
			token: s.token,
			model: s.model,
			endpoint: '/v1/realtime',
			stream: true,
			startedAt: s.startedAt,
		}
	}

	/** The upstream socket is open (frames it sent meanwhile came through `fromUpstream`). */
	connected(upstream: WebSocket, channel: Channel, upstreamModel: string) {
		this.upstream = upstream
		this.channel = channel
		this.upstreamModel = upstreamModel
		upstream.addEventListener('close', (e) => this.upstreamClosed(e.code, e.reason))
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
		if (this.client) this.client.send(data)
		else this.waiting.push(data)
		if (typeof data === 'string') this.meter(data)
	}

	fromClient(data: string | Buffer) {
		if (this.cutOff) return
		if (this.upstream?.readyState === WebSocket.OPEN) this.upstream.send(data)
	}

	/** The client left: cancel a running response and wait for its usage, then close upstream and settle. */
	async clientClosed(code: number, reason: string) {
		if (this.clientGone) return
		this.clientGone = true
		const up = this.upstream
		if (this.responding && up?.readyState === WebSocket.OPEN) {
			const done = new Promise<void>((resolve) => (this.drained = resolve))
			up.send(JSON.stringify({ type: 'response.cancel' }))
			await Promise.race([done, Bun.sleep(DRAIN_MS)])
		}
		if (up && up.readyState < WebSocket.CLOSING) up.close(sendableCode(code), reason)
		await this.finish()
	}

	/** The upstream closed: the client is told with the same code, a running response is recorded as cut. */
	async upstreamClosed(code: number, reason: string) {
		if (this.responding) {
			this.responding = false
			this.bill(() => this.cutResponse())
		}
		this.drained?.()
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.close(sendableCode(code), reason)
		}
		await this.finish()
	}

	/** Reads what billing needs from an upstream text frame: the start and the end (with usage) of each response. */
	private meter(text: string) {
		const created = text.includes('"response.created"')
		if (!created && !text.includes('"response.done"')) return
		let event: {
			type?: unknown
			response?: { status?: unknown; usage?: unknown }
		}
		try {
			event = JSON.parse(text)
		} catch {
			return
		}
		if (event.type === 'response.created') this.responding = true
		else if (event.type === 'response.done') {
			this.responding = false
			const abandoned = this.clientGone
			this.bill(() => this.settle(event.response?.usage, event.response?.status, abandoned))
			this.billing.then(() => this.drained?.())
		}
	}

	/** Queues a billing step; a failed one is logged (the ledger refuses nothing it already holds). */
	private bill(step: () => Promise<void>) {
		this.billing = this.billing.then(step).catch((e) =>
			this.s.svc.log.warn('realtime settlement failed', {
				request_id: this.s.requestId,
				error: String(e),
			}),
		)
	}

	/** Charges one response from the hold, then holds for the next (or cuts the session off). */
	private async settle(reported: unknown, status: unknown, abandoned: boolean) {
		const hold = this.hold
		this.hold = undefined
		const usage: Usage = realtimeUsage(reported) ?? emptyUsage()
		this.context = usage.input + usage.cacheRead + usage.output
		const endReason = abandoned ? 'client_abort' : status === 'failed' ? 'error' : 'ok'
		const record = usageRecord(this.base, {
			channel: this.channel,
			upstreamModel: this.upstreamModel,
			status: 200,
			endReason,
			usage,
			estimated: realtimeUsage(reported) === undefined,
		})
		// No hold: the session is being cut off; what the response cost is still charged, as far as the headroom goes.
		const h = hold ?? (await this.s.svc.ledger.reserve(this.owner(), this.s.requestId, 0, 0))
		const charged = await h.settle(tokenCost(usage, this.s.price), record)
		observeUsage(this.s.svc, this.s.token, record, charged)
		if (!this.clientGone && !this.cutOff) await this.reserveNext()
	}

	private owner = () => ({
		accountId: this.s.token.accountId,
		tokenId: this.s.token.id,
	})

	/** The hold for the next response; when the headroom cannot cover a minimal one, the session ends. */
	private async reserveNext() {
		const { want, min } = responseBound(this.s.price, this.context)
		const ledger = this.s.svc.ledger
		try {
			this.hold = ledger.reserveNow(this.owner(), this.s.requestId, want) ?? (await ledger.reserve(this.owner(), this.s.requestId, want, min))
		} catch (e) {
			this.end(e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error'))
		}
	}

	/** Tells the client why (an OpenAI Realtime `error` event) and closes both sockets. */
	private end(err: GatewayError) {
		this.cutOff = true
		if (this.client && !this.clientGone) {
			this.clientGone = true
			this.client.send(
				JSON.stringify({
					type: 'error',
					event_id: `event_${this.s.requestId}`,
					error: { ...errorBody(err).error, event_id: null },
				}),
			)
			this.client.close(1008, err.code ?? 'session ended')
		}
		const up = this.upstream
		if (up && up.readyState < WebSocket.CLOSING) up.close(1000, 'session ended')
	}

	/** A response the upstream never finished: recorded, not charged (its usage is unknown). */
	private async cutResponse() {
		const hold = this.hold
		this.hold = undefined
		const record = usageRecord(this.base, {
			channel: this.channel,
			upstreamModel: this.upstreamModel,
			status: 502,
			endReason: 'upstream_cut',
			usage: emptyUsage(),
			estimated: true,
		})
		if (hold) await hold.release(record)
		observeUsage(this.s.svc, this.s.token, record, 0)
	}

	/** Once both sides are done with: the rest of the hold goes back. */
	private async finish() {
		if (this.finished) return
		this.finished = true
		await this.billing
		const hold = this.hold
		this.hold = undefined
		await hold?.release()
	}
}
