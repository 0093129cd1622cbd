/**
 * Canonical file parts → Anthropic `document` blocks (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support,
 * /citations, /files): a PDF as a `base64` or `url` source, text as a `text` source (media type text/plain), custom
 * content as a `content` source, a Files API file as a `file` source; with `title`, `context`, `citations` and
 * `cache_control`. What Anthropic cannot read (audio, another vendor's file ids, Gemini file URIs, other media types) is
 * refused with a 400 naming the part (WIRE-NOTES #8).
 * @module
 */
import type { AudioPart, CacheControl, FilePart, ImagePart, TextPart } from '../../core/ir'
import { base64Text, cannotSend, isTextType } from '../files'
import type { Json } from './check'
import { IMAGE_TYPES } from './content'

const VENDOR = 'Anthropic'

type Inner = (p: TextPart | ImagePart) => Json | null

/** A block's `cache_control`, spread into it when the part carries one. */
export const cache = (cc: CacheControl | undefined): Json => (cc ? { cache_control: cc } : {})

function documentSource(p: FilePart, inner: Inner, where: string): Json {
	const s = p.source
	switch (s.kind) {
		case 'base64': {
			const type = s.mediaType.toLowerCase()
			if (type === 'application/pdf') return { type: 'base64', media_type: 'application/pdf', data: s.data }
			// A text file (OpenAI file_data, Gemini inlineData text/*) is what a plain-text document holds.
			if (isTextType(type)) return { type: 'text', media_type: 'text/plain', data: base64Text(s.data) }
			throw cannotSend(p, VENDOR, 'its documents are PDFs (base64 or URL) or plain text', where)
		}
		case 'text':
			return { type: 'text', media_type: 'text/plain', data: s.text }
		case 'url':
			if (!/^https?:\/\//i.test(s.url)) throw cannotSend(p, VENDOR, 'it reads documents from http(s) URLs only; send the file as base64 data', where)
			if (s.mediaType && s.mediaType.toLowerCase() !== 'application/pdf') throw cannotSend(p, VENDOR, 'a document URL must point to a PDF', where)
			return { type: 'url', url: s.url }
		case 'content':
			return { type: 'content', content: s.content.map(inner).filter((b): b is Json => b !== null) }
		case 'file_id':
			if (s.store === 'anthropic') return { type: 'file', file_id: s.id }
			throw cannotSend(p, VENDOR, "a file id of OpenAI's file store is readable only by OpenAI; send the file's data instead", where)
		case 'uri':
			throw cannotSend(p, VENDOR, "a Gemini file URI is readable only by Gemini; send the file's data instead", where)
	}
}

/**
 * A file part → a `document` block, or an `image` block for an image file (a Gemini inlineData image in a tool
 * result). Throws the refusal of a file Anthropic cannot read.
 * @param inner encodes the text and image blocks of a custom-content document
 * @param where the part's position, for a refusal when its decoder recorded none
 */
export function encodeFile(p: FilePart, inner: Inner, where: string): Json {
	const s = p.source
	if (s.kind === 'base64' && IMAGE_TYPES.includes(s.mediaType.toLowerCase()))
		return { type: 'image', source: { type: 'base64', media_type: s.mediaType.toLowerCase(), data: s.data }, ...cache(p.cacheControl) }
	const block: Json = { type: 'document', source: documentSource(p, inner, where) }
	if (p.title !== undefined) block.title = p.title
	if (p.context !== undefined) block.context = p.context
	if (p.citations !== undefined) block.citations = { enabled: p.citations }
	return { ...block, ...cache(p.cacheControl) }
}

/** Audio input: the Messages API has no audio block. */
export const refuseAudio = (p: AudioPart, where: string) => cannotSend(p, VENDOR, 'the Messages API takes no audio input', where)
