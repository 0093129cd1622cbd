/**
 * Gemini media parts of user turns ⇄ canonical image, file and audio parts
 * (https://ai.google.dev/gemini-api/docs/file-input-methods, /document-processing, /audio).
 *
 * `inlineData{mimeType, data}` is an image (image/*), audio (audio/*), or any other file (application/pdf, text/plain…).
 * `fileData{fileUri, mimeType}` is a file Gemini fetches itself: a Files API URI or `gs://` (readable by Gemini only, so
 * refused for other vendors), or a web URL (an image URL stays an image; a document, audio or video URL, YouTube's
 * included, is a `url` source, which vendors without such input refuse by name).
 * @module
 */
import { badRequest } from '../../core/errors'
import type { AudioPart, FilePart, ImagePart } from '../../core/ir'
import { asPlainParts, cannotSend, guessMediaType, isBase64 } from '../files'
import type { GeminiPart } from './model'
import { encodeImage } from './parts'
import { get, isObj, type Obj, standardBase64, str } from './read'

/** A Files API URI (`https://generativelanguage.googleapis.com/v1beta/files/…`) is a Gemini reference, not a web URL. */
const isWebUrl = (uri: string): boolean => /^https?:\/\//i.test(uri) && !/^https?:\/\/generativelanguage\.googleapis\.com\//i.test(uri)

/**
 * A YouTube video's page, which Gemini reads as a video when given as `fileData.fileUri` with no mimeType
 * (https://ai.google.dev/gemini-api/docs/video-understanding#youtube).
 */
const isYouTube = (uri: string): boolean => /^https?:\/\/(?:(?:www\.|m\.)?youtube\.com\/(?:watch|shorts\/|live\/|embed\/)|youtu\.be\/)/i.test(uri)

/** The media type of a YouTube video, whose container is not known from its URL. */
const YOUTUBE_VIDEO = 'video/*'

/**
 * A user part's media → a canonical part, or undefined when the part holds no media.
 * @param at where the part is (`contents[0].parts[1]`), recorded for a refusal by another vendor's encoder
 * @example decodeUserMedia({ fileData: { fileUri: 'gs://b/x.pdf', mimeType: 'application/pdf' } }, 'contents[0].parts[0]')
 * // { type: 'file', source: { kind: 'uri', uri: 'gs://b/x.pdf', mediaType: 'application/pdf' }, path: 'contents[0].parts[0]' }
 */
export function decodeUserMedia(part: Obj, at: string): ImagePart | FilePart | AudioPart | undefined {
	const inline = get(part, 'inlineData')
	if (isObj(inline)) {
		// Either spelling of each key, mixed too (`inlineData: {data, mime_type}` from google-genai for Python): the request
		// schema sees only the lowerCamel ones, so a missing one is refused here.
		const mediaType = str(get(inline, 'mimeType'))
		const raw = str(inline.data)
		if (!mediaType) throw badRequest(`${at}.inlineData.mimeType is required`, `${at}.inlineData.mimeType`)
		if (raw === undefined) throw badRequest(`${at}.inlineData.data is required`, `${at}.inlineData.data`)
		const data = standardBase64(raw)
		// Google's 400 for bytes that are not base64; another vendor would refuse them in its own words, or take garbage.
		if (!isBase64(data)) throw badRequest(`Invalid value at '${at}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`, `${at}.inlineData.data`)
		const type = mediaType.toLowerCase()
		if (type.startsWith('image/')) return { type: 'image', source: { kind: 'base64', mediaType, data } }
		if (type.startsWith('audio/')) return { type: 'audio', mediaType, data, path: at }
		return { type: 'file', source: { kind: 'base64', mediaType, data }, path: at }
	}
	const file = get(part, 'fileData')
	if (isObj(file)) {
		const uri = str(get(file, 'fileUri'))
		if (!uri) throw badRequest(`${at}.fileData.fileUri is required`, `${at}.fileData.fileUri`)
		const given = str(get(file, 'mimeType'))
		if (!isWebUrl(uri)) return { type: 'file', source: given ? { kind: 'uri', uri, mediaType: given } : { kind: 'uri', uri }, path: at }
		const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(uri)?.[1]
		const guessed = ext ? guessMediaType('', `x.${ext}`) : undefined
		const mediaType = given ?? (isYouTube(uri) ? YOUTUBE_VIDEO : guessed === 'application/octet-stream' ? undefined : guessed)
		// A web URL of unknown type stays an image URL, as Gemini clients have long used fileData for them.
		if (!mediaType || mediaType.startsWith('image/')) return { type: 'image', source: { kind: 'url', url: uri } }
		return { type: 'file', source: { kind: 'url', url: uri, mediaType }, path: at }
	}
	return undefined
}

/**
 * A file part → Gemini parts: inline data as `inlineData`, a web or Gemini URI as `fileData` (the relay fetches web
 * document URLs first and inlines them, as it does images: src/relay/images.ts), a plain-text or custom-content document
 * as text (its title leading) and images. A file id of another vendor's store is refused with a 400 naming the part.
 * @param where the part's position, for a refusal when its decoder recorded none
 */
export function encodeFile(p: FilePart, where: string): GeminiPart[] {
	const plain = asPlainParts(p)
	if (plain) return plain.map((c) => (c.type === 'text' ? { text: c.text } : encodeImage(c.source)))
	const s = p.source
	switch (s.kind) {
		case 'base64':
			return [{ inlineData: { mimeType: s.mediaType, data: s.data } }]
		case 'url':
			return [{ fileData: { fileUri: s.url, mimeType: s.mediaType ?? 'application/pdf' } }]
		case 'uri':
			return [{ fileData: s.mediaType ? { fileUri: s.uri, mimeType: s.mediaType } : { fileUri: s.uri } }]
		case 'file_id':
			throw cannotSend(p, 'Gemini', `a file id of ${s.store === 'openai' ? "OpenAI's" : "Anthropic's"} file store is readable only by that vendor; send the file's data instead`, where)
		default:
			throw cannotSend(p, 'Gemini', 'this document source has no Gemini form', where)
	}
}

/** Audio → `inlineData` (Gemini takes audio/wav, audio/mp3, audio/aiff, audio/aac, audio/ogg, audio/flac). */
export const encodeAudio = (p: AudioPart): GeminiPart => ({ inlineData: { mimeType: p.mediaType, data: p.data } })

/**
 * Whether the model takes media inside `functionResponse.parts` (a multimodal function response, documented for the
 * Gemini 3 series: https://ai.google.dev/gemini-api/docs/gemini-3, "Multimodal function responses";
 * `FunctionResponse.parts` in https://ai.google.dev/api/caching#FunctionResponse). Earlier models get the media as
 * parts after the functionResponse, which every model accepts.
 * @example multimodalResults('gemini-3-pro-preview') === true
 */
export function multimodalResults(model: string): boolean {
	const m = /(?:^|\/)gemini-(\d+)/.exec(model)
	return !!m && Number(m[1]) >= 3
}
