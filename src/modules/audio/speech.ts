/**
 * POST /v1/audio/speech: the upstream's audio is streamed back as it arrives, with its content type. The price is
 * known before the call (per input character: `per_mchar` or `per_char`; else the input's tokens, and for audio
 * streamed as events the usage of its `speech.audio.done`, read as it passes: speech-usage.ts). Plain audio of a
 * model priced by tokens is asked upstream as events too and decoded back for the client (speech-events.ts), so that
 * it is charged its audio tokens as well. The charge is settled when the audio has been relayed: in full when it all
 * came through, and when the client left early (the upstream made it; for usage the done event would have told, the
 * input with the audio such an input usually makes, estimated); nothing when the upstream cut it, since the caller's
 * audio is broken.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { tokenCost } from '../../billing/pricing'
import { emptyUsage } from '../../core/ir'
import { charCost, requestFee, tokensCost } from '../../passthrough/pricing'
import type { CallContext, PassOp } from '../../passthrough/relay'
import { OPENAI_TYPES, jsonHeaders, openaiUrl, withModel } from '../../passthrough/upstream'
import { countText } from '../../relay/estimate'
import type { Channel, ModelInfo } from '../../routing/catalog'
import type { SpeechRequest } from './model'
import { SPEECH_CONTENT_TYPES, speechAudio } from './speech-events'
import { cutEvent, speechUsageScanner } from './speech-usage'

/** Characters as people count them (code points, so an emoji is one). */
export const charCount = (s: string): number => {
	let n = 0
	for (const _ of s) n++
	return n
}

const noAudio = () => new GatewayError('upstream', 'upstream sent no audio', { retryable: true, code: 'upstream_malformed' })

type BodyEnd = 'ok' | 'upstream_cut' | 'client_abort'

/**
 * The answer's audio, once its first bytes arrived: a 200 with an empty body (which Bun gives a body object, not
 * null) is no audio, so it fails (retryable, never charged) instead of being charged in full (QA non-chat item 7).
 * The rest still streams through as it arrives, and `ended` says how it ended: read to the end, cut by the upstream
 * (the client's body fails too, so it knows its audio is broken), or left by the client.
 */
export async function withFirstBytes(
	res: Response,
	signal?: AbortSignal,
	onChunk?: (chunk: Uint8Array) => void,
	doneEvent?: DoneEvent,
): Promise<{ audio: ReadableStream<Uint8Array>; ended: Promise<BodyEnd> }> {
	if (!res.body || res.headers.get('content-length') === '0') {
		void res.body?.cancel().catch(() => {})
		throw noAudio()
	}
	return firstBytesOf(res.body, signal, onChunk, doneEvent)
}

/**
 * The event an event stream relayed to the client ends with when whole (`speech.audio.done`, `transcript.text.done`):
 * `came` says whether it passed, `missing` what the client is told when the body ended without it.
 */
export type DoneEvent = { came(): boolean; missing: string }

/**
 * `withFirstBytes` of a body stream (a relayed answer's, or the audio decoded from its events). An event stream whose
 * `doneEvent` never came was cut short, even when the connection closed cleanly: it ends `upstream_cut`, with the error
 * event that tells the client (speech-usage.ts `cutEvent`), which would otherwise keep a partial answer as the whole.
 */
export async function firstBytesOf(
	body: ReadableStream<Uint8Array>,
	signal?: AbortSignal,
	onChunk?: (chunk: Uint8Array) => void,
	doneEvent?: DoneEvent,
): Promise<{ audio: ReadableStream<Uint8Array>; ended: Promise<BodyEnd> }> {
	const reader = body.getReader()
	let first = await reader.read()
	while (!first.done && first.value.byteLength === 0) first = await reader.read()
	if (first.done) throw noAudio()
	const head = first.value
	onChunk?.(head)
	const { promise: ended, resolve: end } = Promise.withResolvers<BodyEnd>()
	// A client gone before its body was read to the end (its stream may never be pulled or cancelled): the charge
	// must not wait for a read that never comes. Later calls of `end` change nothing.
	signal?.addEventListener('abort', () => end('client_abort'), { once: true })
	const audio = new ReadableStream<Uint8Array>({
		start(c) {
			c.enqueue(head)
		},
		async pull(c) {
			let r: Awaited<ReturnType<typeof reader.read>>
			try {
				r = await reader.read()
			} catch (e) {
				end('upstream_cut')
				c.error(e)
				return
			}
			if (r.done) {
				if (doneEvent && !doneEvent.came()) {
					c.enqueue(cutEvent(doneEvent.missing))
					end('upstream_cut')
				} else end('ok')
				c.close()
			} else {
				onChunk?.(r.value)
				c.enqueue(r.value)
			}
		},
		cancel(reason) {
			end('client_abort')
			return reader.cancel(reason)
		},
	})
	return { audio, ended }
}

/**
 * Audio tokens held per input character for speech billed by its usage: OpenAI estimates gpt-4o-mini-tts at $0.015 a
 * minute against $12 per million audio tokens (1,250 tokens a minute), and speech runs at about 15 characters a
 * second (~1.4 tokens a character). The hold covers the usual answer, so the charge is made as the audio ends rather
 * than after a wait for more of the lease, and a tight key limit is checked before the call; a longer answer is still
 * charged in full as far as the limit allows.
 */
const AUDIO_TOKENS_PER_CHAR = 2

/** The audio tokens a speech of `chars` characters usually makes (1,250 a minute at ~900 characters a minute, as above). */
const typicalAudioTokens = (chars: number): number => Math.ceil((chars * 25) / 18)

/** Whether audio tokens cost anything at this model's prices (a model priced per request alone, or served unpriced, is not). */
const audioTokensPriced = (p: ModelInfo): boolean => tokenCost({ ...emptyUsage(), output: 1_000_000, audioOutput: 1_000_000 }, { ...p, perRequest: 0 }) > 0

/**
 * Whether a call for plain audio goes upstream as events (`stream_format: "sse"`, decoded back to the audio's bytes
 * for the client): only their done event tells the audio tokens a model priced by tokens is charged, where raw audio
 * reports no usage and would be charged its input alone (~1/20 of gpt-4o-mini-tts's price). Not for models priced per
 * character (tts-1, tts-1-hd: OpenAI refuses `sse` for them), nor for one whose audio tokens cost nothing (priced per
 * request alone, or served unpriced under ALLOW_UNPRICED_MODELS: there is nothing to read, and tts-1 would be
 * refused), nor on a channel with `settings.speech_sse: false` (an OpenAI-compatible vendor that refuses `stream_format`),
 * nor for tts-1 and tts-1-hd themselves priced by tokens, by the name the vendor is sent (`upstreamModel`) or the one
 * asked for (an Azure deployment may be named anything): a plain call must not turn into OpenAI's 400 for a price
 * list that left out their price per character.
 */
const asksEvents = (body: SpeechRequest, chars: number, ch: Channel, p: ModelInfo, upstreamModel: string): boolean =>
	body.stream_format !== 'sse' &&
	charCost(p, chars) === undefined &&
	ch.settings.speech_sse !== false &&
	!NO_EVENTS_MODEL.test(upstreamModel) &&
	!NO_EVENTS_MODEL.test(body.model) &&
	audioTokensPriced(p)

/** OpenAI's speech models that refuse `stream_format: "sse"` (400 unsupported_value), dated or not (tts-1-hd-1106). */
const NO_EVENTS_MODEL = /^tts-1(?:-hd)?(?:-\d|$)/

/** The pass operation of one speech call. */
export function speechOp(ctx: CallContext, body: SpeechRequest): PassOp {
	const chars = charCount(body.input)
	const tokens = countText(body.input)
	const price = (p: ModelInfo) => requestFee(p) + (charCost(p, chars) ?? tokensCost(p, tokens))
	// Only event streams tell the audio's tokens (and are charged them): the client's own, or those asked for it.
	const audioHold = (p: ModelInfo, channels: readonly Channel[]) =>
		charCost(p, chars) === undefined && (body.stream_format === 'sse' || channels.some((ch) => asksEvents(body, chars, ch, p, ch.modelMap[body.model] ?? body.model)))
			? tokenCost({ ...emptyUsage(), output: chars * AUDIO_TOKENS_PER_CHAR, audioOutput: chars * AUDIO_TOKENS_PER_CHAR }, { ...p, perRequest: 0 })
			: 0
	return {
		...ctx,
		endpoint: '/v1/audio/speech',
		model: body.model,
		stream: body.stream_format === 'sse',
		types: OPENAI_TYPES,
		hold: (p, channels) => ({ want: price(p) + audioHold(p, channels), min: price(p) }),
		request(ch, upstreamModel, p) {
			const sent = asksEvents(body, chars, ch, p, upstreamModel) ? { ...withModel(body, upstreamModel), stream_format: 'sse' } : withModel(body, upstreamModel)
			return { url: openaiUrl(ch, upstreamModel, '/audio/speech'), headers: jsonHeaders(ch), body: JSON.stringify(sent) }
		},
		async respond(res, ch, upstreamModel, p) {
			const events = charCost(p, chars) === undefined && (res.headers.get('content-type') ?? '').includes('text/event-stream')
			// Events the gateway asked for are decoded to the audio the client asked for; a vendor that ignored
			// `stream_format` answered audio, relayed (and charged) as before.
			const decoded = events && asksEvents(body, chars, ch, p, upstreamModel) && res.body ? speechAudio(res.body) : undefined
			// A model priced by tokens streamed as events to the client is charged the usage of its done event, read as it passes.
			const scanner = events && !decoded ? speechUsageScanner() : undefined
			// Events relayed to the client that end without their done event were cut short: charged nothing, as audio cut short.
			const done = scanner && { came: scanner.done, missing: 'the upstream stream ended before the speech was completed' }
			const { audio, ended } = decoded ? await firstBytesOf(decoded.audio, ctx.signal) : await withFirstBytes(res, ctx.signal, scanner?.feed, done)
			const type = decoded ? SPEECH_CONTENT_TYPES[body.response_format ?? 'mp3'] : res.headers.get('content-type')
			const headers: Record<string, string> = { 'content-type': type ?? 'application/octet-stream', 'x-request-id': ctx.requestId }
			const len = res.headers.get('content-length')
			if (len && !decoded) headers['content-length'] = len
			const answer = { response: new Response(audio, { status: 200, headers }), cost: price(p), input: tokens, estimated: true, ended }
			const usage = decoded?.usage ?? scanner?.usage
			if (!usage) return answer
			return {
				...answer,
				// The audio it made at the output prices, which the input alone leaves out. A client that left before the
				// done event pays the audio a speech of its input usually makes, estimated: the upstream had begun it, and
				// the input alone would let a client that stops reading just before the end have its audio at ~1/20 of the price.
				final(end) {
					const u = usage() ?? (end === 'client_abort' ? { input: tokens, output: typicalAudioTokens(chars) } : undefined)
					if (!u) return { cost: answer.cost, input: tokens, estimated: true }
					// TTS output is audio: `audio_output_per_mtok` when the model lists it, else the output price.
					const cost = requestFee(p) + tokenCost({ ...emptyUsage(), input: u.input, output: u.output, audioOutput: u.output }, { ...p, perRequest: 0 })
					return { cost, input: u.input, output: u.output, estimated: usage() === undefined }
				},
			}
		},
	}
}
