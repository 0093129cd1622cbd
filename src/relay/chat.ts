/**
 * The chat relay: one client request in any protocol → budget → channel attempts → the answer in the client's
 * protocol, billed exactly once. Failover happens only before the first byte reaches the client.
 * @module
 */
import type { AuthToken } from '../auth/api-key'
import { failedRow } from '../billing/usage-record'
import { closedAfterSend, GatewayError, unsupportedForModel } from '../core/errors'
import type { ChatRequest, ChatResponse } from '../core/ir'
import { type CodeOutputs, codeOutputsOf } from '../protocols/anthropic-messages/code-outputs'
import { errorResponse, type ErrorShape } from '../http/error-shapes'
import { mcpAttempt, mcpOfRequest, runsMcpHere } from '../mcp/attempt'
import type { McpPrepared } from '../mcp/prepare'
import type { ProtocolCodec } from '../protocols/codec'
import { continuedPrefill } from '../protocols/final-turn'
import type { ChatAdapter } from '../providers/adapter'
import { adaptersReady, chatAdapterOf } from '../providers/registry'
import { answeredError, upstreamError } from '../providers/upstream-error'
import type { Channel } from '../routing/catalog'
import { holdersOf } from '../routing/select'
import { type ResponseAttempt as Attempt, tryChannels } from '../routing/attempts'
import type { Services } from '../services'
import type { TSchema } from 'elysia'
import type { HotRoute, RouteContext } from '../http/hot-route'
import { type BilledHook, type Budget, type CallInfo, type Route, release, reserveBudget, resolveModel, settle, threadSize } from './budget'
import { boundInputTokens, estimateInputTokens } from './estimate'
import { mediaOnChannels } from './image-tokens'
import { reachOf } from './reach'
import { bodyText, rewriteBody } from './fast-path'
import type { TextPieces } from './text-pieces'
import { choicesAttempt, choicesField, MAX_FANNED_ANSWERS, mostAnswers, tooManyAnswers } from './choices'
import { topLevelMembers } from './json-members'
import { relayStream } from './stream'
import { convertedBody } from './upstream-codec'
import { channelTimeouts, fetchUpstream, malformedAnswer, unreadableAnswer, waitsFor } from './upstream-fetch'
import { countOutputText } from './output-count'
import { fitCap } from './output-limit'
import { cutAnswer, splitStops } from './stop-sequences'
import { tierHeaderOf, tierSaid, withTierSaid } from './served-tier'
import { metricModel } from '../metrics/model-label'

export type ChatCall = {
	svc: Services
	token: AuthToken
	requestId: string
	endpoint: string
	shape: ErrorShape
	client: ProtocolCodec
	/** The validated wire body (forwarded as is on the fast path). */
	body: Record<string, unknown>
	/** The body's text as the client sent it, when the route kept it: forwarded when the fast path changes nothing. */
	raw?: string
	ir: ChatRequest
	/** OpenAI clients: they asked for the usage chunk. */
	includeUsage: boolean
	inbound: Headers
	signal: AbortSignal
	startedAt: number
	/**
	 * A client protocol's own route on channels that speak it natively although their adapter's chat protocol differs
	 * (OpenAI Responses → `{base_url}/responses`). Called per channel before anything else: an answer ends the attempt;
	 * undefined lets the attempt convert as usual.
	 */
	native?: NativeRoute
	/** The Anthropic message thread the request creates or continues (modules/messages/threads.ts). */
	thread?: ThreadTerms
	/**
	 * The only channel that may serve the request: the one holding the Gemini Files API uploads it names
	 * (modules/gemini-files/refs.ts), which no other vendor key can read.
	 */
	pinned?: { channelId: number; what: string }
	/** The Files API files and the code execution container the request names (modules/anthropic-files/refs.ts). */
	files?: FileTerms
	/** The request offers Claude's code execution tool: what its answer names is recorded (modules/anthropic-files/outputs.ts). */
	outputs?: OutputTerms
	/** Where Claude's thinking is kept for clients that drop it (modules/chat/kept-thinking.ts). */
	thinking?: KeptThinking
	/** The MCP servers the gateway connects to for this request, listed before the reservation (src/mcp/prepare.ts). */
	mcp?: McpPrepared
	/** Told the usage billed, for a route that keeps the answer (modules/chat-stored/keep.ts). */
	billed?: BilledHook
}

/** Claude's thinking kept for clients that replay its tool calls without it (modules/chat/kept-thinking.ts). */
export type KeptThinking = {
	/** `ir` with the kept thinking put back on turns replayed without it; undefined (and no promise) when none could be. */
	restore(ir: ChatRequest, accountId: number): ChatRequest | undefined | Promise<ChatRequest | undefined>
	/** What keeps a converted Claude answer's thinking: undefined for a request without tools or thinking. */
	terms(ir: ChatRequest, accountId: number): ThinkingTerms | undefined
}

/**
 * Keeps the thinking blocks of a converted Claude answer that calls tools, before the client gets its end, so a next
 * turn replaying the calls without them gets them back (chat clients drop `reasoning_details`).
 */
export type ThinkingTerms = {
	/** Keeps what a whole answer's content holds; resolves once written (or failed: never rejects). */
	keep(content: ChatResponse['content']): Promise<void>
	/** The client codec that keeps a streamed answer's, and its Response with the end held back until written. */
	streaming(client: ProtocolCodec): { client: ProtocolCodec; hold(res: Response): Promise<Response> }
}

/**
 * A request offering Claude's code execution tool: the files its code writes and the container it runs in are kept
 * by the vendor key that ran it, so they are recorded to the account with that channel before the answer naming them
 * goes out (the caller may download a file at once, another account may not, and a request reusing the container is
 * sent to the same channel).
 */
export type OutputTerms = {
	/** Records what an answer from `channelId` names. Never rejects. */
	keep(found: CodeOutputs, channelId: number): Promise<void>
}

/**
 * A request naming files uploaded with Anthropic's Files API (`source: {type: 'file', file_id}`), all the account's,
 * or a code execution container to reuse (`container`) the account's answers named: the vendor key that holds them is
 * one channel's, so only that channel can serve the request. Likewise OpenAI files the account uploaded, or its
 * batches wrote (modules/batches/refs.ts).
 */
export type FileTerms = {
	/** The channel the files were uploaded to (or written on), or that ran the container. */
	channelId: number
	/** The files named (none when only a container is). */
	ids: string[]
	/** The container named. */
	container?: string
	/** The client's headers with the Files API beta named in `anthropic-beta` (sent on by the fast path). */
	inbound: Headers
	/** The refusal for a model the holding channel does not serve, when not Anthropic's (modules/batches/refs.ts: OpenAI files). */
	unreadable?: (model: string) => GatewayError
}

/**
 * A request naming a vendor-kept conversation (an Anthropic message thread): the conversation's tokens the vendor
 * already holds, which it bills as input with the new messages (so they are reserved too), the channel that holds it,
 * and how to record a reply as a thread the account may continue.
 */
export type ThreadTerms = {
	/** Tokens the vendor holds for the conversation continued (0 for a new one). */
	held: number
	/** The channel keeping it: the only one a continue can go to. */
	channelId?: number
	/** Records the reply `messageId`, whose thread is now `tokens` long, as kept on `channelId`. Never rejects. */
	keep(messageId: string, channelId: number, tokens: number): Promise<void>
}

export type NativeRoute = (ch: Channel, adapter: ChatAdapter, info: CallInfo, budget: Budget) => Promise<Attempt | undefined>

export async function relayChat(call: ChatCall): Promise<Response> {
	const { svc, ir } = call
	const info: CallInfo = { svc, token: call.token, requestId: call.requestId, endpoint: call.endpoint, model: ir.model, stream: ir.stream, startedAt: call.startedAt }
	if (call.billed) info.billed = call.billed
	const resolved = resolveModel(svc, call.token, ir.model)
	const route = call.files ? filesRoute(svc, resolved, call.files, ir.model) : pinnedRoute(call, resolved)
	// A Bedrock application inference profile's model, the first time (bounded): the API it goes over and its limits depend on it.
	const ready = adaptersReady(route.channels, ir.model, svc.log)
	if (ready) await ready
	if (ir.choices && !route.channels.some((ch) => canGiveChoices(call, ch))) throw severalChoices(call, false)
	// Refused before anything is reserved when no channel gives that many (one asked once per answer, Gemini's most).
	if (ir.choices && ir.choices > MAX_FANNED_ANSWERS) {
		const most = Math.max(...route.channels.map((ch) => mostAnswers(call, ch)))
		if (ir.choices > most) throw tooManyAnswers(call, false, most)
	}
	// The cap: the model's maximum on a converted request, and fitted to the context window where the vendor counts it
	// against the window (output-limit.ts).
	const limits = svc.catalog.limits(ir.model)
	// A thread's continue carries only its new messages; the vendor bills the whole conversation (modules/messages/threads.ts).
	const held = call.thread?.held ?? 0
	// Images and PDF pages as the route's vendors count them, the most of any channel that may serve (image-tokens.ts).
	const media = mediaOnChannels(route.channels, ir)
	// MCP servers the gateway connects to: their tools (and the errors of those it cannot reach) are round 1's prompt
	// too, so it is that prompt that is reserved and counted.
	// Not awaited without servers: every other request goes on in the same turn.
	const connecting = mcpOfRequest(call, route.channels)
	const mcp = connecting && (await connecting)
	if (mcp) call = { ...call, mcp }
	const prompt = mcp?.first ?? ir
	const input = boundInputTokens(prompt, mcp ? undefined : call.raw, media) + held
	// Counted once, whether for the context window or for usage the upstream does not report.
	let counted: number | undefined
	const count = () => (counted ??= estimateInputTokens(prompt, media) + held)
	let budget: Budget
	try {
		const { price, uncapped } = fitCap(call.client.name, ir, route.channels, route.price, limits, input, count)
		const reserved = reserveBudget(svc, call.token, call.requestId, price, input, ir.maxTokens, count, ir.choices, uncapped, reachOf(call, route), promptsPaid(call, route.channels))
		budget = reserved instanceof Promise ? await reserved : reserved
	} catch (e) {
		mcp?.close()
		throw e
	}
	let lastErr: GatewayError
	let lastChannel: Channel | undefined
	try {
		const r = await tryChannels(svc, route.channels, call.signal, (ch) => attemptChat(call, info, ch, budget), ir.model)
		if ('ok' in r) return r.ok
		lastErr = r.error
		lastChannel = r.channel
	} catch (e) {
		lastErr = e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')
		if (!(e instanceof GatewayError)) svc.log.error('relay failed', { request_id: call.requestId, error: String(e) })
	} finally {
		// Sessions no agent loop took (every attempt failed, or a channel answered without them) end here.
		mcp?.close()
	}
	// The row records the status the client got, which its shape decides (Anthropic's overload is 529, others' 503).
	const res = errorResponse(lastErr, call.shape, call.requestId)
	const failed = failedRow(res.status, call.signal.aborted)
	// A client that leaves once the vendor has its request pays the input, as a stream it leaves midway does: the vendor
	// bills it, and hanging up before the first byte must not make a long prompt free.
	if (lastChannel && closedAfterSend(lastErr)) await settle(info, budget, { estimateOutput: () => 0, status: failed.status, endReason: failed.endReason, channel: lastChannel })
	else await release(info, budget, failed.status, failed.endReason, lastChannel)
	return res
}

/** The route narrowed to one channel (the one holding uploaded files the request names), or undefined when it serves none of it. */
function onChannel(route: Route, channelId: number): Route | undefined {
	const channels = route.channels.filter((ch) => ch.id === channelId)
	return channels.length ? { ...route, channels } : undefined
}

/**
 * The model's route on the pinned channel alone, or on the channels reaching the vendor as it does, at its address with
 * its key: another channel of the same Google project (one serving other models, at another priority or price) reads
 * the project's files too. An upload goes to the first Gemini channel in routing order (modules/gemini-files/upload.ts),
 * chosen by weight among equals, so without this a file was readable by a model of the project or not depending on that
 * draw. 400 when none serves the model.
 */
function pinnedRoute(call: ChatCall, route: Route): Route {
	const pin = call.pinned
	if (!pin) return route
	const channels = holdersOf(route.channels, pin.channelId, call.svc.catalog.channels())
	if (channels.length) return { ...route, channels }
	throw new GatewayError(
		'invalid_request',
		`${pin.what} is held by a Gemini channel that does not serve the model "${call.ir.model}": an uploaded file is readable only by the Gemini key it was uploaded with (and Google gives no uploaded file's bytes back to send them elsewhere); use a Gemini model, or send the file inline`,
		{ code: 'unsupported_for_model' },
	)
}

/** What a model route whose handler is this relay is made of (relayRoute). */
export type RelayRouteOptions = {
	endpoint: string
	shape: ErrorShape
	client: ProtocolCodec
	schema: TSchema
	includeUsage(body: unknown): boolean
	/** The thread a body names, when the protocol has them: undefined (no promise) for a body naming none. */
	thread?: (body: Record<string, unknown>, token: AuthToken) => Promise<ThreadTerms | undefined> | undefined
	/** The uploaded files (or container) a body names, when the protocol has them: undefined (no promise) for a body naming none. */
	files?: (body: Record<string, unknown>, token: AuthToken, inbound: Headers) => Promise<FileTerms | undefined> | undefined
	/** What records the code execution outputs of a body's answer: undefined (no allocation) for a body offering no such tool. */
	outputs?: (body: Record<string, unknown>, token: AuthToken, requestId: string) => OutputTerms | undefined
	/** Where Claude's thinking is kept for clients that drop it, when the protocol's clients do. */
	thinking?: KeptThinking
}

/**
 * A model route whose handler is this relay; `serve` also takes what is told the usage billed, from a route that keeps
 * the answer (a stored chat completion: modules/chat-stored/keep.ts).
 */
export type RelayRoute = Omit<HotRoute, 'serve'> & { serve(c: RouteContext, billed?: BilledHook): Promise<Response> }

/**
 * A model route whose handler is this relay (chat completions, messages): what its Elysia route and its hot route
 * (src/http/hot-route.ts) share.
 */
export function relayRoute(svc: Services, o: RelayRouteOptions): RelayRoute {
	return {
		schema: o.schema,
		shape: o.shape,
		serve: ({ body, raw, token, requestId, startedAt, request }, billed?: BilledHook) => {
			const wire = body as Record<string, unknown>
			const call: ChatCall = {
				svc,
				token,
				requestId,
				startedAt,
				endpoint: o.endpoint,
				shape: o.shape,
				client: o.client,
				body: wire,
				raw,
				ir: o.client.decodeRequest(body),
				includeUsage: o.includeUsage(body),
				inbound: request.headers,
				signal: request.signal,
			}
			if (billed) call.billed = billed
			const outputs = o.outputs?.(wire, token, requestId)
			if (outputs) call.outputs = outputs
			if (o.thinking) {
				call.thinking = o.thinking
				const restored = o.thinking.restore(call.ir, token.accountId)
				if (restored instanceof Promise) return restored.then((ir) => withTerms(o, ir ? { ...call, ir } : call))
				if (restored) call.ir = restored
			}
			return withTerms(o, call)
		},
	}
}

/** Relays `call` with the thread and the files its body names, when the protocol has them. */
function withTerms(o: RelayRouteOptions, call: ChatCall): Promise<Response> {
	const thread = o.thread?.(call.body, call.token)
	const files = o.files?.(call.body, call.token, call.inbound)
	if (files) return Promise.all([thread, files]).then(([t, f]) => relayChat({ ...call, ...(t ? { thread: t } : {}), ...(f ? { files: f, inbound: f.inbound } : {}) }))
	return thread ? thread.then((t) => relayChat(t ? { ...call, thread: t } : call)) : relayChat(call)
}

/**
 * The model's route narrowed to the channel holding the files named. A model that channel does not serve (another
 * vendor's, or Claude on another key) cannot read them: Anthropic keeps uploads `downloadable: false`, so the gateway
 * cannot fetch the bytes to inline them either, and the caller is told to send the content itself.
 */
function filesRoute(svc: Services, route: Route, files: FileTerms, model: string): Route {
	const on = onChannel(route, files.channelId)
	if (on) return on
	const named = files.ids.length > 1 ? `the files ${files.ids.join(', ')}` : files.ids.length ? `the file ${files.ids[0]}` : `the container ${files.container}`
	if (!svc.catalog.channel(files.channelId)) throw new GatewayError('unavailable', `The channel holding ${named} is not available`, { code: 'channel_unavailable' })
	if (files.unreadable) throw files.unreadable(model)
	throw files.ids.length ? unreadableFiles(named, model) : foreignContainer(named, model)
}

/** A container runs on the vendor key that created it: another channel's key answers it not found. */
const foreignContainer = (named: string, model: string) =>
	new GatewayError(
		'invalid_request',
		`container: ${named} was created by the Anthropic channel that ran its code, and model "${model}" is not served there; use a model of that channel, or omit \`container\` to start a new one`,
		{ code: 'unsupported_for_model', param: 'container' },
	)

const unreadableFiles = (named: string, model: string) =>
	new GatewayError(
		'invalid_request',
		`messages: ${named} uploaded with Anthropic's Files API can be read only by the Anthropic models of the channel it was uploaded to, and model "${model}" is not served there. Send the content itself (a base64 or text source): uploaded files are not downloadable, so the gateway cannot fetch them for another model`,
		{ code: 'unsupported_for_model', param: 'messages' },
	)

/**
 * Several choices (OpenAI `n`, Gemini `candidateCount`) come from any channel (src/relay/choices.ts), but not from the
 * gateway's own MCP loop, which runs one conversation.
 */
const canGiveChoices = (call: ChatCall, ch: Channel): boolean => {
	const adapter = chatAdapterOf(ch, call.ir.model)
	return adapter !== undefined && !runsMcpHere(call, adapter)
}

export const severalChoices = (call: ChatCall, retryable: boolean) => {
	const field = choicesField(call)
	return unsupportedForModel(`${field} > 1 cannot be combined with MCP servers the gateway connects to for model "${call.ir.model}" (it runs one conversation); ask for one answer`, retryable, field)
}

/**
 * How many times the prompt of a request for several choices may be paid: once per answer when a channel that may
 * serve it is asked once per answer (choices.ts), else once.
 */
const promptsPaid = (call: ChatCall, channels: Channel[]): number => {
	const n = call.ir.choices ?? 1
	if (n === 1) return 1
	return channels.some((ch) => {
		const protocol = chatAdapterOf(ch, call.ir.model)?.protocol
		return protocol !== undefined && protocol !== call.client && !protocol.severalAnswers
	})
		? n
		: 1
}

async function attemptChat(call: ChatCall, info: CallInfo, ch: Channel, budget: Budget): Promise<Attempt> {
	const own = chatAdapterOf(ch, call.ir.model)
	if (!own) return { error: new GatewayError('unavailable', `channel ${ch.name} (${ch.type}) cannot serve chat`, { retryable: true }) }
	if (call.ir.choices && !canGiveChoices(call, ch)) return { error: severalChoices(call, true) }
	const native = call.native && (await call.native(ch, own, info, budget))
	if (native) return native
	const upstreamModel = ch.modelMap[call.ir.model] ?? call.ir.model
	// The vendor's other API when the request needs it (OpenAI: a web search over Responses rather than Chat Completions).
	const adapter = own.routeFor?.(ch, upstreamModel, call.ir) ?? own
	// MCP servers on a channel without its own MCP connector: the gateway is the MCP client (src/mcp).
	if (runsMcpHere(call, adapter)) return mcpAttempt(call, info, ch, adapter, budget)
	// Stop sequences the vendor cannot take are enforced here on the converted answer (each of several), even between
	// the same protocols (stop-sequences.ts).
	const stops = splitStops(call.ir, adapter.protocol, upstreamModel, call.client)
	const fast = adapter.protocol === call.client && stops.held.length === 0
	if (fast && call.thread?.channelId !== undefined && ch.id !== call.thread.channelId) return { error: threadElsewhere(call.ir.model) }
	// Several answers from another vendor: asked of it as it can (one call, or one per answer), merged for the client.
	if (call.ir.choices && !fast) return choicesAttempt(call, info, ch, adapter, budget, upstreamModel, stops)
	let codec = adapter.protocol
	let body: string | TextPieces
	try {
		if (fast) {
			const out = rewriteBody(call.client.name, call.body, upstreamModel, budget.capChanged ? budget.cap : undefined, call.ir.stream)
			body = (call.raw !== undefined && bodyText(call.raw, call.body, out)) || JSON.stringify(out)
		} else ({ body, codec } = await convertedBody(call, ch, adapter, budget, upstreamModel, stops.ir))
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	let up
	const attemptStart = Date.now()
	try {
		up = await fetchUpstream(adapter.chatUrl(ch, upstreamModel, call.ir.stream, !fast && continuedPrefill(call.ir) !== undefined), { headers: adapter.headers(ch, fast ? call.inbound : undefined), body, ch, adapter }, channelTimeouts(ch.settings, waitsFor(call.ir.stream)), call.signal)
	} catch (e) {
		return { error: e instanceof GatewayError ? e : new GatewayError('upstream', String(e), { retryable: true }) }
	}
	const { res } = up
	call.svc.metrics.ttfb.observe({ endpoint: call.endpoint, model: metricModel(call.svc, call.ir.model), channel: ch.name }, (Date.now() - attemptStart) / 1000)
	if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
	const headers: Record<string, string> = { 'x-request-id': call.requestId }
	// The tier a header names (Gemini's), billed when the body names none, and passed on to the same protocol's client.
	const said = tierSaid(codec, res)
	const outcome = { channel: ch, upstreamModel, servedTier: said?.tier }
	if (fast && said) headers[said.name] = said.value

	// Claude's thinking, for a client that drops it when it replays the calls (modules/chat/kept-thinking.ts).
	const thinking = !fast && adapter.protocol.name === 'anthropic-messages' ? call.thinking?.terms(call.ir, call.token.accountId) : undefined

	if (call.ir.stream) {
		if (!res.body) return { error: new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true }) }
		if (!thinking) return relayStream({ call, info, budget, up, fast, upstream: codec, headers, stops: stops.held, ...outcome })
		const keeping = thinking.streaming(call.client)
		const a = await relayStream({ call: { ...call, client: keeping.client }, info, budget, up, fast, upstream: codec, headers, stops: stops.held, ...outcome })
		return 'ok' in a ? { ...a, ok: await keeping.hold(a.ok) } : a
	}

	const malformed = () => ({ error: malformedAnswer() })
	let text: string
	try {
		text = await up.text()
	} catch (e) {
		return { error: unreadableAnswer(e) }
	}
	let outBody = text
	let usage
	let messageId: string | undefined
	let estimateOutput = () => 0
	let kept: Promise<void> | undefined
	try {
		if (fast) {
			// The body goes out as it came: only its usage is parsed, not the whole answer.
			const members = topLevelMembers(text, call.thread ? THREAD_READS : FORWARDED_READS)
			if (!members) return malformed()
			const read: Record<string, unknown> = {}
			for (const [k, s] of members) if (k !== 'model' && k !== 'modelVersion') read[k] = JSON.parse(text.slice(s.start, s.end))
			// No answer of these protocols has an `error` member: a 2xx body with one is a failure (upstream-error.ts).
			if (typeof read.error === 'object' && read.error !== null) return { error: answeredError(read.error as Record<string, unknown>, up.res.headers) }
			if (call.thread && typeof read.id === 'string') messageId = read.id
			// Gemini's Search grounding is billed from the candidates' groundingMetadata (protocols/gemini/grounding.ts):
			// the whole body is read then, and only then.
			usage = call.client.usageOf(call.client.name === 'gemini' && text.includes('"groundingMetadata"') ? JSON.parse(text) : read)
			// A model_map alias is shown to the client as it asked for it, as on the converted path (Gemini: `modelVersion`).
			const model = members.get('model') ?? members.get('modelVersion')
			if (upstreamModel !== call.ir.model && model) outBody = text.slice(0, model.start) + JSON.stringify(call.ir.model) + text.slice(model.end)
			// Only when the upstream sent no usage. The scan checked the structure, not every value: a body JSON.parse
			// refuses is counted as no output rather than failing an answer that is already in hand.
			estimateOutput = () => {
				try {
					return countOutputText(call.client.decodeResponse(JSON.parse(text)))
				} catch {
					return 0
				}
			}
		} else {
			let json: unknown
			try {
				json = JSON.parse(text)
			} catch {
				return malformed()
			}
			const r = codec.decodeResponse(json)
			withTierSaid(r.usage, outcome.servedTier)
			if (stops.held.length) cutAnswer(r, stops.held)
			estimateOutput = () => countOutputText(r)
			if (r.usage.input + r.usage.output + r.usage.cacheRead > 0) usage = r.usage
			// No usage from the upstream: billed on counts (settle), and the client is shown the same counts rather than
			// zeros (WIRE-NOTES #12). `usage` stays unset, so the bill still says estimated.
			else {
				const output = countOutputText(r)
				estimateOutput = () => output
				r.usage = { ...r.usage, input: budget.countInput(), output }
			}
			outBody = JSON.stringify(call.client.encodeResponse(r, { model: call.ir.model, includeUsage: call.includeUsage, includeThoughts: call.ir.reasoning?.includeThoughts }))
			Object.assign(headers, tierHeaderOf(call.client, r.usage))
			if (thinking) kept = thinking.keep(r.content)
		}
	} catch (e) {
		return { error: e instanceof GatewayError ? e : new GatewayError('upstream', 'upstream sent a response we could not read', { retryable: true, code: 'upstream_malformed' }) }
	}
	await settle(info, budget, { usage, estimateOutput, status: 200, endReason: 'ok', ...outcome })
	// Before the answer goes out: the client may continue the thread, or download a file the code wrote, at once.
	if (call.thread && messageId !== undefined) await call.thread.keep(messageId, ch.id, threadSize(usage, budget))
	if (call.outputs && fast) await keepOutputs(call.outputs, text, ch.id)
	await kept
	return { ok: new Response(outBody, { status: 200, headers: { 'content-type': 'application/json', ...headers } }) }
}

/** Records the code execution outputs a whole answer names (only for a request offering the tool: its body is parsed). */
function keepOutputs(outputs: OutputTerms, text: string, channelId: number): Promise<void> | undefined {
	let found: CodeOutputs
	try {
		found = codeOutputsOf(JSON.parse(text))
	} catch {
		return undefined
	}
	return found.files.length || found.container ? outputs.keep(found, channelId) : undefined
}

/** The top-level members the fast path reads from a JSON answer it forwards: the usage, under the key each protocol
 * uses (Gemini's in either spelling), with the tier that served it (OpenAI `service_tier`), and the model (Gemini's
 * `modelVersion`), renamed for a model_map alias; and an `error`, which makes it a failure. */
const FORWARDED_READS = new Set(['usage', 'usageMetadata', 'usage_metadata', 'service_tier', 'model', 'modelVersion', 'error'])
/** …and for a message thread's answer its `id` too, which the next turn continues from (modules/messages/threads.ts). */
const THREAD_READS = new Set([...FORWARDED_READS, 'id'])

/**
 * A thread's continue on a channel other than the one keeping the thread: that vendor key has no such thread. Answered
 * as refuseVendorOnly answers state another vendor keeps (404 thread_not_found, retryable and not the channel's fault),
 * so the holding channel is tried, and when none can serve, the SDK replays the whole conversation.
 */
const threadElsewhere = (model: string) =>
	new GatewayError('not_found', `thread: the message thread continued is kept by another channel of model "${model}": send the whole conversation without it`, {
		code: 'unsupported_for_model',
		retryable: true,
		param: 'thread',
		details: { error_code: 'thread_not_found' },
	})
