/**
 * Gemini takes images only inline (or as uploaded files), so web image URLs bound for a Gemini upstream are fetched
 * here, under the SSRF guard, and inlined as base64. OpenAI and Anthropic take URLs, so for them nothing is fetched
 * (WIRE-NOTES #22). `data:` URIs were parsed by the client codec, never fetched.
 * @module
 */
import type { ChatRequest, ImagePart, Part } from '../core/ir'
import { type FetchGuard, safeFetch } from '../lib/safe-fetch'

const MAX_IMAGE_BYTES = 20 * 1024 * 1024

async function inline(p: ImagePart, guard: FetchGuard): Promise<ImagePart> {
	if (p.source.kind !== 'url') return p
	const { bytes, contentType } = await safeFetch(p.source.url, guard, { maxBytes: MAX_IMAGE_BYTES, timeoutMs: 15_000, accept: (t) => t.startsWith('image/') })
	return { ...p, source: { kind: 'base64', mediaType: contentType, data: Buffer.from(bytes).toString('base64') } }
}

const hasUrlImage = (parts: Part[]) =>
	parts.some((p) => (p.type === 'image' && p.source.kind === 'url') || (p.type === 'tool_result' && p.content.some((c) => c.type === 'image' && c.source.kind === 'url')))

/** Returns the request with every URL image inlined (the same object when there is none). */
export async function inlineImageUrls(req: ChatRequest, guard: FetchGuard): Promise<ChatRequest> {
	if (!req.messages.some((m) => hasUrlImage(m.content))) return req
	const messages = await Promise.all(
		req.messages.map(async (m) => ({
			...m,
			content: await Promise.all(
				m.content.map(async (p): Promise<Part> => {
					if (p.type === 'image') return inline(p, guard)
					if (p.type === 'tool_result') return { ...p, content: await Promise.all(p.content.map((c) => (c.type === 'image' ? inline(c, guard) : c))) }
					return p
				}),
			),
		})),
	)
	return { ...req, messages }
}
