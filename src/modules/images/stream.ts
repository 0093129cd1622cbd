/**
 * POST /v1/images/generations and /v1/images/edits with `"stream": true` (OpenAI's image streaming events,
 * https://platform.openai.com/docs/api-reference/images-streaming): the upstream's server-sent events,
 * `image_generation.partial_image` previews and one `image_generation.completed` per image (for edits
 * `image_edit.partial_image` and `image_edit.completed`; the completed event carries the
 * image's `usage` on GPT image models), are relayed to the client as they come, and the charge is settled when the
 * stream ends, from the completed events (pricing.ts `imageCost`), within what was reserved up front as for a JSON
 * answer. Another channel is tried only before the client has seen anything: the first events are awaited within
 * the prefetch window, as for chat (relay/prefetch.ts); once bytes went out the stream stays on its channel.
 *
 * A stream that ends before its images completed (the upstream cut it or sent an error event, or the client left) is
 * charged by the module's rules for what was delivered: completed images at their unit price; on token pricing, the
 * completed images' tokens plus the prompt (README, Billing: a cut answer costs "the input plus the output produced
 * so far"; a partial preview reports no tokens, so it adds none); nothing at all when not one event was produced.
 * @module
 */
import { failedRow, usageRecord } from '../../billing/usage-record'
import { badRequest, GatewayError } from '../../core/errors'
import { formatSse, parseSse, type SseBatchReader, type SseFrame, SSE_HEADERS } from '../../core/sse'
import { observeUsage } from '../../metrics/observe-usage'
import type { CallContext } from '../../passthrough/relay'
import { OPENAI_TYPES, credentialHooks } from '../../passthrough/upstream'
import { upstreamError } from '../../providers/upstream-error'
import { resolveModel } from '../../relay/budget'
import { type FramesPrefetched, prefetchFrames } from '../../relay/prefetch'
import { sseResponse } from '../../relay/sse-response'
import { SHUTTING_DOWN } from '../../relay/stream-relay'
import { errorBody } from '../../protocols/openai-chat/error'
import { channelTimeouts, fetchUpstream, type UpstreamCall, upstreamTimeout } from '../../relay/upstream-fetch'
import { type AttemptResult, tryChannels } from '../../routing/attempts'
import type { Channel } from '../../routing/catalog'
import { errorResponse } from '../../http/error-shapes'
import { type ImageJob, type ImageTally, imageCost, imageHold } from './pricing'

export const IMAGES_ENDPOINT = '/v1/images/generations'

/** The event names' prefix: `image_generation.*` for generations, `image_edit.*` for edits. */
export type ImageEventFamily = 'image_generation' | 'image_edit'

/** One streamed image call as the relay sees it: where it is recorded, its model, and the upstream call per channel. */
export type ImageStreamOp = {
	endpoint: string
	model: string
	family: ImageEventFamily
	/** The upstream call for one channel (a fresh body per attempt: a form's files are read again on failover). */
	request(ch: Channel, upstreamModel: string): { url: string; headers: Record<string, string>; body: BodyInit }
}

/** The JSON answer of the images API (the non-streamed one). */
export type ImagesAnswer = { created?: unknown; data?: unknown; usage?: ImagesUsage; [k: string]: unknown }

/** The `usage` of a GPT image answer or completed event; `input_tokens_details` splits the input into text and image tokens. */
type ImagesUsage = { input_tokens?: unknown; output_tokens?: unknown; input_tokens_details?: { image_tokens?: unknown } }

/**
 * Whether OpenAI streams images for this (upstream) model: `stream` "is only supported for the GPT image models"
 * (images API reference); dall-e-2 and dall-e-3 refuse it.
 * @example canStream('gpt-image-1') === true; canStream('dall-e-3') === false
 */
export const canStream = (upstreamModel: string): boolean => !/^dall-e-/.test(upstreamModel)

/** The upstream answered with server-sent events. */
export const isEventStream = (res: Response): boolean => (res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream')

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)

/** Images and reported tokens of a JSON answer. */
export function tallyOf(json: ImagesAnswer): ImageTally {
	const u = json.usage
	return { images: Array.isArray(json.data) ? json.data.length : 0, input: num(u?.input_tokens), imageInput: num(u?.input_tokens_details?.image_tokens), output: num(u?.output_tokens), made: madeOf(json) }
}

/** The `size` and `quality` an answer or a completed event says the image was made at (GPT image models), if any. */
function madeOf(o: { [k: string]: unknown }): ImageTally['made'] {
	const size = typeof o.size === 'string' && o.size ? o.size : undefined
	const quality = typeof o.quality === 'string' && o.quality ? o.quality : undefined
	return size || quality ? { size, quality } : undefined
}

type Opened = { upstreamModel: string } & ({ sse: { up: UpstreamCall; it: SseBatchReader; window: FramesPrefetched } } | { json: ImagesAnswer })

/** Relays one streamed image call; always answers (errors in OpenAI's shape). */
export async function relayImageStream(ctx: CallContext, op: ImageStreamOp, job: ImageJob): Promise<Response> {
	const { svc, token, requestId } = ctx
	const route = resolveModel(svc, token, op.model)
	const served = route.channels.filter((c) => OPENAI_TYPES.includes(c.type))
	if (!served.length) throw new GatewayError('not_found', `The model "${op.model}" is not served for ${op.endpoint}`, { code: 'model_not_found', param: 'model' })
	// Refused here, before anything is reserved or sent, rather than by each vendor in turn.
	const channels = served.filter((c) => canStream(c.modelMap[op.model] ?? op.model))
	if (!channels.length) throw badRequest(`The model "${op.model}" cannot stream images: "stream" is for the GPT image models; leave it out`, 'stream')
	const { want, min } = imageHold(route.price, job)
	const hold = await svc.ledger.reserve({ accountId: token.accountId, tokenId: token.id }, requestId, want, Math.min(min, want))
	const base = { requestId, token, model: op.model, endpoint: op.endpoint, stream: true, startedAt: ctx.startedAt }
	let lastErr: GatewayError
	let lastChannel: Channel | undefined
	try {
		const r = await tryChannels(svc, channels, ctx.signal, (ch) => open(ctx, op, ch), op.model)
		if ('ok' in r) {
			const { ok, channel } = r
			if ('json' in ok) {
				// A vendor that does not stream images answered JSON: billed as such, sent as the events it stands for.
				const c = imageCost(route.price, job, tallyOf(ok.json))
				const record = usageRecord(base, { channel, upstreamModel: ok.upstreamModel, status: 200, endReason: 'ok', usage: { input: c.input, output: c.output }, estimated: c.estimated })
				observeUsage(svc, token, record, await hold.settle(c.cost, record))
				return new Response(completedEvents(ok.json, op.family), { status: 200, headers: { ...SSE_HEADERS, 'x-request-id': requestId } })
			}
			const relay = new ImageStream(ctx, ok.sse, job, async (end, t) => {
				const c = t.images > 0 || t.partials > 0 ? imageCost(route.price, job, t) : { cost: 0, input: 0, output: 0, estimated: false }
				const record = usageRecord(base, { channel, upstreamModel: ok.upstreamModel, status: 200, endReason: end, usage: { input: c.input, output: c.output }, estimated: c.estimated })
				observeUsage(svc, token, record, await hold.settle(c.cost, record))
			})
			return relay.respond()
		}
		lastErr = r.error
		lastChannel = r.channel
	} catch (e) {
		if (hold.done) throw e
		lastErr = e instanceof GatewayError ? e : new GatewayError('api_error', 'Internal error')
		if (!(e instanceof GatewayError)) svc.log.error('image stream failed', { request_id: requestId, error: String(e), stack: (e as Error).stack })
	}
	const record = usageRecord(base, { channel: lastChannel, ...failedRow(lastErr.status, ctx.signal.aborted) })
	await hold.release(record)
	observeUsage(svc, token, record, 0)
	return errorResponse(lastErr, 'openai', requestId)
}

/** One channel's attempt: its answer, up to the first events of a stream (nothing has gone to the client yet). */
async function open(ctx: CallContext, op: ImageStreamOp, ch: Channel): Promise<AttemptResult<Opened>> {
	const upstreamModel = ch.modelMap[op.model] ?? op.model
	let up: UpstreamCall
	try {
		const { url, ...init } = op.request(ch, upstreamModel)
		up = await fetchUpstream(url, { ...init, ...credentialHooks(ch) }, channelTimeouts(ch.settings), ctx.signal)
	} catch (e) {
		if (e instanceof GatewayError) return { error: e }
		throw e
	}
	const res = up.res
	if (!res.ok || !isEventStream(res)) {
		const text = await res.text().catch(() => undefined)
		up.release()
		if (text === undefined) return failedEarly(up)
		if (!res.ok) return { error: upstreamError(res.status, text, res.headers) }
		try {
			return { ok: { upstreamModel, json: JSON.parse(text) as ImagesAnswer } }
		} catch {
			return { error: new GatewayError('upstream', 'upstream sent a malformed response', { retryable: true, code: 'upstream_malformed' }) }
		}
	}
	const it = up.sse()
	const window = await prefetchFrames(it, notPreamble)
	if (!window) return failedEarly(up)
	const failure = window.pre.done && window.frames.length === 0 ? new GatewayError('upstream', 'upstream sent an empty stream', { retryable: true, code: 'upstream_empty' }) : firstError(window.head)
	if (failure) {
		up.abort()
		return { error: failure }
	}
	return { ok: { upstreamModel, sse: { up, it, window } } }
}

/** The upstream's body failed before any event: the client left, or the channel cut it (another may serve it). */
function failedEarly(up: UpstreamCall): { error: GatewayError } {
	up.abort()
	if (up.clientGone) return { error: new GatewayError('api_error', 'client closed the request', { code: 'client_closed' }) }
	if (up.timedOut) return { error: upstreamTimeout('upstream sent no event within its idle timeout') }
	return { error: new GatewayError('upstream', 'the upstream stream failed before its first event', { retryable: true, code: 'upstream_cut' }) }
}

/** Every image event is content: the first one commits the stream to its channel. */
const notPreamble = () => false

/**
 * An error event as the stream's first (nothing sent yet, nothing made: a later one follows images the vendor made,
 * and is relayed) → the error it stands for: a refusal of the request
 * (OpenAI's `invalid_request_error`, a moderation block) is the caller's, answered 400 with no failover and nothing
 * held against the channel; anything else may succeed on another channel.
 */
function firstError(frames: SseFrame[]): GatewayError | undefined {
	const f = frames.find((x) => kindOf(x) === 'error')
	if (!f) return undefined
	let said: { message?: unknown; type?: unknown; code?: unknown } = {}
	try {
		const d = JSON.parse(f.data) as { error?: typeof said } & typeof said
		said = d.error ?? d
	} catch {
		// no detail
	}
	const message = typeof said.message === 'string' && said.message ? said.message : 'upstream stream error'
	const kind = `${typeof said.type === 'string' ? said.type : ''} ${typeof said.code === 'string' ? said.code : ''}`
	if (/invalid_request|user_error|moderation|content_policy/.test(kind)) return upstreamError(400, JSON.stringify({ error: said }), null)
	return new GatewayError('upstream', message, { retryable: true, code: 'upstream_error' })
}

type Kind = 'completed' | 'partial_image' | 'error' | 'other'

const EVENT_KINDS = new Map<string, Kind>([
	['image_generation.completed', 'completed'],
	['image_edit.completed', 'completed'],
	['image_generation.partial_image', 'partial_image'],
	['image_edit.partial_image', 'partial_image'],
	['error', 'error'],
])

/**
 * What a frame is (of either family), by its `event:` name, else by its JSON's `type` (or an `error` member), found
 * without parsing the frame: a partial image is megabytes of base64, and base64 never holds a quote.
 */
function kindOf(f: SseFrame): Kind {
	const named = f.event === undefined ? undefined : EVENT_KINDS.get(f.event)
	if (named) return named
	const d = f.data
	if (d.includes('"image_generation.completed"') || d.includes('"image_edit.completed"')) return 'completed'
	if (d.includes('"image_generation.partial_image"') || d.includes('"image_edit.partial_image"')) return 'partial_image'
	if (d.includes('"error"')) return 'error'
	return 'other'
}

/** What the stream delivered so far. */
export type StreamTally = ImageTally & { partials: number }

type StreamEnd = 'ok' | 'upstream_cut' | 'error' | 'upstream_malformed' | 'client_abort'

/**
 * Reads the events that pass: completed images and their usage (the prompt's tokens, "in the input prompt", are the
 * same on every image of one request, so the largest is kept; each image's output tokens, "in the output image", add
 * up), partial previews, error events and unreadable completed events.
 */
export class ImageMeter {
	readonly tally: StreamTally = { images: 0, partials: 0 }
	errored = false
	malformed = false

	see(f: SseFrame) {
		const k = kindOf(f)
		if (k === 'partial_image') this.tally.partials++
		else if (k === 'error') this.errored = true
		else if (k === 'completed') {
			let u: ImagesUsage | undefined
			let made: ImageTally['made']
			try {
				const e = JSON.parse(f.data) as { usage?: ImagesUsage; size?: unknown; quality?: unknown }
				u = e.usage
				made = madeOf(e)
			} catch {
				this.malformed = true
				return
			}
			const t = this.tally
			t.images++
			// One request's images share their settings; the dearer of two differing ones would be a guess, so the last is kept.
			if (made) t.made = made
			const input = num(u?.input_tokens)
			const output = num(u?.output_tokens)
			const imageInput = num(u?.input_tokens_details?.image_tokens)
			if (input !== undefined && input >= (t.input ?? 0)) {
				t.input = input
				t.imageInput = imageInput
			}
			if (output !== undefined) t.output = (t.output ?? 0) + output
		}
	}

	/** How a stream that ended (its body read to the end) ended, for `n` images asked for. */
	end(n: number): StreamEnd {
		if (this.errored) return 'error'
		if (this.malformed) return 'upstream_malformed'
		return this.tally.images >= n ? 'ok' : 'upstream_cut'
	}
}

/** The error event the gateway adds when the upstream's stream ends short (the SDKs raise an `error` event). */
const cutEvent = (end: StreamEnd) =>
	formatSse({
		event: 'error',
		data: JSON.stringify({
			type: 'error',
			error: end === 'upstream_malformed'
				? { type: 'api_error', code: 'upstream_malformed', message: 'the upstream sent an image event that could not be read', param: null }
				: { type: 'api_error', code: 'upstream_cut', message: 'the upstream stream ended before the images were completed', param: null },
		}),
	})

/** What a stream still running when the shutdown's grace period ends closes with: the images API's `error` event. */
const SHUTDOWN_EVENT = formatSse({ event: 'error', data: JSON.stringify({ type: 'error', error: errorBody(SHUTTING_DOWN).error }) })

/** A JSON answer as the streamed events it stands for: one `<family>.completed` per image, `usage` on the last. */
export function completedEvents(json: ImagesAnswer, family: ImageEventFamily = 'image_generation'): string {
	const data = Array.isArray(json.data) ? (json.data as Record<string, unknown>[]) : []
	const created = num(json.created) ?? Math.floor(Date.now() / 1000)
	const { data: _, created: __, usage, ...rest } = json
	return data
		.map((img, i) => {
			const ev: Record<string, unknown> = { type: `${family}.completed`, ...rest, ...img, created_at: created }
			if (i === data.length - 1 && usage !== undefined) ev.usage = usage
			return formatSse({ event: `${family}.completed`, data: JSON.stringify(ev) })
		})
		.join('')
}

/**
 * Streamed events as the JSON answer they stand for (the inverse of `completedEvents`), for a request that did not ask
 * for a stream but got one (a field the gateway does not model made the vendor stream): the images were made and
 * are paid for upstream, so the caller gets them, billed as a JSON answer would be. Partial previews are dropped; an
 * error event before any image completed is the answer's error; images completed before one are kept.
 */
export async function answerOfEvents(body: ReadableStream<Uint8Array>): Promise<ImagesAnswer> {
	const meter = new ImageMeter()
	const data: Record<string, unknown>[] = []
	let answer: ImagesAnswer = {}
	let failure: GatewayError | undefined
	try {
		for await (const f of parseSse(body)) {
			meter.see(f)
			const k = kindOf(f)
			if (k === 'error') failure ??= firstError([f])
			if (k !== 'completed' || meter.malformed) continue
			const { type: _, created_at, usage: __, b64_json, revised_prompt, url, ...rest } = JSON.parse(f.data) as Record<string, unknown>
			answer = { ...answer, ...rest, created: num(created_at) ?? answer.created }
			data.push(Object.fromEntries(Object.entries({ b64_json, revised_prompt, url }).filter(([, v]) => v !== undefined)))
		}
	} catch {
		throw new GatewayError('upstream', 'the upstream stream failed before the images were completed', { retryable: true, code: 'upstream_cut' })
	}
	if (meter.malformed) throw new GatewayError('upstream', 'the upstream sent an image event that could not be read', { retryable: true, code: 'upstream_malformed' })
	if (!data.length) throw failure ?? new GatewayError('upstream', 'the upstream stream ended before any image was completed', { retryable: true, code: 'upstream_cut' })
	const t = meter.tally
	const details = t.input !== undefined && t.imageInput !== undefined ? { input_tokens_details: { text_tokens: Math.max(0, t.input - t.imageInput), image_tokens: t.imageInput } } : {}
	const usage = t.input === undefined && t.output === undefined ? undefined : { input_tokens: t.input ?? 0, ...details, output_tokens: t.output ?? 0, total_tokens: (t.input ?? 0) + (t.output ?? 0) }
	return { created: answer.created ?? Math.floor(Date.now() / 1000), ...answer, data, ...(usage ? { usage } : {}) }
}

/**
 * One relayed stream: its frames as the upstream sent them, the bill settled once when it ends (however it ends), the
 * upstream call let go then (read to its end, or aborted), and at once when the client leaves.
 */
class ImageStream {
	private cancelled = false
	private settled: Promise<void> | undefined

	constructor(
		private readonly ctx: CallContext,
		private readonly s: { up: UpstreamCall; it: SseBatchReader; window: FramesPrefetched },
		private readonly job: ImageJob,
		private readonly bill: (end: StreamEnd, t: StreamTally) => Promise<void>,
	) {}

	private readonly meter = new ImageMeter()

	private readonly cancel = () => {
		this.cancelled = true
		this.s.up.abort()
	}

	respond(): Promise<Response> {
		this.ctx.svc.metrics.openStreams.inc()
		this.s.up.onClientGone(this.cancel)
		return sseResponse(this.frames(), this.cancel, { 'x-request-id': this.ctx.requestId }, this.ctx.svc.env.keepaliveMs, SHUTDOWN_EVENT)
	}

	/** Batches as they came (each frame's own text), then, when the stream ended short, the gateway's error event. */
	private async *frames(): AsyncGenerator<string> {
		let end: StreamEnd = 'client_abort'
		let clean = false
		try {
			const w = this.s.window
			let batch = w.frames
			let pending = w.pre.pending
			let done = w.pre.done
			try {
				for (;;) {
					if (batch.length) yield this.pass(batch)
					if (done) break
					const r = await (pending ?? this.s.it.next())
					pending = undefined
					if (r.done) {
						done = true
						batch = []
					} else batch = r.value
				}
				clean = true
				end = this.meter.end(this.job.n)
			} catch {
				// The body failed: cut, silent past idle_ms (the call was aborted), or the client left.
				end = this.cancelled ? 'client_abort' : 'upstream_cut'
			}
			if (!this.cancelled && (end === 'upstream_cut' || end === 'upstream_malformed')) yield cutEvent(end)
		} finally {
			if (clean) this.s.up.release()
			else this.s.up.abort()
			await this.settle(this.cancelled && end !== 'ok' ? 'client_abort' : end)
		}
	}

	private pass(batch: SseFrame[]): string {
		let out = ''
		for (const f of batch) {
			this.meter.see(f)
			out += f.raw ?? formatSse(f)
		}
		return out
	}

	private settle(end: StreamEnd): Promise<void> {
		return (this.settled ??= this.bill(end, this.meter.tally)
			.catch((e) => this.ctx.svc.log.error('settle failed', { request_id: this.ctx.requestId, error: String(e) }))
			.finally(() => this.ctx.svc.metrics.openStreams.dec()))
	}
}
