/**
 * POST /v1/audio/translations (multipart), as OpenAI documents createTranslation: whisper-1 only, `response_format`
 * json (`{ text }`), text, srt, vtt or verbose_json (`{ task: 'translate', language: 'english', duration, text,
 * segments }`); no `usage` in any of them (openai-node `Translation`, `TranslationVerbose`). The translation is
 * `Translation of <filename>.`; the duration comes from the file as for transcriptions.
 * @module
 */

import { json, type Reply } from '../shared/reply'
import { openaiError } from './errors'
import { durationOf, plainTranscript } from './media'

const FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json']

export async function translations(form: FormData | undefined): Promise<Reply> {
	if (!form) return openaiError(400, 'Invalid Content-Type header (expected multipart/form-data).', null)
	const file = form.get('file')
	if (!(file instanceof File)) return openaiError(400, "Missing required parameter: 'file'.", 'file', 'missing_required_parameter')
	const model = form.get('model')
	if (typeof model !== 'string' || !model) return openaiError(400, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter')
	if (model !== 'whisper-1') return openaiError(400, `Invalid model ${model}. The model argument should be left blank or set to whisper-1.`, 'model', 'invalid_value')
	const format = String(form.get('response_format') ?? 'json')
	if (!FORMATS.includes(format)) return openaiError(400, `Invalid value: '${format}'. Supported values are: 'json', 'text', 'srt', 'verbose_json', and 'vtt'.`, 'response_format', 'invalid_value')
	const text = `Translation of ${file.name || 'audio'}.`
	const duration = await durationOf(file)
	const plain = plainTranscript(format, text, duration)
	if (plain) return plain
	switch (format) {
		case 'verbose_json': {
			const segment = { id: 0, seek: 0, start: 0, end: duration, text: ` ${text}`, tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0 }
			return json({ task: 'translate', language: 'english', duration, text, segments: [segment] })
		}
		default:
			return json({ text })
	}
}
