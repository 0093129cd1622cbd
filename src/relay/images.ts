/**
 * Gemini and Bedrock's Converse take images only inline (or as uploaded files), so web image URLs bound for them are fetched
 * here, under the SSRF guard, and inlined as base64; so are documents given by URL (an Anthropic `url` document, a
 * PDF). OpenAI and Anthropic take image URLs, so for them no image is fetched (WIRE-NOTES #22); OpenAI's chat
 * completions take a document only as data or a file id, so a document URL is fetched for them too. `data:` URIs were
 * parsed by the client codec, never fetched.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { ChatRequest, FilePart, ImagePart, Part } from '../core/ir'
import { type ByteBudget, type FetchGuard, safeFetch } from '../lib/safe-fetch'

const MAX_IMAGE_BYTES = 20 * 1024 * 1024
/** Gemini's inline request limit (ai.google.dev/gemini-api/docs/document-processing: "under 20MB" inline). */
const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
/**
 * All the URLs of one request together: Gemini takes at most 100 MB of base64 inline data in a request
 * (blog.google "Increased file size limits … in Gemini API", January 2026), 75 MB before encoding. Past it the request
 * would fail upstream anyway, after the gateway had downloaded and held it all.
 */
const MAX_INLINE_TOTAL_BYTES = 75_000_000
/** Downloads at once for one request, so a request naming thousands of URLs is no amplifier (nor thousands of sockets). */
const FETCHES_AT_ONCE = 4
/**
 * URLs fetched for one request at most, unless FETCH_MAX_URLS says otherwise. Each download may take its 15–30 s, so
 * a request naming hundreds would hold a request slot and sockets for minutes (at FETCHES_AT_ONCE) before failing on
 * one. The vendors' own caps are far above: Anthropic 100 images per request, OpenAI 500
 * (platform.openai.com/docs/guides/images-vision), Gemini 3,000 per prompt; an operator can raise it up to 500.
 */
export const DEFAULT_MAX_FETCHED_URLS = 20

/** What the downloads of one request share: the byte budget, the slots, and the signal that stops the rest once one fails. */
type Batch = { guard: FetchGuard; budget: ByteBudget; signal: AbortSignal; run<T>(job: () => Promise<T>): Promise<T> }

function newBatch(guard: FetchGuard): Batch {
	const stop = new AbortController()
	const waiting: Array<() => void> = []
	let active = 0
	return {
		guard,
		signal: stop.signal,
		budget: {
			left: MAX_INLINE_TOTAL_BYTES,
			tooLarge: () =>
				new GatewayError('invalid_request', `the images and documents fetched for this request exceed ${MAX_INLINE_TOTAL_BYTES} bytes in total, what Gemini takes inline`, {
					code: 'url_too_large',
				}),
		},
		async run(job) {
			if (active < FETCHES_AT_ONCE) active++
			else await new Promise<void>((r) => waiting.push(r))
			try {
				return await job()
			} catch (e) {
				// The request fails with this error: the downloads still running or waiting are of no use now.
				if (!stop.signal.aborted) stop.abort(e)
				throw e
			} finally {
				// The slot passes to the next waiting download, if any.
				const next = waiting.shift()
				if (next) next()
				else active--
			}
		},
	}
}

async function inline(p: ImagePart, b: Batch): Promise<ImagePart> {
	if (p.source.kind !== 'url') return p
	const url = p.source.url
	const { bytes, contentType } = await b.run(() =>
		safeFetch(url, b.guard, { maxBytes: MAX_IMAGE_BYTES, timeoutMs: 15_000, accept: (t) => t.startsWith('image/'), budget: b.budget, signal: b.signal }),
	)
	return { ...p, source: { kind: 'base64', mediaType: contentType, data: Buffer.from(bytes).toString('base64') } }
}

/**
 * A document at a web URL → its bytes inline. PDF servers often say `application/octet-stream`; the declared type
 * (a PDF for Anthropic `url` documents) stands then. A failure names the part.
 */
async function inlineFile(p: FilePart, b: Batch): Promise<FilePart> {
	if (p.source.kind !== 'url') return p
	const url = p.source.url
	const declared = p.source.mediaType ?? 'application/pdf'
	const accept = (t: string) => t === declared || t === 'application/octet-stream' || (declared.startsWith('text/') && t.startsWith('text/'))
	try {
		const { bytes, contentType } = await b.run(() => safeFetch(url, b.guard, { maxBytes: MAX_DOCUMENT_BYTES, timeoutMs: 30_000, accept, budget: b.budget, signal: b.signal }))
		const mediaType = contentType && contentType !== 'application/octet-stream' ? contentType : declared
		return { ...p, source: { kind: 'base64', mediaType, data: Buffer.from(bytes).toString('base64') } }
	} catch (e) {
		if (!(e instanceof GatewayError) || !p.path) throw e
		throw new GatewayError(e.kind, `${p.path}: ${e.message}`, { code: e.code, param: p.path })
	}
}

const isUrl = (c: Part): boolean => (c.type === 'image' || c.type === 'file') && c.source.kind === 'url'
/** A document by URL; not a video or audio one (a YouTube link to Gemini), which OpenAI's chat completions take in no form. */
const isDocumentUrl = (c: Part): boolean => c.type === 'file' && c.source.kind === 'url' && !/^(video|audio)\//i.test(c.source.mediaType ?? '')

/** The parts of a request (tool results' included) that `fetched` picks: what would be downloaded. */
const countUrls = (req: ChatRequest, fetched: (c: Part) => boolean): number => {
	let n = 0
	for (const m of req.messages) for (const p of m.content) n += p.type === 'tool_result' ? p.content.filter(fetched).length : fetched(p) ? 1 : 0
	return n
}

const hasUrlPart = (parts: Part[], fetched: (c: Part) => boolean) => parts.some((p) => fetched(p) || (p.type === 'tool_result' && p.content.some(fetched)))

const inlineOne = <T extends Part>(p: T, b: Batch): Promise<T> | T =>
	p.type === 'image' ? (inline(p, b) as Promise<T>) : p.type === 'file' ? (inlineFile(p, b) as Promise<T>) : p

/**
 * Returns the request with every URL image and document inlined (the same object when there is none), or with
 * `only: 'documents'` its documents alone (OpenAI's chat completions take images by URL, documents only as data).
 * More than `maxUrls` of them is refused (400 `too_many_urls`) before anything is downloaded.
 */
export async function inlineImageUrls(req: ChatRequest, guard: FetchGuard, maxUrls = DEFAULT_MAX_FETCHED_URLS, only?: 'documents'): Promise<ChatRequest> {
	const fetched = only === 'documents' ? isDocumentUrl : isUrl
	if (!req.messages.some((m) => hasUrlPart(m.content, fetched))) return req
	const urls = countUrls(req, fetched)
	if (urls > maxUrls)
		throw new GatewayError(
			'invalid_request',
			`this request names ${urls} image or document URLs, which the gateway must download for this model (it takes files only inline); at most ${maxUrls} are fetched per request: send fewer, or the files themselves as base64 data`,
			{ code: 'too_many_urls' },
		)
	const b = newBatch(guard)
	const messages = await Promise.all(
		req.messages.map(async (m) => ({
			...m,
			content: await Promise.all(
				m.content.map(async (p): Promise<Part> => {
					if (p.type === 'tool_result') return { ...p, content: await Promise.all(p.content.map((c) => (fetched(c) ? inlineOne(c, b) : c))) }
					return fetched(p) ? inlineOne(p, b) : p
				}),
			),
		})),
	)
	return { ...req, messages }
}
