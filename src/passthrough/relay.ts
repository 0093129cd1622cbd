/**
 * The relay behind every non-chat endpoint (embeddings, images, audio, rerank, moderations, video, Midjourney, Suno):
 * resolve the model, hold its worst-case price, try the channels that can serve the operation in routing order
 * (failing over only on retryable errors, before anything reached the client), then let the operation read the
 * answer and say what it cost. That cost is settled; when nothing succeeded the hold is released. A failed call is
 * never charged (WIRE-NOTES #15, #20), but for the work an operation made of several upstream calls had done before
 * it failed (`spent`: the embedding batches answered), which the upstream bills all the same.
 * @module
 */
import type { AuthToken } from '../auth/api-key'
import type { Hold } from '../billing/ledger'
import { failedRow } from '../billing/usage-record'
import { GatewayError } from '../core/errors'
import { type ErrorShape, errorResponse } from '../http/error-shapes'
import type { CallVia } from '../providers/adapter'
import type { ChannelType } from '../providers/channel-types'
import { errorOnlyAnswer, upstreamError } from '../providers/upstream-error'
import { type Route, resolveModel } from '../relay/budget'
import { answerText, channelTimeouts, fetchUpstream } from '../relay/upstream-fetch'
import type { Channel, ModelInfo } from '../routing/catalog'
import { tryChannels } from '../routing/attempts'
import type { Services } from '../services'
import { observeUsage } from '../metrics/observe-usage'
import { credentialHooks } from './upstream'
import { passUsage } from './usage'

/** What a handler knows about the call it relays. */
export type CallContext = { svc: Services; token: AuthToken; requestId: string; startedAt: number; signal: AbortSignal }

export type UpstreamRequest = {
	url: string
	method?: string
	headers: Record<string, string>
	body?: BodyInit
	/** The adapter whose hooks authorize the call (Vertex's OAuth token, renewed once after a 401); a text body then. */
	via?: CallVia
}

/** The operation's reading of a 2xx upstream answer. */
export type Answer = {
	response: Response
	/** micro-USD to charge; 0 when the upstream refused the job (then `endReason` says so). */
	cost: number
	input?: number
	output?: number
	/** Token counts were estimated locally. */
	estimated?: boolean
	/** Defaults to 'ok'. */
	endReason?: string
	/** Runs after the charge is settled (task ops record their task here) and may replace the response. */
	commit?: (charged: number, ch: Channel) => Promise<Response | undefined>
	/**
	 * How the response's body ended, for a body relayed as it arrives (audio): the charge is then settled once it has,
	 * and nothing is charged when the upstream cut it ('upstream_cut'); a client that left ('client_abort') still pays
	 * for what the upstream made.
	 */
	ended?: Promise<'ok' | 'upstream_cut' | 'client_abort'>
	/** With `ended`: the charge and counts as the relayed body told them (usage at its end), replacing the ones above. */
	final?: (end: 'ok' | 'upstream_cut' | 'client_abort') => { cost: number; input?: number; output?: number; estimated?: boolean }
}

export type PassOp = CallContext & {
	endpoint: string
	model: string
	/** The answer is streamed as events (recorded on the usage row); relayed bodies of audio are not. */
	stream?: boolean
	/** Channel types that can serve this operation. */
	types: readonly ChannelType[]
	/** Only these channels (a follow-up on a task must go where the task lives). */
	pin?: (ch: Channel) => boolean
	/** Set false when a timed-out call may still have done its work upstream (task submits): no failover then. */
	failoverOnTimeout?: boolean
	/** Resolved route to use instead of `resolveModel` (e.g. a free route for an unpriced moderation model). */
	route?: Route
	/** The shape of the gateway's errors (default OpenAI's; the task services' clients read their own). */
	shape?: ErrorShape
	/** micro-USD to hold before the call: `want` when the headroom allows it, at least `min` (else 402); `channels` may serve it. */
	hold(price: ModelInfo, channels: readonly Channel[]): { want: number; min: number }
	/**
	 * What the upstream calls answered before the request failed cost (an operation made of several calls, whose later
	 * one failed or whose client left): charged when no channel succeeded; nothing (or cost 0) for a request that did nothing.
	 */
	spent?(price: ModelInfo): { cost: number; input: number; estimated: boolean }
	/** The upstream call for one channel; may throw a GatewayError when this channel cannot take the input. */
	request(ch: Channel, upstreamModel: string, price: ModelInfo): UpstreamRequest | Promise<UpstreamRequest>
	/** Reads a 2xx answer; throw a GatewayError for an unreadable one (retryable ones fail over). */
	respond(res: Response, ch: Channel, upstreamModel: string, price: ModelInfo): Promise<Answer>
}

type Attempt = { answer: Answer } | { error: GatewayError }

/** Route for a model, or a free route when it has channels but no price and `free` is set (moderations). */
export function routeFor(svc: Services, token: AuthToken, model: string, free = false): Route {
	try {
		return resolveModel(svc, token, model)
	} catch (e) {
		if (!free || !(e instanceof GatewayError) || e.code !== 'model_not_priced') throw e
		return { channels: svc.catalog.channelsFor(model), price: { name: model, inputPerMtok: 0, outputPerMtok: 0 } }
	}
}

/** Runs one passthrough operation end to end; always answers (errors in `op.shape`, OpenAI's by default). */
export async function relayPassthrough(op: PassOp): Promise<Response> {
	const { svc } = op
	const route = op.route ?? resolveModel(svc, op.token, op.model)
	const channels = route.channels.filter((c) => op.types.includes(c.type) && (!op.pin || op.pin(c)))
	if (!channels.length)
		throw new GatewayError('not_found', `The model "${op.model}" is not served for ${op.endpoint}`, { code: 'model_not_found', param: 'model' })
	const { want, min } = op.hold(route.price, channels)
	const hold = await svc.ledger.reserve({ accountId: op.token.accountId, tokenId: op.token.id }, op.requestId, want, Math.min(min, want))
	let lastErr: GatewayError
	let lastChannel: Channel | undefined
	try {
		const r = await tryChannels(svc, channels, op.signal, async (ch) => {
			const upstreamModel = ch.modelMap[op.model] ?? op.model
			const a = await attempt(op, ch, upstreamModel, route.price)
			if ('answer' in a) return { ok: { answer: a.answer, upstreamModel } }
			// A job the upstream may have taken before timing out must not be submitted twice (tasks).
			if (a.error.kind === 'timeout' && op.failoverOnTimeout === false)
				return { error: new GatewayError(a.error.kind, a.error.message, { code: a.error.code, status: a.error.status }) }
			return a
		}, op.model)
		if ('ok' in r) {
			const { answer: a, upstreamModel } = r.ok
			const ch = r.channel
			if (a.ended) {
				settleWhenEnded(op, hold, a, a.ended, ch, upstreamModel)
				return a.response
			}
			const record = passUsage(op, { ch, upstreamModel, status: a.response.status, input: a.input, output: a.output, estimated: a.estimated, endReason: a.endReason ?? 'ok' })
			const charged = await hold.settle(a.cost, record)
			observeUsage(svc, op.token, record, charged)
			if (!a.commit) return a.response
			return (await a.commit(charged, ch)) ?? a.response
		}
		lastErr = r.error
		lastChannel = r.channel
	} catch (e) {
		if (hold.done) throw e
		lastErr = e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')
		if (!(e instanceof GatewayError)) svc.log.error('passthrough failed', { request_id: op.requestId, error: String(e), stack: (e as Error).stack })
	}
	const failed = failedRow(lastErr.status, op.signal.aborted)
	const spent = op.spent?.(route.price)
	if (spent && spent.cost > 0) {
		const upstreamModel = lastChannel && (lastChannel.modelMap[op.model] ?? op.model)
		const record = passUsage(op, { ch: lastChannel, upstreamModel, ...failed, input: spent.input, estimated: spent.estimated })
		observeUsage(svc, op.token, record, await hold.settle(spent.cost, record))
	} else {
		const record = passUsage(op, { ch: lastChannel, ...failed })
		await hold.release(record)
		observeUsage(svc, op.token, record, 0)
	}
	return errorResponse(lastErr, op.shape ?? 'openai', op.requestId)
}

/** Settles a relayed body's charge once it ended (Answer.ended); never rejects (a failure is logged). */
function settleWhenEnded(op: PassOp, hold: Hold, a: Answer, ended: NonNullable<Answer['ended']>, ch: Channel, upstreamModel: string) {
	void ended
		.then(async (end) => {
			const f = a.final?.(end) ?? a
			const record = passUsage(op, { ch, upstreamModel, status: a.response.status, input: f.input, output: f.output, estimated: f.estimated, endReason: end })
			observeUsage(op.svc, op.token, record, await hold.settle(end === 'upstream_cut' ? 0 : f.cost, record))
		})
		.catch((e) => op.svc.log.error('settle failed', { request_id: op.requestId, error: String(e) }))
}

async function attempt(op: PassOp, ch: Channel, upstreamModel: string, price: ModelInfo): Promise<Attempt> {
	try {
		const req = await op.request(ch, upstreamModel, price)
		const up = await fetchUpstream(req.url, { method: req.method, headers: req.headers, body: req.body, ...(req.via ?? credentialHooks(ch)) }, channelTimeouts(ch.settings, 'answer'), op.signal)
		const { res } = up
		if (!res.ok) return { error: upstreamError(res.status, await res.text().catch(() => ''), res.headers) }
		// Read or piped by the route, the body is watched for silence (idle_ms) as a relayed stream is.
		return { answer: await op.respond(up.watched(), ch, upstreamModel, price) }
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
}

/**
 * Reads a JSON answer; an unreadable one, or one that is only an error, is the upstream's failure (retryable).
 * @example const body = await readJson<{ data: unknown[] }>(res)
 */
export async function readJson<T = Record<string, unknown>>(res: Response): Promise<T> {
	const text = await answerText(res)
	let json: unknown
	try {
		json = JSON.parse(text)
	} catch {
		throw new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed' })
	}
	// A 2xx answer that is only an error (some OpenAI-compatible vendors and proxies) is that failure, not an answer.
	const failed = errorOnlyAnswer(json, res.headers)
	if (failed) throw failed
	return json as T
}

/** A JSON Response with the request id. */
export const jsonResponse = (body: unknown, requestId: string, status = 200): Response =>
	new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'x-request-id': requestId } })
