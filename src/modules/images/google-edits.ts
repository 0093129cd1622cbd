/**
 * POST /v1/images/edits for a Gemini image model ("nano banana": gemini-2.5-flash-image, gemini-3-pro-image-preview):
 * the input images become `inlineData` parts before the prompt text of one `:generateContent` per image, with
 * `responseModalities: ['IMAGE']` and `imageConfig` as generations map `size` (google-params.ts, google.ts), and the
 * images come back in OpenAI's shape (`b64_json`). Multipart files are sent as they came (their format read from their
 * bytes); a JSON edit's `data:` URLs are decoded and its https URLs fetched under the outbound guard (lib/safe-fetch.ts).
 * What Gemini cannot do is a 400 naming the field before any hold or download: a `mask` (Gemini edits by instruction,
 * ai.google.dev/gemini-api/docs/image-generation), an Imagen model (Google edits with Imagen on Vertex AI only), an
 * OpenAI `file_id`.
 * The hold allows each call its input images' tokens as Google counts them: 258 for an image of at most 384 pixels a
 * side, else 258 for each 768x768 tile (ai.google.dev/gemini-api/docs/tokens); Gemini 3 models count up to 1120 an
 * image at their default media resolution, so an image holds the larger.
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import { imageHeader } from '../../lib/image-header'
import { type ByteBudget, safeFetch } from '../../lib/safe-fetch'
import type { CallContext } from '../../passthrough/relay'
import { decodeImageUrl } from '../../protocols/openai-chat/content'
import type { Route } from '../../relay/budget'
import type { EditImage, EditSource } from './edits'
import { googlePlans, relayGoogleImages } from './google'
import type { InlineImage } from './google-params'
import type { ImageGeneration } from './model'

/** Image formats Gemini takes as input (ai.google.dev/gemini-api/docs/image-understanding). */
const GEMINI_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']
/** Gemini's inline request limit, all parts together (ai.google.dev/gemini-api/docs/image-understanding: 20 MB). */
const MAX_INLINE_BYTES = 20 * 1024 * 1024
/** Tokens of one small image or one 768x768 tile. */
const TILE_TOKENS = 258
/** Gemini 3's tokens for an image at its default (high) media resolution. */
const GEMINI3_IMAGE_TOKENS = 1120
/** An image whose header has no size (HEIC) is held as 4x4 tiles (3072 pixels a side). */
const UNKNOWN_SIZE_TILES = 16

/**
 * The most input tokens Gemini counts for an image of `width`x`height` pixels (unknown: as 3072x3072).
 * @example imageInputTokens(300, 200) // 1120 (258 on Gemini 2.5; Gemini 3's 1120 bounds it)
 */
export function imageInputTokens(width?: number, height?: number): number {
	const tiles = !width || !height ? UNKNOWN_SIZE_TILES : width <= 384 && height <= 384 ? 1 : Math.ceil(width / 768) * Math.ceil(height / 768)
	return Math.max(tiles * TILE_TOKENS, GEMINI3_IMAGE_TOKENS)
}

/** Bytes of an image as an inlineData part, its format read from the bytes; refused naming `at` when Gemini cannot read it. */
function inlineOf(bytes: Uint8Array, at: string): { part: InlineImage; tokens: number } {
	const head = imageHeader(bytes)
	if (!head || !GEMINI_IMAGE_TYPES.includes(head.mimeType))
		throw badRequest(`Invalid '${at}': ${head ? `a ${head.mimeType} image` : 'not an image'}; Gemini image models edit PNG, JPEG, WebP, HEIC and HEIF images`, at)
	return { part: { inlineData: { mimeType: head.mimeType, data: Buffer.from(bytes).toString('base64') } }, tokens: imageInputTokens(head.width, head.height) }
}

const fileIdRefusal = (at: string) =>
	badRequest(`Invalid '${at}': Gemini image models take no OpenAI file ids; send the image as a data: URL, an https URL, or a multipart 'image' file`, at)

/** The bytes of one input image: an upload's, a data URL's, or a web URL's fetched under the guard. */
async function bytesOf(image: EditImage, ctx: CallContext, budget: ByteBudget): Promise<Uint8Array> {
	if ('file' in image) return new Uint8Array(await image.file.arrayBuffer())
	if ('fileId' in image) throw fileIdRefusal(image.at)
	const source = decodeImageUrl(image.url, image.at)
	if (source.kind === 'base64') return new Uint8Array(Buffer.from(source.data, 'base64'))
	try {
		const got = await safeFetch(source.url, { allow: ctx.svc.env.fetchAllow }, { maxBytes: MAX_INLINE_BYTES, timeoutMs: 15_000, accept: (t) => t.startsWith('image/'), budget, signal: ctx.signal })
		return got.bytes
	} catch (e) {
		if (!(e instanceof GatewayError)) throw e
		throw new GatewayError(e.kind, `${image.at}: ${e.message}`, { code: e.code, param: image.at })
	}
}

/** The input images as Gemini parts, in order, and the tokens they may take; web URLs fetched one after another. */
async function loadImages(edit: EditSource, ctx: CallContext): Promise<{ inputs: InlineImage[]; imageTokens: number }> {
	const urls = edit.images.filter((i) => 'url' in i && !i.url.startsWith('data:')).length
	if (urls > ctx.svc.env.maxFetchedUrls)
		throw badRequest(`This edit names ${urls} image URLs; at most ${ctx.svc.env.maxFetchedUrls} are fetched per request: send the images themselves as data: URLs or files`, 'images')
	const budget: ByteBudget = { left: MAX_INLINE_BYTES, tooLarge: () => badRequest(`The input images exceed ${MAX_INLINE_BYTES} bytes in total, what Gemini takes inline`, 'images') }
	const inputs: InlineImage[] = []
	let imageTokens = 0
	let total = 0
	for (const image of edit.images) {
		const bytes = await bytesOf(image, ctx, budget)
		total += bytes.length
		if (total > MAX_INLINE_BYTES) throw budget.tooLarge()
		const { part, tokens } = inlineOf(bytes, image.at)
		inputs.push(part)
		imageTokens += tokens
	}
	return { inputs, imageTokens }
}

/**
 * Relays an edit to the route's Gemini channels. Every refusal that needs no image bytes (mask, options, the model)
 * comes first, then the images are read (and web ones fetched), then the call is held and made as a generation is.
 */
export async function relayGoogleEdit(ctx: CallContext, edit: EditSource, route: Route): Promise<Response> {
	if (edit.mask)
		throw badRequest(
			"Invalid 'mask': Gemini image models edit by instruction, not by mask; leave the mask out and say in the prompt what to change where (e.g. \"replace the sky with a sunset\")",
			'mask',
		)
	const body = edit.options as unknown as ImageGeneration
	googlePlans(body, route, [])
	const fileId = edit.images.find((i) => 'fileId' in i)
	if (fileId) throw fileIdRefusal(fileId.at)
	return relayGoogleImages(ctx, body, route, await loadImages(edit, ctx))
}
