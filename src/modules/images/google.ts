/**
 * POST /v1/images/generations for a model Gemini channels serve: the request goes to Google in its own terms
 * (google-params.ts) and the images come back in OpenAI's shape, `{ created, data: [{ b64_json }], usage? }`.
 * - Imagen (`:predict`): `predictions[].bytesBase64Encoded` are the images; priced per image as the native
 *   `:predict` route prices them (modules/gemini/predict.ts: `per_image_<WxH>` for a square, else `per_image`, else
 *   `per_request`), charged for the images returned (one the safety filter withheld costs nothing).
 * - Gemini image models (`:generateContent`): the `inlineData` image parts of each answer (a thought's draft images
 *   excluded), one call per image; priced per image when the model lists an image price, else by the tokens
 *   `usageMetadata` reports (image output at `image_output_per_mtok`), summed over the calls that made an image.
 * The hold covers all `n` images (402 otherwise). No image at all is OpenAI's 400 `content_policy_violation`, not
 * charged.
 * @module
 */
import { upperBound, tokenCost } from '../../billing/pricing'
import { GatewayError } from '../../core/errors'
import { emptyUsage, type Usage } from '../../core/ir'
import { imageUnitPrice } from '../../passthrough/pricing'
import { type Answer, type CallContext, jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { jsonHeaders } from '../../passthrough/upstream'
import { decodeUsage } from '../../protocols/gemini/usage'
import { geminiMethodUrl } from '../../providers/native-endpoints'
import { upstreamError } from '../../providers/upstream-error'
import type { Route } from '../../relay/budget'
import { countText } from '../../relay/estimate'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Channel, ModelInfo } from '../../routing/catalog'
import { perImage } from '../gemini/predict'
import { EDITS_ENDPOINT } from './edits'
import { type GooglePlan, type InlineImage, planGoogleImages } from './google-params'
import type { ImageGeneration } from './model'
import { MAX_IMAGE_TOKENS } from './pricing'
import { IMAGES_ENDPOINT } from './stream'

/** Output tokens Google documents for one 1024x1024 image of Gemini 2.5 Flash Image: the estimate when an answer reports no usage. */
const GEMINI_IMAGE_TOKENS = 1290

/** The reach of a Gemini image call's bound: no audio, no 1-hour cache writes (image output needs no flag). */
const IMAGE_REACH = { audioInput: false, audioOutput: false, cacheWriteLong: false }

type Image = { b64: string; mimeType?: string }

/** micro-USD to hold for one plan: every image at its unit price, else each call's prompt plus an image's most tokens. */
function planHold(price: ModelInfo, model: string, plan: GooglePlan, prompt: number): number {
	if (plan.kind === 'imagen') return perImage(price, model, plan.made) * plan.n
	const each = imageUnitPrice(price, plan.made)
	if (each !== undefined) return each * plan.n
	return upperBound(prompt * plan.calls, MAX_IMAGE_TOKENS * plan.calls, price, IMAGE_REACH)
}

/** Imagen's images: the predictions with bytes (a withheld one has only `raiFilteredReason`). */
function imagenImages(body: { predictions?: unknown }): Image[] {
	const out: Image[] = []
	for (const p of Array.isArray(body.predictions) ? body.predictions : []) {
		const b64 = (p as { bytesBase64Encoded?: unknown })?.bytesBase64Encoded
		if (typeof b64 === 'string' && b64) out.push({ b64, mimeType: (p as { mimeType?: string }).mimeType })
	}
	return out
}

type GeminiAnswer = { candidates?: Array<{ finishReason?: string; content?: { parts?: unknown[] } }>; usageMetadata?: unknown; promptFeedback?: { blockReason?: string } }

/** A Gemini answer's images: `inlineData` image parts of its first candidate, less a thinking model's draft (`thought`) images. */
function geminiImages(body: GeminiAnswer): Image[] {
	const out: Image[] = []
	for (const part of body.candidates?.[0]?.content?.parts ?? []) {
		const p = part as { thought?: unknown; inlineData?: { mimeType?: unknown; data?: unknown } }
		const data = p.inlineData?.data
		const mimeType = typeof p.inlineData?.mimeType === 'string' ? p.inlineData.mimeType : undefined
		if (p.thought !== true && typeof data === 'string' && data && (!mimeType || mimeType.startsWith('image/'))) out.push({ b64: data, mimeType })
	}
	return out
}

/** Why a Gemini answer has no image, for the 400. */
const whyNone = (body: GeminiAnswer): string => body.promptFeedback?.blockReason ?? body.candidates?.[0]?.finishReason ?? 'no image part'

const noImage = (model: string, why: string) =>
	new GatewayError('invalid_request', `${model} made no image for this prompt (Google: ${why}); it may have been refused by Google's safety filters`, { code: 'content_policy_violation' })

/** OpenAI's `output_format` of the images made, from their MIME type. */
const formatOf = (images: Image[]): string | undefined => images[0]?.mimeType?.replace(/^image\//, '')

const answerOf = (requestId: string, images: Image[], extra: Record<string, unknown> = {}): Response => {
	const format = formatOf(images)
	return jsonResponse({ created: Math.floor(Date.now() / 1000), data: images.map((i) => ({ b64_json: i.b64 })), ...(format && { output_format: format }), ...extra }, requestId)
}

/** One more `:generateContent` on the channel that answered the first. */
async function callAgain(ctx: CallContext, ch: Channel, plan: GooglePlan): Promise<GeminiAnswer> {
	const { res } = await fetchUpstream(geminiMethodUrl(ch, plan.model, 'generateContent'), { headers: jsonHeaders(ch), body: plan.body }, channelTimeouts(ch.settings, 'answer'), ctx.signal)
	if (!res.ok) throw upstreamError(res.status, await res.text().catch(() => ''), res.headers)
	return readJson<GeminiAnswer>(res)
}

/**
 * The `n` images of a Gemini image model: the relay's call, then the other `n - 1` at once on the same channel. The
 * first goes alone so that a failing channel costs one call before failover, not `n`. A later call that fails leaves
 * the images the others made (fewer than `n`, as Imagen answers when its filter withholds some); when none made one,
 * the first failure (or the 400 for no image) is the answer.
 */
async function geminiAnswer(ctx: CallContext, model: string, plan: GooglePlan, first: GeminiAnswer, ch: Channel, price: ModelInfo, prompt: number, inputImageTokens: number): Promise<Answer> {
	const rest = await Promise.allSettled(Array.from({ length: plan.calls - 1 }, () => callAgain(ctx, ch, plan)))
	const answers = [first, ...rest.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))]
	const images: Image[] = []
	let usage: Usage = emptyUsage()
	let prompted = 0
	let estimated = false
	for (const a of answers) {
		const made = geminiImages(a)
		if (!made.length) continue
		images.push(...made)
		// Only calls that made an image are charged, as Imagen charges none for a withheld image.
		// The codec's usage carries the input images Google reports (`promptTokensDetails` IMAGE, less cache reads): the
		// part of an edit's input priced at `image_input_per_mtok` when the model lists one.
		const decoded = decodeUsage(a.usageMetadata)
		if (!decoded) estimated = true
		const add = decoded ?? {
			...emptyUsage(),
			input: prompt + inputImageTokens,
			imageInput: inputImageTokens,
			output: GEMINI_IMAGE_TOKENS * made.length,
			imageOutput: GEMINI_IMAGE_TOKENS * made.length,
		}
		usage = sumUsage(usage, add)
		prompted += add.input + add.cacheRead
	}
	if (!images.length) {
		const failed = rest.find((r) => r.status === 'rejected')
		throw failed ? (failed.reason as GatewayError) : noImage(model, whyNone(first))
	}
	const each = imageUnitPrice(price, plan.made)
	const cost = each !== undefined ? each * images.length : tokenCost(usage, price)
	const imageIn = usage.imageInput ?? 0
	const openaiUsage = { input_tokens: prompted, output_tokens: usage.output, total_tokens: prompted + usage.output, input_tokens_details: { text_tokens: prompted - imageIn, image_tokens: imageIn } }
	return { response: answerOf(ctx.requestId, images, { usage: openaiUsage }), cost, input: usage.input + usage.cacheRead, output: usage.output, estimated }
}

const sumUsage = (a: Usage, b: Usage): Usage => ({
	input: a.input + b.input,
	output: a.output + b.output,
	cacheRead: a.cacheRead + b.cacheRead,
	cacheWrite: a.cacheWrite + b.cacheWrite,
	reasoning: a.reasoning + b.reasoning,
	imageInput: (a.imageInput ?? 0) + (b.imageInput ?? 0),
	imageOutput: (a.imageOutput ?? 0) + (b.imageOutput ?? 0),
	audioOutput: (a.audioOutput ?? 0) + (b.audioOutput ?? 0),
})

/** An edit's input images for Gemini: the parts, and the input tokens they may take at most (for the hold). */
export type GoogleEditInput = { inputs: InlineImage[]; imageTokens: number }

/**
 * The Gemini channels of `route` that can make this request, each with its plan (by its upstream model name); a
 * request no channel can take throws the first refusal (a 400), before any hold.
 */
export function googlePlans(body: ImageGeneration, route: Route, inputs?: InlineImage[]): Map<number, GooglePlan> {
	const plans = new Map<number, GooglePlan>()
	let refusal: unknown
	for (const ch of route.channels) {
		if (ch.type !== 'gemini') continue
		try {
			plans.set(ch.id, planGoogleImages(body, ch.modelMap[body.model] ?? body.model, inputs))
		} catch (e) {
			refusal ??= e
		}
	}
	if (!plans.size) throw refusal
	return plans
}

/**
 * Relays an OpenAI image generation, or an edit (`edit`: its input images go before the prompt), to the route's Gemini
 * channels. Each channel's plan is made first, so a request no channel can take is a 400 before any hold; channels
 * that cannot take it are skipped.
 */
export function relayGoogleImages(ctx: CallContext, body: ImageGeneration, route: Route, edit?: GoogleEditInput): Promise<Response> {
	const plans = googlePlans(body, route, edit?.inputs)
	const text = countText(body.prompt)
	// An edit's input images count as input tokens on every call.
	const prompt = text + (edit?.imageTokens ?? 0)
	return relayPassthrough({
		...ctx,
		endpoint: edit ? EDITS_ENDPOINT : IMAGES_ENDPOINT,
		model: body.model,
		types: ['gemini'],
		route,
		pin: (ch) => plans.has(ch.id),
		hold(price) {
			const all = Math.max(...[...plans.values()].map((p) => planHold(price, body.model, p, prompt)))
			return { want: all, min: all }
		},
		request(ch) {
			const plan = plans.get(ch.id)!
			return { url: geminiMethodUrl(ch, plan.model, plan.kind === 'imagen' ? 'predict' : 'generateContent'), headers: jsonHeaders(ch), body: plan.body }
		},
		async respond(res, ch, _upstreamModel, price) {
			const plan = plans.get(ch.id)!
			if (plan.kind === 'gemini') return geminiAnswer(ctx, body.model, plan, await readJson<GeminiAnswer>(res), ch, price, text, edit?.imageTokens ?? 0)
			const images = imagenImages(await readJson<{ predictions?: unknown }>(res))
			if (!images.length) throw noImage(body.model, 'every image withheld by its safety filter')
			return { response: answerOf(ctx.requestId, images), cost: perImage(price, body.model, plan.made) * images.length }
		},
	})
}
