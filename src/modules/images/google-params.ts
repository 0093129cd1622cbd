/**
 * An OpenAI image request in Google's terms, for a model a Gemini channel serves: Imagen through `:predict`
 * (ai.google.dev/gemini-api/docs/imagen: `{ instances: [{ prompt }], parameters: { sampleCount, aspectRatio, imageSize } }`)
 * and Gemini's image models through `:generateContent` (…/docs/image-generation: `responseModalities: ['IMAGE']`,
 * `imageConfig: { aspectRatio, imageSize }`). `size` becomes the nearest aspect ratio and `imageSize` tier the model
 * makes; what Google has no counterpart for is refused with a 400 naming the field, before any hold or upstream call.
 * @module
 */
import { badRequest, GatewayError } from '../../core/errors'
import type { ImageGeneration } from './model'

/** Imagen's `aspectRatio` values. */
const IMAGEN_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9']
/** Gemini image models' `imageConfig.aspectRatio` values. */
const GEMINI_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9']

/** Imagen's `sampleCount` is 1–4 (Google answers 400 beyond). */
export const IMAGEN_MAX_SAMPLES = 4

/** How a Google model makes images: the method, its aspect ratios and its `imageSize` tiers (the first the default). */
export type GoogleImageModel = { kind: 'imagen' | 'gemini'; ratios: readonly string[]; tiers: readonly string[] }

/**
 * The image model behind an upstream name, or undefined for a model that makes no images. Imagen 4 Standard and Ultra
 * take `imageSize` 1K or 2K (Fast and Imagen 3 make 1K only); Gemini 3 image models 1K, 2K or 4K, Gemini 2.5 Flash
 * Image 1K only.
 * @example googleImageModel('imagen-4.0-generate-001') // { kind: 'imagen', ratios: [...], tiers: ['1K', '2K'] }
 */
export function googleImageModel(model: string): GoogleImageModel | undefined {
	if (model.startsWith('imagen-')) return { kind: 'imagen', ratios: IMAGEN_RATIOS, tiers: model.startsWith('imagen-4') && !model.includes('fast') ? ['1K', '2K'] : ['1K'] }
	if (model.includes('image')) return { kind: 'gemini', ratios: GEMINI_RATIOS, tiers: model.startsWith('gemini-3') ? ['1K', '2K', '4K'] : ['1K'] }
	return undefined
}

/**
 * How far apart (as a factor) the asked and the made aspect ratio may be: OpenAI's 1536x1024 (3:2) is Imagen's 4:3,
 * 1792x1024 (7:4) its 16:9, while 21:9 on Imagen is refused.
 */
const RATIO_SLACK = 1.15
/**
 * The same for the pixel count against a tier's (1K about 1024², 2K 2048², 4K 4096²): 1536x1024 is 1K, 2048x2048 2K
 * where the model has it, 512x512 (a quarter of 1K) is refused.
 */
const AREA_SLACK = 2

/** What `size` asks Google for, and the square size the image is priced at (`per_image_<WxH>`; other shapes `per_image`). */
export type GoogleSize = { aspectRatio?: string; imageSize?: string; made?: string }

const ratioOf = (r: string) => {
	const [w, h] = r.split(':').map(Number)
	return w! / h!
}
const tierSide = (tier: string) => 1024 * Number.parseInt(tier, 10)

/** The entry of `list` with the smallest `distance`, and that distance. */
function nearest(list: readonly string[], distance: (x: string) => number): [string, number] {
	let best: [string, number] = [list[0]!, distance(list[0]!)]
	for (const x of list.slice(1)) {
		const d = distance(x)
		if (d < best[1]) best = [x, d]
	}
	return best
}

/**
 * `size` (`WxH`, checked by passthrough/validate.ts, or `auto`) as Google's aspect ratio and `imageSize`. Left out or
 * `auto`, Google's default: a square at the first tier (Imagen's 1:1 1K; Gemini makes squares for a text prompt).
 * @example fitSize('1536x1024', 'imagen-4.0-generate-001', googleImageModel('imagen-4.0-generate-001')!)
 * // { aspectRatio: '4:3', imageSize: '1K' }
 */
export function fitSize(size: string | undefined, model: string, spec: GoogleImageModel): GoogleSize {
	if (!size || size === 'auto') return { made: `${tierSide(spec.tiers[0]!)}x${tierSide(spec.tiers[0]!)}` }
	const [w, h] = size.split('x').map(Number) as [number, number]
	const [aspectRatio, off] = nearest(spec.ratios, (r) => Math.abs(Math.log(w / h / ratioOf(r))))
	if (off > Math.log(RATIO_SLACK))
		throw badRequest(`Invalid 'size': ${size} is not near an aspect ratio ${model} makes (${spec.ratios.join(', ')}); ask for one of those shapes, e.g. 1024x1024 or 1536x1024`, 'size')
	const [tier, far] = nearest(spec.tiers, (t) => Math.abs(Math.log((w * h) / tierSide(t) ** 2)))
	if (far > Math.log(AREA_SLACK)) {
		const made = spec.tiers.map((t) => `${t} (about ${tierSide(t)}x${tierSide(t)} pixels)`).join(', ')
		throw badRequest(`Invalid 'size': ${size} is far from the image sizes ${model} makes: ${made}`, 'size')
	}
	const side = tierSide(tier)
	return { aspectRatio, imageSize: spec.tiers.length > 1 ? tier : undefined, made: aspectRatio === '1:1' ? `${side}x${side}` : undefined }
}

/** Imagen's `outputOptions` for OpenAI's `output_format` and `output_compression` (JPEG only), when asked. */
export type ImagenOutput = { mimeType: string; compressionQuality?: number }

/**
 * The OpenAI options a Google model cannot honour are refused, each naming its field: `response_format: "url"`
 * (Google answers the image itself and the gateway keeps none to link to), `stream`, `style` (dall-e-3),
 * `quality` other than `auto`/`standard`, a transparent `background`, `n` over Imagen's 4, and an `output_format`
 * other than PNG (Imagen also JPEG, with `output_compression`). `user`, `moderation` and the like are dropped.
 * @returns Imagen's outputOptions when the request names a format.
 */
export function checkGoogleOptions(body: ImageGeneration, model: string, spec: GoogleImageModel): ImagenOutput | undefined {
	const extra = body as Record<string, unknown>
	if (body.response_format === 'url')
		throw badRequest(`Invalid 'response_format': ${model} answers the image itself, not a URL; leave response_format out or set it to "b64_json"`, 'response_format')
	if (body.stream === true) throw badRequest(`Invalid 'stream': streaming images is only for GPT image models, not ${model}`, 'stream')
	if (body.quality !== undefined && body.quality !== 'auto' && body.quality !== 'standard')
		throw badRequest(`Invalid 'quality': ${model} has no quality setting ("auto" or "standard" only); pick a model instead (e.g. an Ultra or Fast variant)`, 'quality')
	if (body.style !== undefined) throw badRequest(`Invalid 'style': ${model} has no style setting (dall-e-3 only)`, 'style')
	if (extra.background === 'transparent') throw badRequest(`Invalid 'background': ${model} makes no transparent images`, 'background')
	if (spec.kind === 'imagen' && (body.n ?? 1) > IMAGEN_MAX_SAMPLES)
		throw badRequest(`Invalid 'n': ${model} makes 1 to ${IMAGEN_MAX_SAMPLES} images per request`, 'n')
	const format = extra.output_format
	const jpeg = spec.kind === 'imagen' && format === 'jpeg'
	if (format !== undefined && format !== 'png' && !jpeg)
		throw badRequest(`Invalid 'output_format': ${model} makes ${spec.kind === 'imagen' ? '"png" or "jpeg"' : '"png"'} images`, 'output_format')
	const compression = extra.output_compression
	if (compression !== undefined && compression !== null && !jpeg) throw badRequest(`Invalid 'output_compression': ${model} compresses only JPEG images (Imagen with output_format "jpeg")`, 'output_compression')
	if (!jpeg) return format === 'png' && spec.kind === 'imagen' ? { mimeType: 'image/png' } : undefined
	return typeof compression === 'number' ? { mimeType: 'image/jpeg', compressionQuality: compression } : { mimeType: 'image/jpeg' }
}

/** One channel's way of making the images: the Google method, its body, and how many calls make `n` images. */
export type GooglePlan = { kind: GoogleImageModel['kind']; model: string; n: number; calls: number; made?: string; body: string }

/** An input image of an edit as Gemini takes it: an `inlineData` part. */
export type InlineImage = { inlineData: { mimeType: string; data: string } }

/**
 * The upstream call for `upstreamModel`: Imagen makes all `n` images in one `:predict`; a Gemini image model one per
 * `:generateContent` (Google: "Multiple candidates is not enabled" for image models), so `n` calls. An edit's input
 * images (`inputs`) go before the prompt text, as Google's image-editing examples send them; Imagen edits nothing
 * through the Gemini API (its editing model is on Vertex AI only), so an edit for it is refused.
 * Throws 400 for a model that makes no images or options it cannot honour.
 * @example planGoogleImages({ model: 'imagen', prompt: 'a fox', n: 2 }, 'imagen-4.0-generate-001').calls // 1
 */
export function planGoogleImages(body: ImageGeneration, upstreamModel: string, inputs?: InlineImage[]): GooglePlan {
	const spec = googleImageModel(upstreamModel)
	const endpoint = inputs ? '/v1/images/edits takes Gemini image models (…-image…)' : '/v1/images/generations takes Imagen models (imagen-…) and Gemini image models (…-image…)'
	if (!spec)
		throw new GatewayError('invalid_request', `The model "${body.model}" is served by a Gemini channel as "${upstreamModel}", which makes no images: ${endpoint}`, {
			code: 'unsupported_for_model',
			param: 'model',
		})
	if (inputs && spec.kind === 'imagen')
		throw new GatewayError(
			'invalid_request',
			`The model "${body.model}" (Imagen) cannot edit images through the Gemini API: Google offers Imagen editing on Vertex AI only (imagen-3.0-capability-001). Edit with a Gemini image model (e.g. gemini-2.5-flash-image), which edits by instruction`,
			{ code: 'unsupported_for_model', param: 'model' },
		)
	const output = checkGoogleOptions(body, body.model, spec)
	const fit = fitSize(body.size, body.model, spec)
	const n = body.n ?? 1
	const shape = { ...(fit.aspectRatio && { aspectRatio: fit.aspectRatio }), ...(fit.imageSize && { imageSize: fit.imageSize }) }
	if (spec.kind === 'imagen') {
		// sampleCount always: Imagen's own default is 4, OpenAI's n defaults to 1.
		const parameters = { sampleCount: n, ...shape, ...(output && { outputOptions: output }) }
		return { kind: 'imagen', model: upstreamModel, n, calls: 1, made: fit.made, body: JSON.stringify({ instances: [{ prompt: body.prompt }], parameters }) }
	}
	const generationConfig = { responseModalities: ['IMAGE'], ...(fit.aspectRatio && { imageConfig: shape }) }
	const parts = [...(inputs ?? []), { text: body.prompt }]
	return { kind: 'gemini', model: upstreamModel, n, calls: n, made: fit.made, body: JSON.stringify({ contents: [{ role: 'user', parts }], generationConfig }) }
}
