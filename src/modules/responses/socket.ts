/**
 * GET /v1/responses with `Upgrade: websocket`: OpenAI's Responses API WebSocket mode (the openai SDKs'
 * `client.responses.connect()` / `ResponsesWS`, Codex CLI, the Agents SDK's `OpenAIResponsesWSModel`), for every model
 * `POST /v1/responses` serves.
 * Each `response.create` message is served as the streamed POST it stands for: its fields (less `type`, with
 * `stream: true`) become the body of a POST /v1/responses handed to the app itself, with the handshake's headers. So
 * one code path serves both: the body limit and schema, the key (its expiry, spend limit, allowed models, rate limit,
 * looked at again for every response), the relay, converters, billing and usage rows, the stored answers. Each SSE
 * event of the answer goes out as one text message (its `data` JSON); an answer refused before it streams (an HTTP
 * error) goes out as an `error` event with its `status`, the error object and its `headers` (request id, `retry-after`),
 * as OpenAI's socket sends them. A client
 * that closes mid-answer cuts the POST as an HTTP client that disconnects does (billed the same).
 * Responses run one after another, in the order asked (the mode does not multiplex: a `response.create` sent while one
 * runs waits for it, up to MAX_WAITING of them). The connection remembers its last response: a `previous_response_id` naming it when it was made
 * with `store: false` (or `generate: false`, a warm-up that generates nothing, bills nothing and answers a completed
 * response with no output) continues it from memory, its input and output put before the new input (the Response objects still name it), as
 * OpenAI's connection-local cache allows for responses it never stored. OpenAI's own socket keeps an unstored
 * response's reasoning server-side; here it must go back as `encrypted_content`, which the gateway asks for itself
 * (and keeps from a client that did not) when such a response may be continued.
 * A connection lasts at most RESPONSES_WS_MAX_AGE_MS (OpenAI's 60 minutes): then the `error` event
 * `websocket_connection_limit_reached` and a close, after the response running then, if any.
 * `response.steer` (steer.ts) queues user input for the running response, answered at once rather than queued behind it.
 * A `response.create`'s `stream_id` (a lane) is the socket's, not the POST's: every event of that response echoes it.
 * @module
 */
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { GatewayError } from '../../core/errors'
import { jsonObjectOrUndefined } from '../../core/json'
import { createSseParser } from '../../core/sse'
import { newId } from '../../lib/ids'
import { missingKey, presentedKey } from '../../http/model-auth'
import { live, sendToClient, type SocketHandlers } from '../../relay/socket-relay'
import type { Services } from '../../services'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { asksEncrypted, ENCRYPTED, forClient, type Item, onLane } from './socket-events'
import { accepted, failed, invalidSteer, MAX_STEERS, pending, requiredInput, type Steer, steerItems, successorSettings } from './steer'
import { openaiErrors } from '../../passthrough/schemas'

/** Handshake headers that belong to the upgrade, not to the POSTs made of its messages. */
const UPGRADE_HEADERS = new Set(['upgrade', 'connection', 'host', 'content-length', 'content-type', 'transfer-encoding', 'accept-encoding'])

/**
 * Messages that may wait behind the running response. Each may be up to MAX_JSON_BYTES: a client that sends faster than
 * it is answered gets an `error` event for the surplus rather than a queue that grows without bound.
 */
export const MAX_WAITING = 8

/** The last response of a connection, when it can only be continued from memory. */
type Remembered = { id: string; input: unknown[]; output: unknown[] }

/** The response being streamed: its request, its id once `response.created` named it, and how it ended. */
type Active = { body: Record<string, unknown>; lane?: string; id?: string; status?: string; output?: unknown[] }

/** Steering held for a response that waits for the client's tool results: its submissions and what is owed. */
type Held = { steers: Steer[]; required: Record<string, unknown>[]; lane?: string }

/**
 * Response headers a refused response's `error` event carries in its `headers`, as OpenAI's socket sends them: Codex reads
 * the event as that HTTP answer (its "request id: …" comes from `x-request-id`), and a 429's wait goes with it.
 */
const ERROR_HEADERS = ['x-request-id', 'retry-after', 'retry-after-ms']

/** An `error` event as OpenAI's Responses socket sends it: the HTTP status it stands for, the error object, and `headers` if any. */
export function socketError(status: number, error: Record<string, unknown>, headers?: Record<string, string>): string {
	return JSON.stringify({ type: 'error', status, error, ...(headers && Object.keys(headers).length > 0 && { headers }) })
}

const refusal = (status: number, message: string, code: string, param: string | null = null) =>
	socketError(status, { type: 'invalid_request_error', code, message, param })

/** A connection's age limit as OpenAI's message words it ("60 minutes"), or in milliseconds when it is not whole minutes. */
const ageLimit = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${ms} ms`)

/**
 * The `error` event OpenAI's socket sends a connection that reached its limit (60 minutes), before it closes: status
 * 400, code `websocket_connection_limit_reached` (the event as Codex's own test of it has it, openai/codex
 * codex-api/src/endpoint/responses_websocket.rs; developers.openai.com/api/docs/guides/websocket-mode). Codex opens a
 * new connection on it.
 */
export const limitReached = (ms: number) =>
	refusal(400, `Responses websocket connection limit reached (${ageLimit(ms)}). Create a new websocket connection to continue.`, 'websocket_connection_limit_reached')

/** Input as a list of items (a string is one user message, as the API reads it). */
const inputItems = (input: unknown): unknown[] =>
	input === undefined || input === null ? [] : Array.isArray(input) ? input : [{ type: 'message', role: 'user', content: input }]

/** An event's `sequence_number` (its own: nothing nested in an event, a Response object or an item, has one). */
const SEQUENCE = /"sequence_number":(\d+)/

/**
 * One connection: its queue of messages, the POST it is running (cut when the client leaves) and its last response.
 */
class ResponsesSocket {
	private ws?: Parameters<SocketHandlers['open']>[0]
	private queue: Promise<void> = Promise.resolve()
	private running?: AbortController
	private waiting = 0
	private closed = false
	private remembered?: Remembered
	/** Set once the connection reached its age limit: what runs finishes, then the connection ends. */
	private expired = false
	private ageTimer?: ReturnType<typeof setTimeout>
	private active?: Active
	/** Steering accepted for the active response. */
	private steers: Steer[] = []
	/** Steering held for responses that wait for the client's tool results, by response id (oldest first). */
	private held = new Map<string, Held>()
	/** The last response that ended here: steering it is too late. */
	private lastEnded?: string
	/** The `sequence_number` of the last event relayed, which steering events carry (they come between its events). */
	private seq = 0

	constructor(
		private readonly svc: Services,
		private readonly handle: (request: Request) => Promise<Response>,
		private readonly url: string,
		private readonly headers: Headers,
	) {}

	open(ws: Parameters<SocketHandlers['open']>[0]) {
		this.ws = ws
		live.add(this)
		this.ageTimer = setTimeout(() => this.expire(), this.svc.env.responsesWsMaxAgeMs)
	}

	message(data: string | Buffer) {
		// Steering concerns the running response: answered at once, not queued behind it.
		const text = typeof data === 'string' ? data : data.toString('utf8')
		if (text.includes('"response.steer"') && Buffer.byteLength(text) <= this.svc.env.maxJsonBytes) {
			const event = jsonObjectOrUndefined(text) as Record<string, unknown> | undefined
			if (event && !Array.isArray(event) && event.type === 'response.steer') return this.steer(event)
		}
		if (this.waiting >= MAX_WAITING)
			return void this.send(socketError(429, { type: 'invalid_request_error', code: 'too_many_pending_messages', message: `More than ${MAX_WAITING} messages are waiting for the running response: wait for its end before sending more`, param: null }))
		this.waiting++
		// In order, one at a time: the mode runs responses sequentially on a connection.
		this.queue = this.queue
			.then(() => {
				this.waiting--
				return this.serve(data)
			})
			.catch((e) => this.svc.log.warn('responses socket message failed', { error: String(e) }))
	}

	closedByClient() {
		this.closed = true
		live.delete(this)
		clearTimeout(this.ageTimer)
		this.running?.abort()
	}

	async shutdown() {
		this.closed = true
		live.delete(this)
		clearTimeout(this.ageTimer)
		this.running?.abort()
		this.ws?.close(1001, 'server shutting down')
	}

	/**
	 * The connection's age limit: a response running then is not cut (it was accepted, and is billed whole), as
	 * OpenAI answers the limit with an `error` event rather than a failed response. It ends after it, and after the
	 * messages already waiting, which are not served: each would be refused the same way.
	 */
	private expire() {
		this.expired = true
		this.queue = this.queue.then(() => this.endAtLimit())
	}

	/**
	 * The `error` event, then the close: 1001 (going away), which the openai SDKs' opt-in reconnect takes as a cue to
	 * open a new connection, as the event asks. The connection's memory (`store: false` responses) goes with it.
	 */
	private endAtLimit() {
		if (this.closed || !this.ws) return
		// Steering held for responses waiting for tool results: no response.create can commit it now, so it is handed back.
		for (const [id, held] of this.held)
			for (const s of held.steers) this.send(failed(s, 'response_not_active', `The connection reached its limit before response '${id}' was continued: its steering input was not committed`, this.seq), held.lane)
		this.held.clear()
		if (!this.send(limitReached(this.svc.env.responsesWsMaxAgeMs))) return
		this.ws.close(1001, 'websocket_connection_limit_reached')
		this.closedByClient()
	}

	/** `lane`: the `stream_id` of the response the event concerns, which it echoes. */
	private send(text: string, lane?: string): boolean {
		if (this.closed || !this.ws) return false
		if (sendToClient(this.ws, onLane(text, lane))) return true
		// A client that does not read: ended, as the other sockets end it, rather than buffered without bound.
		this.ws.close(1008, 'client too slow')
		this.closedByClient()
		return false
	}

	/** A `response.steer`: queued for the running response it names (steer.ts says what follows). */
	private steer(event: Record<string, unknown>) {
		const sent = { target: event.previous_response_id, input: event.input }
		const bad = invalidSteer(event)
		if (bad) return void this.send(failed(sent, 'invalid_input', bad, this.seq))
		const target = event.previous_response_id as string
		const running = this.active?.id === target && this.active.status === undefined
		const held = this.held.get(target)
		const lane = running ? this.active!.lane : held?.lane
		// Past the limit nothing more is created here: no successor, and no response.create answering a held response.
		if ((running || held) && this.expired) return void this.send(failed(sent, 'response_not_active', 'The connection reached its limit: open a new one', this.seq), lane)
		if (!running && !held) {
			const late = target === this.lastEnded
			const code = late ? 'response_already_completed' : 'response_not_found'
			return void this.send(failed(sent, code, late ? `Response '${target}' has completed: send its input in a new \`response.create\`` : `No response '${target}' is running on this connection`, this.seq))
		}
		const queue = running ? this.steers : held!.steers
		if (queue.length >= MAX_STEERS) return void this.send(failed(sent, 'too_many_pending_steers', `More than ${MAX_STEERS} steering inputs are pending for response '${target}'`, this.seq), lane)
		const s: Steer = { id: newId('steer_'), target, input: event.input, items: steerItems(event.input) }
		queue.push(s)
		if (this.send(accepted(s, this.seq), lane) && held) this.send(pending(s, held.required, this.seq), lane)
	}

	private async serve(data: string | Buffer) {
		if (this.closed) return
		if (this.expired) return this.endAtLimit()
		const limit = this.svc.env.maxJsonBytes
		const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength
		if (size > limit) return void this.send(socketError(413, { type: 'invalid_request_error', code: 'request_too_large', message: `Message is ${size} bytes; the limit is ${limit}`, param: null }))
		let event: unknown
		try {
			event = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'))
		} catch {
			return void this.send(refusal(400, 'The message is not valid JSON: send one JSON object per text message', 'invalid_json'))
		}
		if (!event || typeof event !== 'object' || Array.isArray(event)) return void this.send(refusal(400, 'A message must be a JSON object with a `type`', 'invalid_type', 'type'))
		const { type, stream: _stream, generate, stream_id: lane, ...body } = event as Record<string, unknown>
		if (type !== 'response.create')
			return void this.send(refusal(400, `Unknown client event type ${JSON.stringify(type)}: the Responses socket takes \`response.create\` and \`response.steer\``, 'unknown_event_type', 'type'))
		// A lane (`stream_id`) is the socket's, "not part of POST /v1/responses" (the SDK's ResponseCreate): its events echo it.
		if (lane !== undefined && (typeof lane !== 'string' || !lane)) return void this.send(refusal(400, '`stream_id` must be a non-empty string', 'invalid_type', 'stream_id'))
		if (body.background === true) return void this.send(refusal(400, '`background` is not supported over WebSocket: use POST /v1/responses', 'unsupported_parameter', 'background'), lane)
		delete body.background
		await this.dispatch(body, generate === false, lane)
	}

	/**
	 * A response to create (a client's, or a steered response's successor, `successor` its steering): steering held for
	 * the response it continues goes first in its input, in submission order; then a continuation of the connection's
	 * last response that was never stored is served from memory (its input and output first).
	 */
	private async dispatch(body: Record<string, unknown>, warm: boolean, lane: string | undefined, successor?: Steer[]) {
		const parent = typeof body.previous_response_id === 'string' ? body.previous_response_id : undefined
		const held = parent !== undefined && !warm ? this.held.get(parent) : undefined
		if (held) {
			this.held.delete(parent!)
			body.input = [...held.steers.flatMap((s) => s.items), ...inputItems(body.input)]
		}
		const mem = this.remembered
		let continued: string | undefined
		if (mem && parent === mem.id) {
			body.input = [...mem.input, ...mem.output, ...inputItems(body.input)]
			delete body.previous_response_id
			continued = mem.id
		}
		if (warm) return this.warmUp(body, continued, lane)
		await this.create(body, continued, lane, successor ?? held?.steers, !!successor)
		await this.settle()
	}

	/**
	 * The steering of the response that just ended: a successor continues it with the input at once, unless it waits
	 * for the client's tool results (the input is then held for the client's next `response.create` naming it, and
	 * `response.steer.pending` says so) or did not complete (`response.steer.failed`, the input handed back).
	 */
	private async settle() {
		const ended = this.active
		const steers = this.steers
		this.active = undefined
		this.steers = []
		if (!ended || steers.length === 0) return
		if (!ended.id || (ended.status !== 'completed' && ended.status !== 'incomplete') || this.closed || this.expired) {
			for (const s of steers) this.send(failed(s, 'response_not_active', `Response '${s.target}' ended without completing: its steering input was not committed`, this.seq), ended.lane)
			return
		}
		const required = requiredInput(ended.output ?? [])
		if (required.length > 0) {
			this.hold(ended.id, { steers, required, lane: ended.lane })
			for (const s of steers) this.send(pending(s, required, this.seq), ended.lane)
			return
		}
		await this.dispatch({ ...successorSettings(ended.body), previous_response_id: ended.id, input: steers.flatMap((s) => s.items) }, false, ended.lane, steers)
	}

	/** Holds steering for a response waiting for the client; past MAX_STEERS responses, the oldest's is given back. */
	private hold(id: string, held: Held) {
		this.held.set(id, held)
		if (this.held.size <= MAX_STEERS) return
		const [oldest, dropped] = this.held.entries().next().value!
		this.held.delete(oldest)
		for (const s of dropped.steers) this.send(failed(s, 'response_not_active', `Response '${oldest}' was not continued: its steering input was not committed`, this.seq), dropped.lane)
	}

	/** `generate: false`: no model call and no charge; the request is kept for the next `response.create` to continue. */
	private warmUp(body: Record<string, unknown>, continued: string | undefined, lane: string | undefined) {
		const id = newId('resp_')
		const response = {
			id,
			object: 'response',
			created_at: Math.floor(Date.now() / 1000),
			status: 'completed',
			model: body.model ?? null,
			output: [],
			previous_response_id: continued ?? null,
			usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
		}
		this.remembered = { id, input: inputItems(body.input), output: [] }
		if (this.send(JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress' } }), lane))
			this.send(JSON.stringify({ type: 'response.completed', sequence_number: 1, response }), lane)
	}

	/**
	 * One response: the streamed POST it stands for, its events relayed one per message. `committing`: steering its
	 * input carries, handed back with `response.steer.failed` when the POST is refused (a successor's refusal is only
	 * that: the client sent no `response.create` for it).
	 */
	private async create(body: Record<string, unknown>, continued: string | undefined, lane: string | undefined, committing?: Steer[], successor = false) {
		const abort = new AbortController()
		this.running = abort
		this.active = { body, lane }
		const headers = new Headers(this.headers)
		headers.set('content-type', 'application/json')
		const model = typeof body.model === 'string' ? body.model : ''
		const strip = asksEncrypted(body, this.svc.catalog.channelsFor(model).map((ch) => ch.modelMap[model] ?? model))
		const include = Array.isArray(body.include) ? body.include : []
		const raw = JSON.stringify({ ...body, ...(strip && { include: [...include, ENCRYPTED] }), stream: true })
		headers.set('content-length', String(Buffer.byteLength(raw)))
		try {
			const res = await this.handle(new Request(this.url, { method: 'POST', headers, body: raw, signal: abort.signal }))
			if (!res.ok || !res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
				const text = await res.text()
				const parsed = jsonObjectOrUndefined(text) as { error?: unknown } | undefined
				const error =
					parsed?.error && typeof parsed.error === 'object'
						? (parsed.error as Record<string, unknown>)
						: { type: 'api_error', code: null, message: text || `HTTP ${res.status}`, param: null }
				const headers: Record<string, string> = {}
				for (const name of ERROR_HEADERS) {
					const value = res.headers.get(name)
					if (value !== null) headers[name] = value
				}
				if (!successor) this.send(socketError(res.status, error, headers), lane)
				for (const s of committing ?? []) this.send(failed(s, 'successor_creation_failed', `The successor response could not be created: ${String(error.message ?? `HTTP ${res.status}`)}`, this.seq), lane)
				return
			}
			await this.relay(res.body, body, abort, continued, strip, lane)
		} finally {
			if (this.running === abort) this.running = undefined
		}
	}

	/**
	 * The SSE stream, one event's `data` per message; the completed response is remembered (as the upstream sent it,
	 * encrypted reasoning included) when it was not stored. `strip`: the gateway asked for `encrypted_content` itself.
	 */
	private async relay(stream: ReadableStream<Uint8Array>, body: Record<string, unknown>, abort: AbortController, continued: string | undefined, strip: boolean, lane: string | undefined) {
		const reader = stream.getReader()
		const cut = () => void reader.cancel().catch(() => {})
		abort.signal.addEventListener('abort', cut, { once: true })
		const decoder = new TextDecoder()
		const parser = createSseParser()
		const emit = (data: string) => {
			if (!data || data === '[DONE]') return true
			this.watch(data, body)
			return this.send(forClient(data, continued, strip), lane)
		}
		try {
			for (;;) {
				const { done, value } = await reader.read()
				if (done) break
				for (const f of parser.push(decoder.decode(value, { stream: true }))) if (!emit(f.data)) return cut()
			}
			for (const f of parser.end(decoder.decode())) emit(f.data)
		} catch (e) {
			if (!abort.signal.aborted) throw e
		} finally {
			abort.signal.removeEventListener('abort', cut)
		}
	}

	/**
	 * What steering and memory need of an event relayed: its `sequence_number`, the response's id (`response.created`),
	 * and how it ended (`response.completed`, `.incomplete`, `.failed`). Only those events are parsed.
	 */
	private watch(data: string, body: Record<string, unknown>) {
		const seq = SEQUENCE.exec(data)
		if (seq) this.seq = Number(seq[1])
		const created = data.includes('"response.created"')
		const ended = !created && (data.includes('"response.completed"') || data.includes('"response.incomplete"') || data.includes('"response.failed"'))
		if (!created && !ended) return
		const event = jsonObjectOrUndefined(data) as { type?: string; response?: { id?: string; status?: string; output?: unknown[] } } | undefined
		const id = event?.response?.id
		if (typeof id !== 'string' || !this.active) return
		if (event!.type === 'response.created') this.active.id = id
		if (event!.type !== 'response.completed' && event!.type !== 'response.incomplete' && event!.type !== 'response.failed') return
		Object.assign(this.active, { status: event!.response!.status ?? event!.type.slice('response.'.length), output: event!.response!.output ?? [] })
		this.lastEnded = id
		if (event!.type !== 'response.failed') this.rememberAnswer(event as { response: { id: string; output?: unknown[] } }, body)
	}

	/**
	 * The connection's last response, kept when it was not stored (a stored one is continued as the POST continues it):
	 * as OpenAI's connection-local cache, only the latest. A reasoning item without `encrypted_content` is not kept:
	 * unstored, it could not be replayed (OpenAI answers 404 for its id), and nothing else of it reaches any vendor.
	 */
	private rememberAnswer(event: { response: { id: string; output?: unknown[] } }, body: Record<string, unknown>) {
		const output = (event.response.output ?? []).filter((item) => (item as Item | null)?.type !== 'reasoning' || typeof (item as Item).encrypted_content === 'string')
		this.remembered = body.store === false ? { id: event.response.id, input: inputItems(body.input), output } : undefined
	}
}

/**
 * The upgrade: the key is looked at before it (a bad or missing one is the HTTP 401 a refused handshake shows), and
 * again for every response (`handle` runs each through the app's own POST route).
 */
export const responsesSocketModule = (svc: Services, handle: (request: Request) => Promise<Response>) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).get(
		'/v1/responses',
		async ({ request, server, set }) => {
			const key = presentedKey(request, false)
			if (!key) throw missingKey('openai')
			svc.keys.cached(key) ?? (await svc.keys.authenticate(key))
			if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || !server)
				throw new GatewayError('invalid_request', 'GET /v1/responses is the Responses API WebSocket mode: connect with Upgrade: websocket (create responses with POST /v1/responses)', {
					status: 426,
					code: 'websocket_required',
				})
			const headers = new Headers()
			request.headers.forEach((v, k) => {
				if (!UPGRADE_HEADERS.has(k) && !k.startsWith('sec-websocket-') && k !== 'x-request-id') headers.set(k, v)
			})
			const url = new URL(request.url)
			const socket = new ResponsesSocket(svc, handle, `${url.protocol === 'https:' ? 'https' : 'http'}://${url.host}/v1/responses`, headers)
			const handlers: SocketHandlers = {
				open: (ws) => socket.open(ws),
				message: (_ws, data) => socket.message(data),
				close: () => socket.closedByClient(),
			}
			const requestId = set.headers['x-request-id'] as string
			if ((server as Server<unknown>).upgrade(request, { headers: { 'x-request-id': requestId }, data: handlers })) return
			throw new GatewayError('invalid_request', 'The WebSocket upgrade failed', { status: 426, code: 'websocket_required' })
		},
		{
			response: { 426: OpenAIErrorBody, ...openaiErrors },
			detail: {
				summary: 'Responses API WebSocket mode',
				description:
					'OpenAI Responses API over WebSocket (`wss://…/v1/responses`, `Authorization: Bearer sk-…` on the handshake), for every model POST /v1/responses serves. Each `response.create` message (the fields of POST /v1/responses; `stream` implicit, `background` refused) is served as a streamed POST /v1/responses and billed as one (one usage row per response); each event of its stream is one text message. A response refused before it streams is an `error` event with its `status`. Responses run one at a time, in order; `previous_response_id` may name the connection\'s last response even with `store: false` (kept in the connection\'s memory); `generate: false` warms up without generating or charging. `response.steer` queues user input for the running response (`response.steer.accepted`); once it completes a successor response continues it with that input, or, when it waits for the client\'s tool results, `response.steer.pending` holds the input for the `response.create` that answers it; `response.steer.failed` hands input back. A connection lasts at most 60 minutes (`RESPONSES_WS_MAX_AGE_MS`): then an `error` event `websocket_connection_limit_reached` and a close. A plain GET without `Upgrade: websocket` answers 426.',
			},
		},
	)
