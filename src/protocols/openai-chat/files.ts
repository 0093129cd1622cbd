/**
 * OpenAI chat `file` and `input_audio` content parts ⇄ canonical file and audio parts
 * (https://platform.openai.com/docs/api-reference/chat/create, user message content parts; guides/pdf-files, audio).
 * A `file` part carries `file_data` (a base64 data URL, with `filename`) or `file_id` (OpenAI's file store); an
 * `input_audio` part carries base64 `data` and a `format`, `wav` or `mp3`. What OpenAI chat cannot take (a document URL,
 * another vendor's file reference, audio in other formats, video) is refused with a 400 naming the part (WIRE-NOTES #8).
 * @module
 */
import { badRequest } from '../../core/errors'
import type { AudioPart, FilePart, FileSource } from '../../core/ir'
import { asPlainParts, audioFormat, audioMediaType, base64Text, cannotSend, documentText, filenameFor, guessMediaType, isTextType, parseDataUrl } from '../files'
import { imageUrlOf } from './content'
import { type Json, optString, reqObject, reqString } from './guards'

const VENDOR = 'OpenAI chat'

/** A content part as encodeRequest writes it for files: a file, or what a document becomes (text, an image). */
export type WireFilePart =
	| { type: 'file'; file: { filename?: string; file_data?: string; file_id?: string } }
	| { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' } }
	| { type: 'text'; text: string }
	| { type: 'image_url'; image_url: { url: string } }

/**
 * `{type:"file", file:{file_data | file_id, filename?}}` → a file part. `file_data` is a base64 data URL (the documented
 * form) or bare base64, whose media type is then told by its bytes or the file name.
 * @example decodeFilePart({ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } }, 'messages[0].content[1]')
 * // { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, filename: 'a.pdf', path: 'messages[0].content[1]' }
 */
export function decodeFilePart(part: Json, at: string): FilePart {
	const file = reqObject(part.file, `${at}.file`)
	const filename = optString(file.filename, `${at}.file.filename`)
	const data = optString(file.file_data, `${at}.file.file_data`)
	const id = optString(file.file_id, `${at}.file.file_id`)
	let source: FileSource
	if (data) {
		const parsed = parseDataUrl(data)
		if (!parsed && data.startsWith('data:'))
			throw badRequest(`${at}.file.file_data must be a base64 data URL (data:<media-type>;base64,<data>) or base64 data`, `${at}.file.file_data`)
		source = parsed ? { kind: 'base64', ...parsed } : { kind: 'base64', mediaType: guessMediaType(data, filename), data }
	} else if (id) source = { kind: 'file_id', id, store: 'openai' }
	else throw badRequest(`${at}.file must have file_data or file_id`, `${at}.file`)
	const out: FilePart = { type: 'file', source, path: at }
	if (filename !== undefined) out.filename = filename
	return out
}

/** `{type:"input_audio", input_audio:{data, format}}` → an audio part (format wav → audio/wav, mp3 → audio/mp3). */
export function decodeAudioPart(part: Json, at: string): AudioPart {
	const audio = reqObject(part.input_audio, `${at}.input_audio`)
	const data = reqString(audio.data, `${at}.input_audio.data`)
	const format = reqString(audio.format, `${at}.input_audio.format`)
	if (!format) throw badRequest(`${at}.input_audio.format must be 'wav' or 'mp3'`, `${at}.input_audio.format`)
	return { type: 'audio', mediaType: audioMediaType(format), data, path: at }
}

/**
 * A file part → the content parts OpenAI chat takes for it: a PDF or other document as `file` with a data URL and a
 * file name, a text file or plain-text document as text (its title leading), an image file as `image_url`, a file of
 * OpenAI's store by `file_id`. Throws the refusal of anything else.
 * @param where the part's position, for a refusal when its decoder recorded none
 */
export function encodeFilePart(p: FilePart, where: string): WireFilePart[] {
	const plain = asPlainParts(p)
	if (plain) return plain.map((c) => (c.type === 'text' ? { type: 'text', text: c.text } : { type: 'image_url', image_url: { url: imageUrlOf(c.source) } }))
	const s = p.source
	switch (s.kind) {
		case 'base64': {
			const type = s.mediaType.toLowerCase()
			if (type.startsWith('image/')) return [{ type: 'image_url', image_url: { url: `data:${type};base64,${s.data}` } }]
			if (isTextType(type)) return [{ type: 'text', text: documentText(p, base64Text(s.data)) }]
			if (type.startsWith('audio/') || type.startsWith('video/'))
				throw cannotSend(p, VENDOR, 'it takes files as documents (such as PDF), audio as input_audio (wav, mp3), and no video', where)
			return [{ type: 'file', file: { filename: filenameFor(p, type), file_data: `data:${type};base64,${s.data}` } }]
		}
		case 'file_id':
			if (s.store === 'openai') return [{ type: 'file', file: p.filename ? { file_id: s.id, filename: p.filename } : { file_id: s.id } }]
			throw cannotSend(p, VENDOR, "a file id of Anthropic's file store is readable only by Anthropic; send the file's data instead", where)
		case 'url':
			if (s.mediaType?.toLowerCase().startsWith('video/')) throw cannotSend(p, VENDOR, 'it takes no video', where)
			throw cannotSend(p, VENDOR, "it takes a file as file_data or file_id, not by URL; send the file's data instead", where)
		case 'uri':
			throw cannotSend(p, VENDOR, "a Gemini file URI is readable only by Gemini; send the file's data instead", where)
		default:
			throw cannotSend(p, VENDOR, 'this document source has no OpenAI form', where)
	}
}

/** An audio part → `input_audio`, which takes wav and mp3 only. */
export function encodeAudioPart(p: AudioPart, where: string): WireFilePart {
	const format = audioFormat(p.mediaType)
	if (!format) throw cannotSend(p, VENDOR, 'input_audio takes wav or mp3 only', where)
	return { type: 'input_audio', input_audio: { data: p.data, format } }
}
