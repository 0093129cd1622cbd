/**
 * What the codecs share about canonical file and audio parts (core/ir.ts `FilePart`, `AudioPart`): describing and
 * refusing a part a vendor cannot take (a 400 naming it: refusing beats dropping it silently, WIRE-NOTES #8), turning a
 * plain-text or custom-content document into text for vendors without text documents, and media-type helpers.
 * @module
 */
import { type GatewayError, unsupportedForModel } from '../core/errors'
import type { AudioPart, FilePart, ImagePart, TextPart } from '../core/ir'

const BLANK = /^\s*$/

/** Base64 data with no bytes in it (empty, or whitespace only): a test that stops at a large image's first character. */
export const isBlankData = (data: string): boolean => BLANK.test(data)

/** A character outside the base64 alphabet (`=` only as the end's padding, checked apart). */
const NOT_BASE64 = /[^A-Za-z0-9+/]/

/**
 * Whether `data` may be base64 a vendor decodes: the standard alphabet, at most two `=` at the end, and a length that
 * holds whole bytes (unpadded data, which decoders take, included). One scan for a foreign character, without decoding:
 * the vendors refuse anything else in their own words (Anthropic's `…image.source.base64: invalid base64 data`).
 * Base64 wrapped in lines (MIME's 76 characters) is judged without its white space, and let through: some decoders
 * take it (`not base64!` is no base64 for its space).
 * @example isBase64('iVBORw0K') === true; isBase64('!!!!') === false; isBase64('iVBO\nRw0K') === true
 */
export function isBase64(data: string): boolean {
	const end = data.endsWith('==') ? data.length - 2 : data.endsWith('=') ? data.length - 1 : data.length
	const foreign = NOT_BASE64.exec(end === data.length ? data : data.slice(0, end))
	if (foreign) return WHITESPACE.test(foreign[0]) && isBase64(data.replace(/\s+/g, ''))
	return end % 4 !== 1 && (end === data.length || data.length % 4 === 0)
}

const WHITESPACE = /\s/

function describe(p: FilePart | AudioPart): string {
	if (p.type === 'audio') return `audio (${p.mediaType})`
	const s = p.source
	switch (s.kind) {
		case 'base64':
			return `a file of type ${s.mediaType}`
		case 'text':
			return 'a plain-text document'
		case 'url':
			return s.mediaType && s.mediaType.toLowerCase() !== 'application/pdf' ? `a file of type ${s.mediaType} given by URL (${s.url})` : `a document given by URL (${s.url})`
		case 'content':
			return 'a custom-content document'
		case 'file_id':
			return `a file in ${s.store === 'openai' ? "OpenAI's" : "Anthropic's"} file store (${s.id})`
		case 'uri':
			return `a Gemini file reference (${s.uri})`
	}
}

/**
 * The refusal of a part one vendor cannot take: a 400 (`unsupported_for_model`) naming the part where the client put
 * it. Retryable, so the failover loop tries the model's other channels (another vendor may take it) without holding
 * it against this one; the client gets this error when none can.
 * @param fallback the part's position when the decoder recorded none (canonical message and part index)
 * @example cannotSend(part, 'Anthropic', 'it takes no audio input', 'messages[0].content[1]')
 * // 400 "messages[0].content[1]: audio (audio/wav) cannot be sent to this model (Anthropic): it takes no audio input"
 */
export function cannotSend(p: FilePart | AudioPart, vendor: string, why: string, fallback: string): GatewayError {
	const at = p.path ?? fallback
	return unsupportedForModel(`${at}: ${describe(p)} cannot be sent to this model (${vendor}): ${why}`, true, at)
}

/** A document's title and context, as the lines that precede its text when it becomes a text part. */
function heading(p: FilePart): string {
	const lines = [p.title, p.context].filter((s): s is string => !!s)
	return lines.length ? `${lines.join('\n')}\n\n` : ''
}

/**
 * A document's text as the text part a vendor without text documents gets, its title and context leading.
 * @example documentText({ type: 'file', title: 'Notes', source: { kind: 'text', text: 'hi' } }, 'hi') === 'Notes\n\nhi'
 */
export const documentText = (p: FilePart, text: string): string => heading(p) + text

/** A base64 `text/*` file's text (UTF-8). */
export const base64Text = (data: string): string => Buffer.from(data, 'base64').toString('utf8')

export const isTextType = (mediaType: string): boolean => mediaType.toLowerCase().startsWith('text/')

/**
 * A plain-text or custom-content document as text and image parts, for a vendor without text documents (OpenAI chat,
 * Gemini): the title and context lead the text so the model still sees them. `undefined` for other sources.
 * @example asPlainParts({ type: 'file', title: 'Notes', source: { kind: 'text', text: 'hi' } }) // [{ type: 'text', text: 'Notes\n\nhi' }]
 */
export function asPlainParts(p: FilePart): Array<TextPart | ImagePart> | undefined {
	const s = p.source
	if (s.kind === 'text') return [{ type: 'text', text: documentText(p, s.text) }]
	if (s.kind !== 'content') return undefined
	const head = heading(p)
	return head ? [{ type: 'text', text: head.trimEnd() }, ...s.content] : s.content
}

/**
 * A base64 `data:` URL's media type (lowercased) and data (parsed, never fetched: WIRE-NOTES §19): `data:`, a media
 * type, any parameters, `;base64,`, the data. Found by position, not by a pattern run to the data's end: an image of
 * 20 MB was 5 ms of the event loop that way.
 * @example parseDataUrl('data:image/PNG;name=a.png;base64,iVBO') // { mediaType: 'image/png', data: 'iVBO' }
 */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
	if (!url.startsWith('data:')) return undefined
	const comma = url.indexOf(',', 5)
	if (comma === -1 || !url.startsWith(';base64', comma - 7)) return undefined
	const semi = url.indexOf(';', 5)
	if (semi <= 5) return undefined
	return { mediaType: url.slice(5, semi).toLowerCase(), data: url.slice(comma + 1) }
}

const TYPE_BY_EXT: Record<string, string> = {
	pdf: 'application/pdf',
	txt: 'text/plain',
	md: 'text/markdown',
	csv: 'text/csv',
	html: 'text/html',
	json: 'application/json',
	png: 'image/png',
	jpg: 'image/jpeg',
	jpeg: 'image/jpeg',
	gif: 'image/gif',
	webp: 'image/webp',
	wav: 'audio/wav',
	mp3: 'audio/mp3',
	ogg: 'audio/ogg',
	flac: 'audio/flac',
	aac: 'audio/aac',
	m4a: 'audio/mp4',
	// Video containers Gemini documents (ai.google.dev/gemini-api/docs/video-understanding#supported-formats).
	mp4: 'video/mp4',
	mpeg: 'video/mpeg',
	mpg: 'video/mpeg',
	mov: 'video/quicktime',
	avi: 'video/x-msvideo',
	webm: 'video/webm',
	wmv: 'video/x-ms-wmv',
	flv: 'video/x-flv',
	'3gp': 'video/3gpp',
}

const EXT_BY_TYPE: Record<string, string> = { 'application/pdf': 'pdf', 'text/plain': 'txt', 'text/markdown': 'md', 'text/csv': 'csv', 'text/html': 'html', 'application/json': 'json' }

/**
 * The media type of base64 data that came without one (OpenAI `file_data` as bare base64): a PDF by its magic bytes
 * (`%PDF` is `JVBER` in base64), else by the file name's extension, else `application/octet-stream`.
 */
export function guessMediaType(data: string, filename?: string): string {
	if (data.startsWith('JVBER')) return 'application/pdf'
	const ext = filename ? /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() : undefined
	return (ext && TYPE_BY_EXT[ext]) || 'application/octet-stream'
}

/**
 * A file name for a vendor that wants one with inline data (OpenAI `file.filename`): the client's, else the document's
 * title, else `document`, with the media type's extension.
 * @example filenameFor({ type: 'file', title: 'Q3 report', source: { kind: 'base64', mediaType: 'application/pdf', data: '' } }) === 'Q3 report.pdf'
 */
export function filenameFor(p: FilePart, mediaType: string): string {
	if (p.filename) return p.filename
	const ext = EXT_BY_TYPE[mediaType.toLowerCase()] ?? mediaType.split('/')[1]?.replace(/[^a-z0-9]/gi, '') ?? 'bin'
	const base = p.title?.trim() || 'document'
	return base.toLowerCase().endsWith(`.${ext}`) ? base : `${base}.${ext}`
}

/**
 * OpenAI `input_audio.format` → media type (Gemini spells MP3 `audio/mp3`: ai.google.dev/gemini-api/docs/audio).
 * @example audioMediaType('wav') === 'audio/wav'
 */
export const audioMediaType = (format: string): string => `audio/${format.toLowerCase() === 'mpeg' ? 'mp3' : format.toLowerCase()}`

/**
 * Media type → OpenAI `input_audio.format`, which takes only `wav` and `mp3`; undefined for other types.
 * @example audioFormat('audio/mpeg') === 'mp3'
 */
export function audioFormat(mediaType: string): 'wav' | 'mp3' | undefined {
	const t = mediaType.toLowerCase()
	if (t === 'audio/wav' || t === 'audio/x-wav' || t === 'audio/wave' || t === 'audio/vnd.wave') return 'wav'
	if (t === 'audio/mp3' || t === 'audio/mpeg' || t === 'audio/mpeg3' || t === 'audio/x-mp3') return 'mp3'
	return undefined
}
