/** POST /v1/audio/transcriptions and /v1/audio/translations (multipart), /v1/audio/speech (streamed audio): OpenAI's audio API. */
import { Elysia, t } from 'elysia'
import { readPlainForm } from '../../http/form-view'
import { modelAuth } from '../../http/model-auth'
import { relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import type { Services } from '../../services'
import { SpeechRequest, Transcription, TranscriptionRequest, Translation, TranslationRequest } from './model'
import { speechOp } from './speech'
import { transcriptionOp, translationOp } from './transcriptions'

const errors = { ...openaiErrors, 413: OpenAIErrorBody }

export const audioModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		.use(modelAuth(svc))
		.post(
			'/v1/audio/transcriptions',
			async ({ body, token, requestId, startedAt, request }) =>
				relayPassthrough(await transcriptionOp({ svc, token, requestId, startedAt, signal: request.signal }, body, svc.env.maxUploadBytes)),
			{
				// Read as sent: Elysia's form parser would turn a prompt written as JSON into an object.
				parse: readPlainForm,
				body: TranscriptionRequest,
				response: { 200: Transcription, ...errors },
				detail: {
					summary: 'Transcribe audio',
					description:
						'Multipart upload (limit MAX_UPLOAD_BYTES, 25 MiB by default; 413 past it). `response_format` json, text, srt, vtt, verbose_json or diarized_json; `stream=true` relays the events of gpt-4o transcription models. Priced per minute of audio (`per_minute`/`per_second`) or per token.',
				},
			},
		)
		.post(
			'/v1/audio/translations',
			async ({ body, token, requestId, startedAt, request }) =>
				relayPassthrough(await translationOp({ svc, token, requestId, startedAt, signal: request.signal }, body, svc.env.maxUploadBytes)),
			{
				// Read as sent: Elysia's form parser would turn a prompt written as JSON into an object.
				parse: readPlainForm,
				body: TranslationRequest,
				response: { 200: Translation, ...errors },
				detail: {
					summary: 'Translate audio into English',
					description:
						'Multipart upload (limit MAX_UPLOAD_BYTES, 25 MiB by default; 413 past it). `response_format` json, text, srt, vtt or verbose_json. Priced like transcriptions: per minute of audio (`per_minute`/`per_second`) or per token.',
				},
			},
		)
		.post('/v1/audio/speech', ({ body, token, requestId, startedAt, request }) => relayPassthrough(speechOp({ svc, token, requestId, startedAt, signal: request.signal }, body)), {
			body: SpeechRequest,
			response: { 200: t.File({ description: 'Audio bytes (audio/mpeg, audio/wav …), streamed as the upstream produces them' }), ...errors },
			detail: {
				summary: 'Create speech',
				description:
					'Text to speech, streamed back as it is made, with the content type of its `response_format`. Priced per input character (`per_mchar` or `per_char`), else per token: the input and the audio tokens of the `speech.audio.done` usage (plain audio of such a model is asked upstream as events and decoded).',
			},
		})
