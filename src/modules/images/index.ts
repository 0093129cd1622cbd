/**
 * POST /v1/images/generations: passthrough to OpenAI-type channels (body forwarded with only `model` renamed),
 * priced per delivered image by size and quality (lookup order in passthrough/pricing.ts `imageUnitPrice`), or by the
 * tokens the upstream reports when the price list has no per-image price (gpt-image models).
 * @module
 */
import { Elysia } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { imageUnitPrice, requestFee, tokensCost } from '../../passthrough/pricing'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { channelUrl, jsonHeaders, withModel } from '../../passthrough/upstream'
import { checkSize } from '../../passthrough/validate'
import { countText } from '../../relay/estimate'
import type { Services } from '../../services'
import { ImagesRequest, ImagesResponse } from './model'

/** Output tokens one image may take at most (gpt-image-1 high quality 1536×1024 is 6,208), for the hold. */
const MAX_IMAGE_TOKENS = 6240

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

type ImagesAnswer = { data?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown }; [k: string]: unknown }

export const imagesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		'/v1/images/generations',
		({ body, token, requestId, startedAt, request }) => {
			checkSize(body.size)
			const n = body.n ?? 1
			const prompt = countText(body.prompt)
			const made = pricedAs(body.model, body.size, body.quality)
			return relayPassthrough({
				svc,
				token,
				requestId,
				startedAt,
				signal: request.signal,
				endpoint: '/v1/images/generations',
				model: body.model,
				types: ['openai'],
				hold(price) {
					const each = imageUnitPrice(price, made.size, made.quality)
					if (each !== undefined) return { want: each * n, min: each * n }
					const one = tokensCost(price, prompt, MAX_IMAGE_TOKENS)
					return { want: tokensCost(price, prompt, MAX_IMAGE_TOKENS * n), min: one }
				},
				request: (ch, upstreamModel) => ({ url: channelUrl(ch, '/images/generations'), headers: jsonHeaders(ch), body: JSON.stringify(withModel(body, upstreamModel)) }),
				async respond(res, _ch, _upstreamModel, price) {
					const json = await readJson<ImagesAnswer>(res)
					const delivered = Array.isArray(json.data) ? json.data.length : 0
					const each = imageUnitPrice(price, made.size, made.quality)
					const num = (v: unknown) => (typeof v === 'number' && v >= 0 ? v : undefined)
					const input = num(json.usage?.input_tokens)
					const output = num(json.usage?.output_tokens)
					let cost: number
					if (each !== undefined) cost = each * delivered
					else cost = tokensCost(price, input ?? prompt, output ?? 0) + requestFee(price)
					return { response: jsonResponse(json, requestId), cost, input: input ?? prompt, output: output ?? 0, estimated: input === undefined && each === undefined }
				},
			})
		},
		{
			body: ImagesRequest,
			response: { 200: ImagesResponse, ...openaiErrors },
			detail: {
				summary: 'Create images',
				description:
					'OpenAI image generation. Priced per delivered image: `per_image_<size>_<quality>`, `per_image_<size>`, `per_image_<quality>`, `per_image`, then `per_request`, then the highest `per_image_*` listed; without any, by the tokens the upstream reports.',
			},
		},
	)
