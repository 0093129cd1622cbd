/**
 * Interactions content (`{type: 'text' | 'image' | 'audio' | 'document' | 'video', …}`) ⇄ canonical parts. Media is
 * inline (`data`, base64, with `mime_type`) or by `uri`: an http(s) URL is a web URL any vendor may read, anything else
 * (a Files API URI, `gs://`) a Gemini file reference, which other vendors refuse with a 400 naming the part.
 * @module
 */
import { badRequest } from '../../core/errors'
import type { AudioPart, FilePart, ImagePart, TextPart } from '../../core/ir'
import { isObj, type Obj } from '../gemini/read'

export type InputPart = TextPart | ImagePart | FilePart | AudioPart

const isWebUrl = (uri: string) => /^https?:\/\//i.test(uri)

/**
 * One content item → a canonical part; `at` names it in a 400 (`input[0].content[1]`).
 * @example decodeContent({ type: 'text', text: 'hi' }, 'input') // { type: 'text', text: 'hi' }
 */
export function decodeContent(c: unknown, at: string): InputPart {
	if (!isObj(c) || typeof c.type !== 'string') throw badRequest(`${at} must be a content object with a type`, at)
	const mime = typeof c.mime_type === 'string' ? c.mime_type : undefined
	const data = typeof c.data === 'string' ? c.data : undefined
	const uri = typeof c.uri === 'string' ? c.uri : undefined
	switch (c.type) {
		case 'text':
			if (typeof c.text !== 'string') throw badRequest(`${at}.text must be a string`, `${at}.text`)
			return { type: 'text', text: c.text }
		case 'image':
			if (data) return { type: 'image', source: { kind: 'base64', mediaType: mime ?? 'image/png', data } }
			if (uri && isWebUrl(uri)) return { type: 'image', source: { kind: 'url', url: uri } }
			if (uri) return { type: 'file', source: { kind: 'uri', uri, ...(mime && { mediaType: mime }) }, path: at }
			break
		case 'audio':
			if (data) return { type: 'audio', mediaType: mime ?? 'audio/wav', data, path: at }
			if (uri) return fileByUri(uri, mime, at)
			break
		case 'document':
		case 'video':
			if (data) return { type: 'file', source: { kind: 'base64', mediaType: mime ?? (c.type === 'document' ? 'application/pdf' : 'video/mp4'), data }, path: at }
			if (uri) return fileByUri(uri, mime, at)
			break
		default:
			throw badRequest(`${at}.type "${c.type}" is not a content type (text, image, audio, document, video)`, `${at}.type`)
	}
	throw badRequest(`${at} needs \`data\` or \`uri\``, at)
}

const fileByUri = (uri: string, mime: string | undefined, at: string): FilePart => ({
	type: 'file',
	source: isWebUrl(uri) ? { kind: 'url', url: uri, ...(mime && { mediaType: mime }) } : { kind: 'uri', uri, ...(mime && { mediaType: mime }) },
	path: at,
})

/** A canonical input part → Interactions content (what an upstream of this protocol is sent). */
export function encodeContent(p: InputPart): Obj {
	switch (p.type) {
		case 'text':
			return { type: 'text', text: p.text }
		case 'image':
			return p.source.kind === 'base64' ? { type: 'image', data: p.source.data, mime_type: p.source.mediaType } : { type: 'image', uri: p.source.url }
		case 'audio':
			return { type: 'audio', data: p.data, mime_type: p.mediaType }
		case 'file': {
			const s = p.source
			const type = (s.kind === 'base64' || s.kind === 'url' || s.kind === 'uri') && s.mediaType?.startsWith('video/') ? 'video' : 'document'
			if (s.kind === 'base64') return { type, data: s.data, mime_type: s.mediaType }
			if (s.kind === 'url') return { type, uri: s.url, ...(s.mediaType && { mime_type: s.mediaType }) }
			if (s.kind === 'uri') return { type, uri: s.uri, ...(s.mediaType && { mime_type: s.mediaType }) }
			if (s.kind === 'text') return { type: 'text', text: s.text }
			throw badRequest(`${p.path ?? 'input'}: a file by ${s.kind} cannot be sent to Gemini's Interactions API`, p.path)
		}
	}
}

/** Whether a value is a content item (rather than a step or a turn). */
export const isContent = (v: unknown): boolean => isObj(v) && typeof v.type === 'string' && CONTENT_TYPES.has(v.type)

const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'document', 'video'])
