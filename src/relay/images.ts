/**
 * Gemini takes images only inline (or as uploaded files), so web image URLs bound for a Gemini upstream are fetched
 * here, under the SSRF guard, and inlined as base64; so are documents given by URL (an Anthropic `url` document, a
 * PDF). OpenAI and Anthropic take image URLs, so for them nothing is fetched (WIRE-NOTES #22). `data:` URIs were
 * parsed by the client codec, never fetched.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { ChatRequest, FilePart, ImagePart, Part } from '../core/ir'
import { type FetchGuard, safeFetch } from '../lib/safe-fetch'

const MAX_IMAGE_BYTES = 20 * 1024 * 1024
/** Gemini's inline request limit (ai.google.dev/gemini-api/docs/document-processing: "under 20MB" inline). */
const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024

async function inline(p: ImagePart, guard: FetchGuard): Promise<ImagePart> {
	if (p.source.kind !== 'url') return p
	const { bytes, contentType } = await safeFetch(p.source.url, guard, { maxBytes: MAX_IMAGE_BYTES, timeoutMs: 15_000, accept: (t) => t.startsWith('image/') })
	return { ...p, source: { kind: 'base64', mediaType: contentType, data: Buffer.from(bytes).toString('base64') } }
}

/**
 * A document at a web URL → its bytes inline. PDF servers often say `application/octet-stream`; the declared type
 * (a PDF for Anthropic `url` documents) stands then. A failure names the part.
 */
async function inlineFile(p: FilePart, guard: FetchGuard): Promise<FilePart> {
	if (p.source.kind !== 'url') return p
	const declared = p.source.mediaType ?? 'application/pdf'
	const accept = (t: string) => t === declared || t === 'application/octet-stream' || (declared.startsWith('text/') && t.startsWith('text/'))
	try {
		const { bytes, contentType } = await safeFetch(p.source.url, guard, { maxBytes: MAX_DOCUMENT_BYTES, timeoutMs: 30_000, accept })
		const mediaType = contentType && contentType !== 'application/octet-stream' ? contentType : declared
		return { ...p, source: { kind: 'base64', mediaType, data: Buffer.from(bytes).toString('base64') } }
	} catch (e) {
		if (!(e instanceof GatewayError) || !p.path) throw e
		throw new GatewayError(e.kind, `${p.path}: ${e.message}`, { code: e.code, param: p.path })
	}
}

const isUrl = (c: Part): boolean => (c.type === 'image' || c.type === 'file') && c.source.kind === 'url'

const hasUrlImage = (parts: Part[]) => parts.some((p) => isUrl(p) || (p.type === 'tool_result' && p.content.some(isUrl)))

const inlineOne = <T extends Part>(p: T, guard: FetchGuard): Promise<T> | T =>
	p.type === 'image' ? (inline(p, guard) as Promise<T>) : p.type === 'file' ? (inlineFile(p, guard) as Promise<T>) : p

/** Returns the request with every URL image and document inlined (the same object when there is none). */
export async function inlineImageUrls(req: ChatRequest, guard: FetchGuard): Promise<ChatRequest> {
	if (!req.messages.some((m) => hasUrlImage(m.content))) return req
	const messages = await Promise.all(
		req.messages.map(async (m) => ({
			...m,
			content: await Promise.all(
				m.content.map(async (p): Promise<Part> => {
					if (p.type === 'tool_result') return { ...p, content: await Promise.all(p.content.map((c) => inlineOne(c, guard))) }
					return inlineOne(p, guard)
				}),
			),
		})),
	)
	return { ...req, messages }
}
