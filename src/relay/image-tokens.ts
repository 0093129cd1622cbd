/**
 * Input tokens of an image (and of a document page) as the vendor of the model serving the request counts them, for
 * the local count (count_tokens answered here) and the reservation's bound (./estimate.ts). An image's size is read
 * from its first bytes (lib/image-header.ts); one the gateway cannot see (a URL, a file id, HEIC) counts as the most
 * the rule counts for one image.
 * - OpenAI (platform.openai.com/docs/guides/images-vision#calculating-costs): `detail: low` is the model's base
 *   tokens; high and auto fit the image within 2048×2048, then its shortest side to 768, and add the tile tokens per
 *   512-pixel tile (gpt-4o 85 + 170 a tile; gpt-4o-mini 2833 + 5667; o1/o3 75 + 150; gpt-5 70 + 140; computer-use
 *   65 + 129). gpt-4.1-mini/nano, gpt-5-mini/nano and o4-mini count 32-pixel patches instead, at most 1536 (a larger
 *   image is shrunk to fit), times the model's multiplier.
 * - Anthropic (docs.anthropic.com/en/docs/build-with-claude/vision#calculate-image-costs): (width × height) / 750
 *   after fitting the long edge within 1568 pixels and the image within ~1,600 tokens; Claude Opus 4.7 and later read
 *   images up to 2576 pixels, 4,784 tokens.
 * - Gemini (ai.google.dev/gemini-api/docs/tokens#multimodal-tokens): 258 for an image of at most 384 pixels a side,
 *   else 258 per 768×768 tile; Gemini 3 counts by media resolution (ai.google.dev/gemini-api/docs/media-resolution):
 *   an image 280 / 560 / 1120 (low / medium / high, the default), a PDF page 280 / 560 (the default) / 1120; a page
 *   is 258 before Gemini 3.
 * A model of no documented rule (another vendor behind an OpenAI-compatible channel) counts the most of the three
 * vendors' usual rules. Only requests with an image or a document reach this: the rules resolve on first use.
 * @module
 */
import type { ChatRequest, ImagePart } from '../core/ir'
import { imageHeader } from '../lib/image-header'
import type { ChannelType } from '../providers/channel-types'
import type { Channel } from '../routing/catalog'
import { PAGE_TOKENS } from './file-tokens'

export type ImageDims = { width: number; height: number }

/** How a request's images and document pages count: per image and per PDF page. */
export type MediaRule = { image(p: Pick<ImagePart, 'source' | 'detail'>): number; page(): number }

/** A model that may serve the request: its channel's type and the model name sent upstream. */
export type MediaTarget = { type: ChannelType; model: string }

type VendorRule = { image(dims: ImageDims | undefined, detail: string | undefined): number; page: number }

/** Base64 characters read for the header (a multiple of 4); a JPEG whose frame header lies further is decoded whole. */
const HEAD_CHARS = 64 * 1024

/** Rounds up, forgiving the float error of a scaled side that lands on a boundary (1536.0000000002 / 512 is 3). */
const up = (x: number) => Math.ceil(x - 1e-9)

/**
 * An inline image's size from its header; undefined for a URL or bytes whose header gives none.
 * @example imageDims({ kind: 'url', url: 'https://x/y.png' }) === undefined
 */
export function imageDims(source: ImagePart['source']): ImageDims | undefined {
	if (source.kind !== 'base64') return undefined
	const data = source.data.startsWith('data:') ? source.data.slice(source.data.indexOf(',') + 1) : source.data
	let head = imageHeader(Buffer.from(data.slice(0, HEAD_CHARS), 'base64'))
	if (head && !head.width && head.mimeType === 'image/jpeg' && data.length > HEAD_CHARS) head = imageHeader(Buffer.from(data, 'base64'))
	return head?.width && head.height ? { width: head.width, height: head.height } : undefined
}

/** OpenAI's tile rule: fit 2048×2048, shortest side to 768, `tile` per 512-pixel tile plus `base`. */
export function openaiTileTokens(dims: ImageDims | undefined, detail: string | undefined, base: number, tile: number): number {
	if (detail === 'low') return base
	// Unknown size: the most tiles an image makes (2048×768 after scaling: 4 × 2).
	if (!dims) return base + tile * 8
	let { width: w, height: h } = dims
	const fit = Math.min(1, 2048 / Math.max(w, h))
	w *= fit
	h *= fit
	const short = Math.min(1, 768 / Math.min(w, h))
	return base + tile * up((w * short) / 512) * up((h * short) / 512)
}

const PATCH = 32
const MAX_PATCHES = 1536

/** OpenAI's patch rule: 32-pixel patches, an image of more than 1536 shrunk to fit, times the model's multiplier. */
export function openaiPatchTokens(dims: ImageDims | undefined, multiplier: number): number {
	if (!dims) return Math.ceil(MAX_PATCHES * multiplier)
	const { width: w, height: h } = dims
	let patches = up(w / PATCH) * up(h / PATCH)
	if (patches > MAX_PATCHES) {
		let shrink = Math.sqrt((PATCH * PATCH * MAX_PATCHES) / (w * h))
		// Shrunk further so a whole number of patches spans the narrower fit (OpenAI's step B).
		shrink *= Math.min(Math.floor((w * shrink) / PATCH) / ((w * shrink) / PATCH), Math.floor((h * shrink) / PATCH) / ((h * shrink) / PATCH))
		patches = Math.min(MAX_PATCHES, up((w * shrink) / PATCH) * up((h * shrink) / PATCH))
	}
	return Math.ceil(patches * multiplier)
}

/** Anthropic's rule: (width × height) / 750 once the long edge fits `edge` pixels, at most `cap` tokens. */
export function claudeImageTokens(dims: ImageDims | undefined, edge = 1568, cap = 1600): number {
	if (!dims) return cap
	const fit = Math.min(1, edge / Math.max(dims.width, dims.height))
	return Math.min(cap, Math.ceil((dims.width * dims.height * fit * fit) / 750))
}

const GEMINI_TILE = 258

/** The longest side Gemini's tiles are counted over: Google names no limit, so a header's size is bounded here (4 × 4 tiles at most). */
const GEMINI_MAX_SIDE = 3072

/** Gemini's rule before Gemini 3: 258 for an image of at most 384 pixels a side, else 258 per 768×768 tile. */
export function geminiImageTokens(dims: ImageDims | undefined): number {
	// Unknown size: as a 2048-pixel square (3 × 3 tiles).
	const { width, height } = dims ?? { width: 2048, height: 2048 }
	if (width <= 384 && height <= 384) return GEMINI_TILE
	const fit = Math.min(1, GEMINI_MAX_SIDE / Math.max(width, height))
	return up((width * fit) / 768) * up((height * fit) / 768) * GEMINI_TILE
}

/** Gemini 3's tokens by media resolution, an image's and a PDF page's (the defaults: high for images, medium for PDFs). */
const GEMINI3: Record<string, { image: number; page: number }> = {
	MEDIA_RESOLUTION_LOW: { image: 280, page: 280 },
	MEDIA_RESOLUTION_MEDIUM: { image: 560, page: 560 },
	MEDIA_RESOLUTION_HIGH: { image: 1120, page: 1120 },
}
const GEMINI3_DEFAULT = { image: 1120, page: 560 }

/** The patch multipliers and tile prices OpenAI documents, most specific name first. */
const OPENAI_PATCH: Array<[RegExp, number]> = [
	[/^gpt-4\.1-mini|^gpt-5(\.\d+)?-mini/, 1.62],
	[/^gpt-4\.1-nano|^gpt-5(\.\d+)?-nano/, 2.46],
	[/^o4-mini/, 1.72],
]
const OPENAI_TILE: Array<[RegExp, number, number]> = [
	[/^gpt-4o-mini/, 2833, 5667],
	[/^o[13]/, 75, 150],
	[/^gpt-5/, 70, 140],
	[/^computer-use/, 65, 129],
	[/^(gpt-4|chatgpt-4o)/, 85, 170],
]

/** The global media resolution of a Gemini client's request (`generationConfig.mediaResolution`), if any. */
function mediaResolution(req: ChatRequest | undefined): string | undefined {
	const cfg = req?.extra?.__protocol === 'gemini' ? (req.extra.generationConfig as Record<string, unknown> | undefined) : undefined
	const v = cfg?.mediaResolution ?? cfg?.media_resolution
	return typeof v === 'string' ? v : undefined
}

const claudeRule = (model: string): VendorRule => {
	// Claude Opus 4.7 and later models read larger images (claude-opus-4-7, claude-sonnet-5…).
	const v = /claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d))?(?!\d)/.exec(model)
	const hi = v !== null && Number(v[1]) * 10 + Number(v[2] ?? 0) >= 47
	return { image: (d) => (hi ? claudeImageTokens(d, 2576, 4784) : claudeImageTokens(d)), page: PAGE_TOKENS }
}

const geminiRule = (model: string, req: ChatRequest | undefined): VendorRule => {
	const v = /gemini-(\d+)/.exec(model)
	if (!v || Number(v[1]) < 3) return { image: geminiImageTokens, page: GEMINI_TILE }
	const at = GEMINI3[mediaResolution(req) ?? ''] ?? GEMINI3_DEFAULT
	return { image: () => at.image, page: at.page }
}

const openaiRule = (model: string): VendorRule | undefined => {
	const name = model.slice(model.lastIndexOf('/') + 1)
	const patch = OPENAI_PATCH.find(([re]) => re.test(name))
	if (patch) return { image: (d) => openaiPatchTokens(d, patch[1]), page: PAGE_TOKENS }
	const tile = OPENAI_TILE.find(([re]) => re.test(name))
	return tile && { image: (d, detail) => openaiTileTokens(d, detail, tile[1], tile[2]), page: PAGE_TOKENS }
}

/** A model of no documented rule: the most of OpenAI's gpt-4o, Claude's and Gemini's usual rules. */
const unknownRule: VendorRule = {
	image: (d, detail) => Math.max(openaiTileTokens(d, detail, 85, 170), claudeImageTokens(d), geminiImageTokens(d)),
	page: PAGE_TOKENS,
}

/** The rule of one model: by its name's family (a Claude or Gemini model behind an OpenAI-compatible channel), else its channel's vendor. */
function vendorRule(t: MediaTarget, req: ChatRequest | undefined): VendorRule {
	const name = t.model.toLowerCase()
	if (name.includes('claude')) return claudeRule(name)
	if (name.includes('gemini')) return geminiRule(name, req)
	const openai = openaiRule(name)
	if (openai) return openai
	if (t.type === 'anthropic' || t.type === 'bedrock') return claudeRule(name)
	// Vertex's Claude models are named claude-* (above): its others are Gemini's.
	if (t.type === 'gemini' || t.type === 'vertex') return geminiRule(name, req)
	return unknownRule
}

/**
 * How `req`'s media count on `targets`: each image and page as the most any of them counts (a reservation must hold
 * enough for whichever channel serves); with no target, as a model of no documented rule.
 * @example mediaRuleFor([{ type: 'openai', model: 'gpt-4o' }]).image({ source: { kind: 'url', url: 'https://x/y.png' }, detail: 'low' }) === 85
 */
export function mediaRuleFor(targets: MediaTarget[], req?: ChatRequest): MediaRule {
	return new TargetsRule(targets, undefined, req)
}

/** The models `channels` serve `model` as. */
export const targetsOf = (channels: Channel[], model: string): MediaTarget[] => channels.map((ch) => ({ type: ch.type, model: ch.modelMap[model] ?? model }))

/** How `req`'s media count on the channels that may serve its model (the models resolved on the first image or page). */
export const mediaOnChannels = (channels: Channel[], req: ChatRequest): MediaRule => new TargetsRule(undefined, channels, req)

/**
 * A MediaRule over targets given, or those of `channels` for `req`'s model, each target's rule made on the first image
 * or page. A class: one is made per request (most have neither), and its state as fields costs one object where
 * closures cost a function and a scope each (eight cells a request).
 */
class TargetsRule implements MediaRule {
	private rules: VendorRule[] | undefined = undefined

	constructor(
		private readonly targets: MediaTarget[] | undefined,
		private readonly channels: Channel[] | undefined,
		private readonly req: ChatRequest | undefined,
	) {}

	private all(): VendorRule[] {
		if (this.rules) return this.rules
		const req = this.req
		const ts = this.targets ?? (this.channels && req ? targetsOf(this.channels, req.model) : [])
		return (this.rules = ts.length ? ts.map((t) => vendorRule(t, req)) : [unknownRule])
	}

	image(p: Pick<ImagePart, 'source' | 'detail'>): number {
		const dims = imageDims(p.source)
		let n = 0
		for (const r of this.all()) n = Math.max(n, r.image(dims, p.detail))
		return n
	}

	page(): number {
		let n = 0
		for (const r of this.all()) n = Math.max(n, r.page)
		return n
	}
}
