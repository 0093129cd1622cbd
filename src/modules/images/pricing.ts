/**
 * What an image generation holds and costs, shared by the JSON answer and the streamed one (stream.ts): per delivered
 * image by size and quality (passthrough/pricing.ts `imageUnitPrice`), or by the tokens the upstream reports when the
 * price list has no per-image price (gpt-image models).
 * @module
 */
import { type Price, tokenCost } from '../../billing/pricing'
import { emptyUsage } from '../../core/ir'
import { imageUnitPrice, requestFee } from '../../passthrough/pricing'

/** Output tokens one image may take at most (gpt-image-1 high quality 1536×1024 is 6,208), for the hold. */
export const MAX_IMAGE_TOKENS = 6240

/**
 * The size and quality a dall-e model makes when the request leaves them out (OpenAI's image API reference: 1024x1024
 * for dall-e-2 and dall-e-3; quality `standard`, also what dall-e-3's `auto` picks), so such an image is priced as
 * what it is, not at the plain or the dearest per_image price. gpt-image models choose for `auto` themselves: theirs
 * stay unknown.
 * @example pricedAs('dall-e-3') // { size: '1024x1024', quality: 'standard' }
 */
export function pricedAs(model: string, size?: string, quality?: string): { size?: string; quality?: string } {
	if (!/^dall-e-[23](?![\w.])/.test(model)) return { size, quality }
	return { size: size && size !== 'auto' ? size : '1024x1024', quality: quality && quality !== 'auto' ? quality : 'standard' }
}

/**
 * Input tokens one input image of an edit or variation may add, for the hold only (the charge is the tokens the
 * upstream reports): the most output tokens an image takes stands in for a large input image at high fidelity.
 */
export const INPUT_IMAGE_TOKENS = MAX_IMAGE_TOKENS

/**
 * One image request as pricing sees it: what it makes (`pricedAs`), how many, its prompt's tokens, and the images it
 * takes in (edits, variations), which the hold allows for.
 */
export type ImageJob = { made: { size?: string; quality?: string }; n: number; prompt: number; inputImages?: number }

/**
 * What the upstream delivered: whole images, and the tokens it reported (absent when it reported none); `imageInput`
 * is the part of `input` that was input images (`input_tokens_details.image_tokens`).
 */
export type ImageTally = { images: number; input?: number; imageInput?: number; output?: number; made?: { size?: string; quality?: string } }

/**
 * The token part of a price: the input images at `image_input_per_mtok` when the model lists it (gpt-image-1: $10
 * against $5 for the prompt's text), the rest of the input at the input price, the output at the output price.
 */
const tokensCost = (price: Price, input: number, imageInput: number, output: number): number =>
	input <= 0 && output <= 0 ? 0 : tokenCost({ ...emptyUsage(), input, imageInput, output }, { ...price, perRequest: 0 })

/** micro-USD to hold: every image at its unit price, or at the most output tokens an image may take. */
export function imageHold(price: Price, job: ImageJob): { want: number; min: number } {
	const each = imageUnitPrice(price, job.made.size, job.made.quality)
	if (each !== undefined) return { want: each * job.n, min: each * job.n }
	const images = (job.inputImages ?? 0) * INPUT_IMAGE_TOKENS
	const input = job.prompt + images
	const one = tokensCost(price, input, images, MAX_IMAGE_TOKENS)
	return { want: tokensCost(price, input, images, MAX_IMAGE_TOKENS * job.n), min: one }
}

/**
 * The charge for what was delivered: each image at the unit price of the size and quality it was made at (the answer's
 * `size` and `quality`, GPT image models: "the quality of the image generated"; else as asked); else the reported tokens (the prompt counted
 * locally, and then marked estimated, when the upstream reported none) plus the per-request fee.
 * @example imageCost(p, job, { images: 1, input: 10, output: 272 })
 */
export function imageCost(price: Price, job: ImageJob, t: ImageTally): { cost: number; input: number; output: number; estimated: boolean } {
	// What the answer says was made wins over what was asked: a GPT image model picks the size and quality of `auto`.
	const each = imageUnitPrice(price, t.made?.size ?? job.made.size, t.made?.quality ?? job.made.quality)
	const input = t.input ?? job.prompt
	const output = t.output ?? 0
	if (each !== undefined) return { cost: each * t.images, input, output, estimated: false }
	const imageInput = t.input === undefined ? 0 : (t.imageInput ?? 0)
	return { cost: tokensCost(price, input, imageInput, output) + requestFee(price), input, output, estimated: t.input === undefined }
}
