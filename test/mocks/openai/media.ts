/**
 * Images and audio: POST /v1/images/generations, /v1/audio/speech (binary, streamed) and
 * /v1/audio/transcriptions (multipart; json, text, srt, vtt, verbose_json), plus GET /v1/mock-files/* for image URLs.
 * @module
 */

import { asNum, asStr, type Obj } from '../shared/json'
import { frame, json, type Reply, sse } from '../shared/reply'
import { countWords, stableId, unixNow } from '../shared/text'
import { openaiError, requireObject } from './errors'
import { wavBytes } from '../../helpers/wav'

/** A valid 1×1 PNG, what every generated image is. */
export const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='

const missing = (name: string) => openaiError(400, `Missing required parameter: '${name}'.`, name, 'missing_required_parameter')

/** GET /v1/mock-files/<name>.png: the image behind every `url` the mock hands out. */
export const imageFile = (): Reply => ({ type: 'raw', status: 200, contentType: 'image/png', body: new Uint8Array(Buffer.from(PNG_1X1, 'base64')) })

/**
 * POST /v1/images/generations: dall-e models honour `response_format`; gpt-image models always return b64_json + usage.
 * With `stream: true` (gpt-image only, as OpenAI: dall-e answers 400) the answer is OpenAI's image streaming events:
 * per image, `partial_images` × `image_generation.partial_image`, then `image_generation.completed` with that image's
 * usage (the prompt's input tokens, 272 output tokens); the last completed event is the terminator a `cut` never sends.
 */
export function imageGenerations(body: unknown, jsonError: boolean, origin: string): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	const prompt = asStr(b.prompt)
	if (!prompt) return missing('prompt')
	const model = asStr(b.model) ?? 'dall-e-2'
	const gptImage = model.startsWith('gpt-image')
	const n = asNum(b.n) ?? 1
	const max = model === 'dall-e-3' ? 1 : 10
	if (n < 1 || n > max || !Number.isInteger(n)) {
		return openaiError(400, `Invalid 'n': expected an integer between 1 and ${max}, but got ${n} instead.`, 'n', 'invalid_value')
	}
	if (gptImage && b.response_format !== undefined) return openaiError(400, "Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter')
	const format = b.response_format ?? 'url'
	if (format !== 'url' && format !== 'b64_json') {
		return openaiError(400, `Invalid value: '${String(format)}'. Supported values are: 'url' and 'b64_json'.`, 'response_format', 'invalid_value')
	}
	if (b.stream === true) {
		if (!gptImage) return openaiError(400, `Streaming is not supported for model '${model}'.`, 'stream', 'unsupported_value')
		return imageStream(b, prompt, n)
	}
	const seed = stableId('img-', `${model}|${prompt}`, 16)
	const data = Array.from({ length: n }, (_, i) => {
		const item: Obj = gptImage || format === 'b64_json' ? { b64_json: PNG_1X1 } : { url: `${origin}/v1/mock-files/${seed}-${i}.png` }
		if (model === 'dall-e-3') item.revised_prompt = prompt
		return item
	})
	const out: Obj = { created: unixNow(), data }
	if (gptImage) {
		Object.assign(out, renderedSettings(b.size, b.quality, b.output_format))
		const text = countWords(prompt)
		out.usage = { input_tokens: text, input_tokens_details: { text_tokens: text, image_tokens: 0 }, output_tokens: 272 * n, total_tokens: text + 272 * n }
	}
	return json(out)
}

/**
 * What a GPT image model says it made (the answer's and each completed event's `size`, `quality`, `background`,
 * `output_format`: "the quality of the image generated. Either low, medium, or high"): the size and quality asked
 * for, and for `auto` (the default) the mock's own choice, 1024x1024 at medium.
 */
export function renderedSettings(size: unknown, quality: unknown, outputFormat: unknown) {
	const pick = (v: unknown, auto: string) => (typeof v === 'string' && v && v !== 'auto' ? v : auto)
	return { size: pick(size, '1024x1024'), quality: pick(quality, 'medium'), background: 'opaque', output_format: pick(outputFormat, 'png') }
}

function imageStream(b: Obj, prompt: string, n: number): Reply {
	const partials = Math.min(3, Math.max(0, asNum(b.partial_images) ?? 0))
	const settings = renderedSettings(b.size, b.quality, b.output_format)
	const text = countWords(prompt)
	const usage = { input_tokens: text, input_tokens_details: { text_tokens: text, image_tokens: 0 }, output_tokens: 272, total_tokens: text + 272 }
	const chunks: string[] = []
	for (let i = 0; i < n; i++) {
		for (let p = 0; p < partials; p++) {
			chunks.push(frame({ type: 'image_generation.partial_image', b64_json: PNG_1X1, created_at: unixNow(), partial_image_index: p, ...settings }, 'image_generation.partial_image'))
		}
		chunks.push(frame({ type: 'image_generation.completed', b64_json: PNG_1X1, created_at: unixNow(), ...settings, usage }, 'image_generation.completed'))
	}
	return sse(chunks, 1)
}

const AUDIO_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' }

/** 16-bit mono 24 kHz silence with a RIFF header (what `wav` returns); other formats get a fixed header + silence. */
function audioBytes(format: string, seconds: number): Uint8Array<ArrayBuffer> {
	const samples = Math.round(24000 * seconds)
	if (format === 'wav') return wavBytes(samples * 2, 24000)
	const out = new Uint8Array(format === 'pcm' ? samples * 2 : Math.max(64, Math.round(seconds * 8000)))
	if (format === 'mp3') out.set([0x49, 0x44, 0x33, 0x04])
	return out
}

/**
 * POST /v1/audio/speech: 0.25 s of silence per input word, streamed in 4 KiB chunks (or as SSE events with the usage).
 * `stream_format: "sse"` is refused for tts-1 and tts-1-hd, as OpenAI documents ("`sse` is not supported for `tts-1`
 * or `tts-1-hd`"). `streamFormat` plays an OpenAI-compatible vendor without it: `ignore` answers plain audio whatever
 * was asked, `reject` refuses the unknown parameter.
 */
export function speech(body: unknown, jsonError: boolean, streamFormat?: 'ignore' | 'reject'): Reply {
	const bad = requireObject(body, jsonError)
	if (bad) return bad
	const b = body as Obj
	if (!asStr(b.model)) return missing('model')
	const input = asStr(b.input)
	if (input === undefined) return missing('input')
	// A built-in voice's name, or a custom voice as `{id: 'voice_…'}` (OpenAI's custom voices).
	const voice = b.voice
	if (!asStr(voice) && !(voice && typeof voice === 'object' && asStr((voice as Obj).id))) return missing('voice')
	if (input.length > 4096) {
		return openaiError(
			400,
			`Invalid 'input': string too long. Expected a string with maximum length 4096, but got a string with length ${input.length} instead.`,
			'input',
			'string_above_max_length',
		)
	}
	if (b.stream_format !== undefined && streamFormat === 'reject') return openaiError(400, "Unknown parameter: 'stream_format'.", 'stream_format', 'unknown_parameter')
	if (b.stream_format !== undefined && b.stream_format !== 'sse' && b.stream_format !== 'audio') {
		return openaiError(400, `Invalid value: '${String(b.stream_format)}'. Supported values are: 'sse' and 'audio'.`, 'stream_format', 'invalid_value')
	}
	const sseAsked = b.stream_format === 'sse' && streamFormat !== 'ignore'
	if (sseAsked && typeof b.model === 'string' && /^tts-1(-hd)?(-\d+)?$/.test(b.model)) return openaiError(400, `stream_format 'sse' is not supported for model '${b.model}'.`, 'stream_format', 'unsupported_value')
	const format = asStr(b.response_format) ?? 'mp3'
	const type = AUDIO_TYPES[format]
	if (!type) return openaiError(400, `Invalid value: '${format}'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.`, 'response_format', 'invalid_value')
	const words = Math.max(1, countWords(input))
	const bytes = audioBytes(format, words * 0.25)
	const chunks: Uint8Array<ArrayBuffer>[] = []
	for (let i = 0; i < bytes.length; i += 4096) chunks.push(bytes.subarray(i, i + 4096))
	if (!sseAsked) return { type: 'stream', status: 200, contentType: type, chunks, tail: 0 }
	// `stream_format: "sse"`: the audio as base64 `speech.audio.delta` events, then `speech.audio.done` with the usage
	// (the input's tokens; 20 audio tokens a second of speech, 5 per word here).
	const frames = chunks.map((c) => frame({ type: 'speech.audio.delta', audio: Buffer.from(c).toString('base64') }))
	frames.push(frame({ type: 'speech.audio.done', usage: { input_tokens: countWords(input), output_tokens: words * 5, total_tokens: countWords(input) + words * 5 } }))
	return sse(frames, 1)
}

/** Duration of an uploaded file: from the RIFF header for WAV, else 16 000 bytes per second. */
export async function durationOf(file: File): Promise<number> {
	const head = new DataView(await file.slice(0, 44).arrayBuffer())
	const riff = head.byteLength >= 44 && head.getUint32(0, false) === 0x52494646
	const seconds = riff ? (file.size - 44) / (head.getUint32(28, true) || 1) : file.size / 16000
	return Math.round(seconds * 100) / 100
}

const clock = (s: number, sep: string): string => {
	const ms = Math.round(s * 1000)
	const p = (n: number, w = 2) => String(n).padStart(w, '0')
	return `${p(Math.floor(ms / 3600000))}:${p(Math.floor(ms / 60000) % 60)}:${p(Math.floor(ms / 1000) % 60)}${sep}${p(ms % 1000, 3)}`
}

/** A transcript as text, SRT or WebVTT (one cue over the whole audio); undefined for the JSON formats. */
export function plainTranscript(format: string, text: string, duration: number): Reply | undefined {
	const raw = (contentType: string, body: string): Reply => ({ type: 'raw', status: 200, contentType, body })
	if (format === 'text') return raw('text/plain; charset=utf-8', `${text}\n`)
	if (format === 'srt') return raw('text/plain; charset=utf-8', `1\n${clock(0, ',')} --> ${clock(duration, ',')}\n${text}\n\n`)
	if (format === 'vtt') return raw('text/vtt; charset=utf-8', `WEBVTT\n\n${clock(0, '.')} --> ${clock(duration, '.')}\n${text}\n\n`)
	return undefined
}

/**
 * POST /v1/audio/transcriptions: the transcript is `Transcript of <filename>.`; whisper-1 alone has srt/vtt/verbose_json,
 * gpt-4o-transcribe-diarize has diarized_json, and `whisper-large-v3*` answers as Groq does (no usage). The gpt-4o
 * models stream with `stream=true` (text deltas, then the done event with the usage).
 */
export async function transcriptions(form: FormData | undefined): Promise<Reply> {
	if (!form) return openaiError(400, "Invalid Content-Type header (expected multipart/form-data).", null)
	const file = form.get('file')
	if (!(file instanceof File)) return missing('file')
	const model = form.get('model')
	if (typeof model !== 'string' || !model) return missing('model')
	const format = String(form.get('response_format') ?? 'json')
	const whisper = model === 'whisper-1'
	// Groq's OpenAI-compatible API (console.groq.com/docs/speech-to-text): `json` is `{ text, x_groq }`, no usage.
	const groq = model.startsWith('whisper-large-v3')
	const diarize = model === 'gpt-4o-transcribe-diarize'
	const formats = whisper ? ['json', 'text', 'srt', 'vtt', 'verbose_json'] : groq ? ['json', 'text', 'verbose_json'] : diarize ? ['json', 'text', 'diarized_json'] : ['json', 'text']
	if (!formats.includes(format) && ['json', 'text', 'srt', 'vtt', 'verbose_json', 'diarized_json'].includes(format)) {
		return openaiError(400, `response_format '${format}' is not compatible with model '${model}'. Use ${formats.map((f) => `'${f}'`).join(' or ')}.`, 'response_format', 'unsupported_value')
	}
	const text = `Transcript of ${file.name || 'audio'}.`
	const duration = await durationOf(file)
	const words = countWords(text)
	if (diarize && duration > 30 && !form.get('chunking_strategy') && !form.get('chunking_strategy[type]')) {
		return openaiError(400, 'chunking_strategy is required for diarization models when the input audio is longer than 30 seconds.', 'chunking_strategy', 'missing_required_parameter')
	}
	if (groq) {
		const x_groq = { id: stableId('req_', `${model}|${file.name}|${file.size}`, 26) }
		if (format === 'text') return { type: 'raw', status: 200, contentType: 'text/plain; charset=utf-8', body: `${text}\n` }
		if (format === 'verbose_json') return json({ task: 'transcribe', language: 'English', duration, text, segments: [{ id: 0, start: 0, end: duration, text }], x_groq })
		return json({ text, x_groq })
	}
	const usage = whisper
		? { type: 'duration', seconds: Math.ceil(duration) }
		: { type: 'tokens', input_tokens: Math.ceil(duration * 10), input_token_details: { text_tokens: 0, audio_tokens: Math.ceil(duration * 10) }, output_tokens: words, total_tokens: Math.ceil(duration * 10) + words }
	// `stream=true` (platform.openai.com/docs/api-reference/audio/createTranscription#stream): server-sent events,
	// `transcript.text.delta` per piece then `transcript.text.done` with the text and usage; whisper-1 ignores it.
	if (!whisper && (format === 'json' || format === 'text') && String(form.get('stream') ?? 'false') === 'true') {
		const pieces = text.split(' ').map((w, i) => (i === 0 ? w : ` ${w}`))
		const deltas = pieces.map((delta) => frame({ type: 'transcript.text.delta', delta }))
		return sse([...deltas, frame({ type: 'transcript.text.done', text, usage })], 1)
	}
	const plain = plainTranscript(format, text, duration)
	if (plain) return plain
	switch (format) {
		case 'verbose_json': {
			const segment = { id: 0, seek: 0, start: 0, end: duration, text: ` ${text}`, tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0 }
			return json({ task: 'transcribe', language: 'english', duration, text, segments: [segment], usage })
		}
		case 'diarized_json': {
			// Speakers take the names of `known_speaker_names[]` when given, else A, B, … (two halves, two speakers).
			const names = form.getAll('known_speaker_names[]').map(String)
			const speaker = (i: number) => names[i] ?? String.fromCharCode(65 + i)
			const half = Math.round((duration / 2) * 100) / 100
			const segments = [
				{ type: 'transcript.text.segment', id: 'seg_0', start: 0, end: half, text, speaker: speaker(0) },
				{ type: 'transcript.text.segment', id: 'seg_1', start: half, end: duration, text, speaker: speaker(1) },
			]
			return json({ task: 'transcribe', duration, text, segments, usage })
		}
		case 'json':
			return json({ text, usage })
		default:
			return openaiError(400, `Invalid value: '${format}'. Supported values are: 'json', 'text', 'srt', 'verbose_json', 'vtt', and 'diarized_json'.`, 'response_format', 'invalid_value')
	}
}
