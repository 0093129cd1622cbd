/**
 * POST /v1/audio/transcriptions and /v1/audio/translations (speech to English text, whisper-1): the same multipart
 * form, forwarded field by field with the file's bytes and name unchanged, to the same path upstream. Priced by
 * duration (`per_minute`, `per_second`) or by tokens, as the model's price says. The duration comes from
 * `verbose_json.duration` or the upstream's `usage` ({type:'duration', seconds}); for srt/vtt from the last cue;
 * failing those from the file's header (duration.ts: WAV, MP3, M4A/MP4, FLAC, Ogg), else a size-based figure at
 * 128 kbit/s marked estimated; the hold alone uses the 16 kbit/s upper bound. `text` is asked upstream as `json`
 * (which carries usage) and rendered as text here, so the charge does not depend on a format that reports nothing;
 * other formats (`diarized_json` among them) are asked and relayed as the client sent them. `stream=true` answers
 * (server-sent events) are relayed as they come and billed on the usage of their closing event. A translation's json is
 * `{ text }` alone (platform.openai.com/docs/api-reference/audio/createTranslation), so outside verbose_json and
 * srt/vtt its duration is the file's.
 * @module
 */
import { type Price, tokenCost } from '../../billing/pricing'
import { GatewayError } from '../../core/errors'
import { emptyUsage } from '../../core/ir'
import { durationCost, pricedByDuration, requestFee } from '../../passthrough/pricing'
import { type Answer, type CallContext, type PassOp, readJson } from '../../passthrough/relay'
import { OPENAI_TYPES, authHeaders, openaiUrl } from '../../passthrough/upstream'
import { countText } from '../../relay/estimate'
import type { Channel, ModelInfo } from '../../routing/catalog'
import { cueEnd, estimateSeconds } from './duration'
import { withFirstBytes } from './speech'
import { doneEventScanner } from './speech-usage'
import type { TranscriptFormat, TranscriptionRequest, TranslationRequest } from './model'

/** Audio tokens per second a gpt-4o transcription model may bill, generously (for the hold only). */
export const AUDIO_TOKENS_PER_SECOND = 25

type TranscriptJson = {
	text?: unknown
	duration?: unknown
	usage?: { type?: unknown; seconds?: unknown; input_tokens?: unknown; input_token_details?: { audio_tokens?: unknown }; output_tokens?: unknown }
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)

/**
 * Token part of a transcription's price, without the per-request fee: the audio share of the input at
 * `audio_input_per_mtok` when the model lists it (gpt-4o-transcribe: $6 audio against $2.50 text input; the usage's
 * `input_token_details.audio_tokens` says which are audio), the rest at the text prices.
 * @example audioTokensCost(p, 300, 300, 3) // 300 audio input tokens, 3 output tokens
 */
export function audioTokensCost(p: Price, input: number, audio: number, output: number): number {
	if (input <= 0 && output <= 0) return 0
	return tokenCost({ ...emptyUsage(), input, output, audioInput: Math.min(audio, input) }, { ...p, perRequest: 0 })
}

/** The most `seconds` of audio may cost to transcribe (a hold): by duration, else as generous audio tokens and half as many output tokens. */
export function transcriptionBound(price: Price, seconds: number): number {
	if (pricedByDuration(price)) return requestFee(price) + durationCost(price, seconds)
	const tokens = Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)
	return requestFee(price) + audioTokensCost(price, tokens, tokens, Math.ceil(tokens / 2))
}

/** The two speech-to-text endpoints, named as the gateway and the upstream (`{base_url}` + the part after /v1) serve them. */
export type SpeechToTextEndpoint = '/v1/audio/transcriptions' | '/v1/audio/translations'

/** The upstream form: every field as sent, `model` renamed, `text` asked as `json`. */
export function upstreamForm(body: TranscriptionRequest | TranslationRequest, upstreamModel: string, format: TranscriptFormat): FormData {
	const fd = new FormData()
	for (const [k, v] of Object.entries(body)) {
		if (k === 'model' || k === 'response_format' || v === undefined) continue
		for (const item of Array.isArray(v) ? v : [v]) {
			if (item instanceof File) fd.append(k, item, item.name)
			else fd.append(k, typeof item === 'string' ? item : String(item))
		}
	}
	fd.set('model', upstreamModel)
	fd.set('response_format', format === 'text' ? 'json' : format)
	return fd
}

/** The pass operation of one transcription call. */
export const transcriptionOp = (ctx: CallContext, body: TranscriptionRequest, maxBytes: number): Promise<PassOp> => speechToTextOp(ctx, body, maxBytes, '/v1/audio/transcriptions')

/** The pass operation of one translation call. */
export const translationOp = (ctx: CallContext, body: TranslationRequest, maxBytes: number): Promise<PassOp> => speechToTextOp(ctx, body, maxBytes, '/v1/audio/translations')

async function speechToTextOp(ctx: CallContext, body: TranscriptionRequest | TranslationRequest, maxBytes: number, endpoint: SpeechToTextEndpoint): Promise<PassOp> {
	const file = body.file
	if (file.size > maxBytes) throw new GatewayError('payload_too_large', `The file is ${file.size} bytes; the limit is ${maxBytes}`, { code: 'request_too_large', param: 'file' })
	if (file.size === 0) throw new GatewayError('invalid_request', 'The file is empty', { code: 'invalid_request_error', param: 'file' })
	const streamed = 'stream' in body && body.stream === 'true'
	const format: TranscriptFormat = body.response_format ?? 'json'
	const guess = await estimateSeconds(file)
	const headers = { 'x-request-id': ctx.requestId }

	function cost(price: ModelInfo, seconds: number, input: number | undefined, audio: number | undefined, output: number | undefined, text: string) {
		const byDuration = pricedByDuration(price)
		let c = requestFee(price) + (byDuration ? durationCost(price, seconds) : 0)
		// Input without a breakdown is the audio file's: a transcription's prompt is text only when the client sent one.
		if (input !== undefined || output !== undefined) c += audioTokensCost(price, input ?? 0, audio ?? input ?? 0, output ?? 0)
		else if (!byDuration) {
			const tokens = Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)
			c += audioTokensCost(price, tokens, tokens, countText(text))
		}
		return c
	}

	return {
		...ctx,
		endpoint,
		model: body.model,
		stream: streamed,
		types: OPENAI_TYPES,
		hold(price) {
			const fee = requestFee(price)
			if (pricedByDuration(price)) return { want: transcriptionBound(price, guess.upper), min: fee + durationCost(price, Math.min(guess.upper, 60)) }
			return { want: transcriptionBound(price, guess.upper), min: fee + audioTokensCost(price, 1, 1, 1) }
		},
		request: (ch: Channel, upstreamModel: string) => ({ url: openaiUrl(ch, upstreamModel, endpoint.slice('/v1'.length)), headers: authHeaders(ch), body: upstreamForm(body, upstreamModel, format) }),
		async respond(res, _ch, _m, price) {
			if (streamed && (res.headers.get('content-type') ?? '').includes('text/event-stream')) return streamedAnswer(res, price)
			if (format === 'srt' || format === 'vtt') {
				const text = await res.text()
				const end = cueEnd(text)
				const seconds = end ?? guess.seconds
				const response = new Response(text, { status: 200, headers: { 'content-type': res.headers.get('content-type') ?? 'text/plain; charset=utf-8', ...headers } })
				return { response, cost: cost(price, seconds, undefined, undefined, undefined, text), output: countText(text), estimated: true }
			}
			const json = await readJson<TranscriptJson>(res)
			const text = typeof json.text === 'string' ? json.text : ''
			const response =
				format === 'text'
					? new Response(`${text}\n`, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } })
					: new Response(JSON.stringify(json), { status: 200, headers: { 'content-type': 'application/json', ...headers } })
			return { response, ...charge(price, text, json.usage, num(json.duration)) }
		},
	}

	/** The charge of a transcript by the usage it came with (`duration` is verbose_json's, preferred when present). */
	function charge(price: ModelInfo, text: string, u: TranscriptJson['usage'], duration: number | undefined) {
		const reportedSeconds = duration ?? (u?.type === 'duration' ? num(u.seconds) : undefined)
		const input = u?.type === 'tokens' ? num(u.input_tokens) : undefined
		const audio = u?.type === 'tokens' ? num(u.input_token_details?.audio_tokens) : undefined
		const output = u?.type === 'tokens' ? num(u.output_tokens) : undefined
		const seconds = reportedSeconds ?? guess.seconds
		const estimated = (pricedByDuration(price) && reportedSeconds === undefined && !guess.exact) || (!pricedByDuration(price) && input === undefined)
		return { cost: cost(price, seconds, input, audio, output, text), input: input ?? 0, output: output ?? countText(text), estimated }
	}

	/**
	 * A transcript streamed as events (`stream=true`, the gpt-4o models; whisper-1 ignores it and answers JSON, read
	 * above): relayed as it comes, and settled once it ends on the usage of its `transcript.text.done` event. Without
	 * that event the client left first (charged the file's estimate) or the upstream cut it short (charged nothing).
	 */
	async function streamedAnswer(res: Response, price: ModelInfo): Promise<Answer> {
		const scanner = doneEventScanner('transcript.text.done')
		const { audio, ended } = await withFirstBytes(res, ctx.signal, scanner.feed, { came: () => scanner.event() !== undefined, missing: 'the upstream stream ended before the transcript was completed' })
		const response = new Response(audio, { status: 200, headers: { 'content-type': res.headers.get('content-type') ?? 'text/event-stream', ...headers } })
		const fallback = { cost: cost(price, guess.seconds, undefined, undefined, undefined, ''), estimated: true }
		return {
			response,
			...fallback,
			ended,
			final() {
				const done = scanner.event()
				if (!done) return fallback
				return charge(price, typeof done.text === 'string' ? done.text : '', done.usage as TranscriptJson['usage'], undefined)
			},
		}
	}
}
