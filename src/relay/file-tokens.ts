/**
 * Token estimates for file and audio input (core/ir.ts `FilePart`, `AudioPart`), for the reservation's bound and the
 * local input count (./estimate.ts). The vendors bill a PDF per page, as text plus the page's image: Anthropic
 * "1,500-3,000 tokens per page" of text plus image tokens (docs.anthropic.com/en/docs/build-with-claude/pdf-support),
 * Gemini 258 tokens a page (ai.google.dev/gemini-api/docs/document-processing), OpenAI text and an image per page
 * (platform.openai.com/docs/guides/pdf-files); audio by its length (Gemini 32 tokens a second: /docs/audio). The
 * settlement uses the upstream's own usage; these only have to be sane, and generous rather than short.
 * @module
 */
import type { AudioPart, FilePart } from '../core/ir'
import type { MediaRule } from './image-tokens'

/** Per PDF page: the densest text Anthropic names plus a page image (Gemini's own count: image-tokens.ts). */
export const PAGE_TOKENS = 3_000
/** Bytes of a PDF per page, for a PDF whose page objects are compressed (object streams) and cannot be counted. */
const BYTES_PER_PAGE = 50_000
/** A file the gateway cannot see (a file id, a URL, a Gemini URI): a short document's worth. */
export const REFERENCED_FILE_TOKENS = 5 * PAGE_TOKENS
/** Audio: Gemini's 32 tokens a second, at the shortest duration per byte of the common inputs (mp3 at 128 kbit/s). */
const AUDIO_TOKENS_PER_SECOND = 32
const AUDIO_BYTES_PER_SECOND = 16_000

/** Bytes of base64 data, without decoding it. */
const decodedBytes = (b64: string): number => Math.floor((b64.length * 3) / 4) - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0)

/**
 * A PDF's page count, from its `/Type /Page` objects (not `/Pages`, the tree's nodes); by its size when they are
 * compressed out of sight.
 * @example pdfPages(Buffer.from('%PDF-1.4 1 0 obj <</Type /Page>> 2 0 obj <</Type /Page>>').toString('base64')) === 2
 */
export function pdfPages(b64: string): number {
	const text = Buffer.from(b64, 'base64').toString('latin1')
	const pages = text.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0
	return pages || Math.max(1, Math.ceil(decodedBytes(b64) / BYTES_PER_PAGE))
}

/**
 * A file part's input tokens. Text (a plain-text document, a text file) is counted as text with `count`; images and
 * PDF pages as `media` counts them; other documents by their size in pages; references the gateway cannot read as a
 * short document.
 */
export function fileTokens(p: FilePart, count: (text: string) => number, media: MediaRule): number {
	const s = p.source
	const head = count(p.title ?? '') + count(p.context ?? '')
	switch (s.kind) {
		case 'text':
			return head + count(s.text)
		case 'content': {
			let n = head
			for (const c of s.content) n += c.type === 'text' ? count(c.text) : media.image(c)
			return n
		}
		case 'base64': {
			const type = s.mediaType.toLowerCase()
			if (type.startsWith('image/')) return head + media.image({ source: { kind: 'base64', mediaType: s.mediaType, data: s.data } })
			if (type.startsWith('text/')) return head + count(Buffer.from(s.data, 'base64').toString('utf8'))
			if (type.startsWith('audio/')) return head + audioBytesTokens(decodedBytes(s.data))
			if (type === 'application/pdf') return head + pdfPages(s.data) * media.page()
			return head + Math.max(1, Math.ceil(decodedBytes(s.data) / BYTES_PER_PAGE)) * PAGE_TOKENS
		}
		default:
			return head + REFERENCED_FILE_TOKENS
	}
}

const audioBytesTokens = (bytes: number): number => Math.ceil((bytes / AUDIO_BYTES_PER_SECOND) * AUDIO_TOKENS_PER_SECOND)

/** An audio part's input tokens, by its length. */
export const audioTokens = (p: AudioPart): number => audioBytesTokens(decodedBytes(p.data))
