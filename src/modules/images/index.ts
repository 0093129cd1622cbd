/**
 * POST /v1/images/generations: passthrough to OpenAI-type channels (body forwarded with only `model` renamed),
 * priced per delivered image by size and quality (lookup order in passthrough/pricing.ts `imageUnitPrice`), or by the
 * tokens the upstream reports when the price list has no per-image price (gpt-image models). With `"stream": true`
 * the upstream's image events are relayed as they come and billed when the stream ends (stream.ts).
 * @module
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { channelUrl, jsonHeaders, withModel } from '../../passthrough/upstream'
import { checkSize } from '../../passthrough/validate'
import { countText } from '../../relay/estimate'
import type { Services } from '../../services'
import { ImagesRequest, ImagesResponse } from './model'
import { type ImageJob, imageCost, imageHold, pricedAs } from './pricing'
import { answerOfEvents, IMAGES_ENDPOINT, type ImagesAnswer, isEventStream, relayImageStream, tallyOf } from './stream'

export { pricedAs } from './pricing'

export const imagesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } }).use(modelAuth(svc)).post(
		IMAGES_ENDPOINT,
		({ body, token, requestId, startedAt, request }) => {
			checkSize(body.size)
			const job: ImageJob = { made: pricedAs(body.model, body.size, body.quality), n: body.n ?? 1, prompt: countText(body.prompt) }
			const ctx = { svc, token, requestId, startedAt, signal: request.signal }
			if (body.stream === true) return relayImageStream(ctx, body, job)
			return relayPassthrough({
				...ctx,
				endpoint: IMAGES_ENDPOINT,
				model: body.model,
				types: ['openai'],
				hold: (price) => imageHold(price, job),
				request: (ch, upstreamModel) => ({ url: channelUrl(ch, '/images/generations'), headers: jsonHeaders(ch), body: JSON.stringify(withModel(body, upstreamModel)) }),
				async respond(res, _ch, _upstreamModel, price) {
					// An event stream the request did not ask for is read to its end and answered as JSON (stream.ts).
					const json = isEventStream(res) && res.body ? await answerOfEvents(res.body) : await readJson<ImagesAnswer>(res)
					const c = imageCost(price, job, tallyOf(json))
					return { response: jsonResponse(json, requestId), cost: c.cost, input: c.input, output: c.output, estimated: c.estimated }
				},
			})
		},
		{
			body: ImagesRequest,
			response: { 200: ImagesResponse, ...openaiErrors },
			detail: {
				summary: 'Create images',
				description:
					'OpenAI image generation. Priced per delivered image: `per_image_<size>_<quality>`, `per_image_<size>`, `per_image_<quality>`, `per_image`, then `per_request`, then the highest `per_image_*` listed; without any, by the tokens the upstream reports. With `"stream": true` (GPT image models) the answer is `text/event-stream`: `image_generation.partial_image` and `image_generation.completed` events as the upstream sends them, billed from the completed events when the stream ends.',
			},
		},
	)
