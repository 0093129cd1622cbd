/** Schemas of POST /v1/audio/transcriptions, /v1/audio/translations and /v1/audio/speech (platform.openai.com/docs/api-reference/audio). */
import { t } from 'elysia'

/**
 * `diarized_json` (gpt-4o-transcribe-diarize) answers `{ task, duration, text, segments: [{ type:
 * 'transcript.text.segment', id, start, end, text, speaker }], usage }`; its extra fields (`chunking_strategy`, required
 * past 30 s, `known_speaker_names[]`, `known_speaker_references[]`) are forwarded like every other field
 * (platform.openai.com/docs/api-reference/audio/createTranscription).
 */
export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json', 'diarized_json'] as const
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number]

export const TranscriptionRequest = t.Object(
	{
		file: t.File({ description: 'The audio file (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm); forwarded unchanged' }),
		model: t.String({ minLength: 1 }),
		language: t.Optional(t.String({ description: 'ISO-639-1 code of the input language' })),
		prompt: t.Optional(t.String()),
		response_format: t.Optional(t.Union(TRANSCRIPT_FORMATS.map((f) => t.Literal(f)))),
		temperature: t.Optional(t.Numeric({ minimum: 0, maximum: 1 })),
		stream: t.Optional(t.Union([t.Literal('true'), t.Literal('false')], { description: 'true: server-sent transcript.text.delta events, then transcript.text.done with the usage (gpt-4o models; whisper-1 ignores it)' })),
	},
	{ additionalProperties: true },
)
export type TranscriptionRequest = typeof TranscriptionRequest.static

/** createTranslation: the transcription form without `language` (the output is always English) or diarization. */
export const TRANSLATION_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const

export const TranslationRequest = t.Object(
	{
		file: t.File({ description: 'The audio file (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm); forwarded unchanged' }),
		model: t.String({ minLength: 1, description: 'OpenAI serves only whisper-1' }),
		prompt: t.Optional(t.String({ description: 'In English' })),
		response_format: t.Optional(t.Union(TRANSLATION_FORMATS.map((f) => t.Literal(f)))),
		temperature: t.Optional(t.Numeric({ minimum: 0, maximum: 1 })),
	},
	{ additionalProperties: true },
)
export type TranslationRequest = typeof TranslationRequest.static

export const Transcription = t.Object(
	{
		text: t.String(),
		duration: t.Optional(t.Number({ description: 'verbose_json, diarized_json: seconds of audio' })),
		usage: t.Optional(t.Object({ type: t.String() }, { additionalProperties: true })),
	},
	{ additionalProperties: true, description: 'json / verbose_json / diarized_json; text, srt and vtt come as text/plain or text/vtt' },
)

export const Translation = t.Object(
	{ text: t.String(), duration: t.Optional(t.Number({ description: 'verbose_json: seconds of audio' })), language: t.Optional(t.String({ description: "verbose_json: always 'english'" })) },
	{ additionalProperties: true, description: 'json / verbose_json; text, srt and vtt come as text/plain or text/vtt' },
)

export const SpeechRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		input: t.String({ minLength: 1, maxLength: 4096 }),
		voice: t.Union([t.String({ minLength: 1 }), t.Object({ id: t.String({ minLength: 1, description: "a custom voice's id, `voice_…`" }) }, { additionalProperties: true })], {
			description: 'a built-in voice by name, or a custom voice by its id',
		}),
		response_format: t.Optional(t.Union(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'].map((f) => t.Literal(f)))),
		speed: t.Optional(t.Number({ minimum: 0.25, maximum: 4 })),
		instructions: t.Optional(t.String()),
		stream_format: t.Optional(t.Union([t.Literal('sse'), t.Literal('audio')], { description: 'sse: the audio as speech.audio.delta events, ending with speech.audio.done and its usage' })),
	},
	{ additionalProperties: true },
)
export type SpeechRequest = typeof SpeechRequest.static
