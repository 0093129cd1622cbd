/**
 * POST /v1/images/generations, /v1/images/edits and /v1/images/variations: passthrough to OpenAI-type channels
 * (generations: the body forwarded with only `model` renamed; edits and variations: edits.ts), priced per delivered
 * image by size and quality (lookup order in passthrough/pricing.ts `imageUnitPrice`), or by the tokens the upstream
 * reports when the price list has no per-image price (gpt-image models). With `"stream": true` the upstream's image
 * events are relayed as they come and billed when the stream ends (stream.ts). A generation for a model only Gemini
 * channels serve (Imagen, Gemini's image models) is converted to Google's methods and back (google.ts), and so is an
 * edit on a Gemini image model (google-edits.ts).
 * @module
 */
import { Elysia } from 'elysia'
import { modelAuth } from '../../http/model-auth'
import { type CallContext, jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { OPENAI_TYPES, jsonHeaders, openaiUrl, withModel } from '../../passthrough/upstream'
import { checkSize } from '../../passthrough/validate'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { resolveModel, type Route } from '../../relay/budget'
import { countText } from '../../relay/estimate'
import type { Channel } from '../../routing/catalog'
import type { Services } from '../../services'
import { type ImageCall, jsonEdit, multipartEdit, variation } from './edits'
import { formOf, type FormView, readPlainForm } from '../../http/form-view'
import { relayGoogleImages } from './google'
import { relayGoogleEdit } from './google-edits'
import { checkFileIds } from '../batches/refs'
import { ImageEditRequest, imageModelOf, ImagesRequest, ImagesResponse, ImageVariationRequest } from './model'
import { type ImageJob, imageCost, imageHold, pricedAs } from './pricing'
import { answerOfEvents, IMAGES_ENDPOINT, type ImagesAnswer, isEventStream, relayImageStream, tallyOf } from './stream'

export { pricedAs } from './pricing'

const uploadErrors = { ...openaiErrors, 413: OpenAIErrorBody }

/**
 * Edits and variations are checked (edits.ts) in the transform step, before the schema: their own messages say what
 * an image field must be ("expected an image file"), where the schema's would say "Expected kind 'File'". The
 * checked call is kept for the handler.
 */
const checkedCalls = new WeakMap<Request, ImageCall>()
const editOf = (body: unknown, request: Request): ImageCall => {
	const form = formOf(request)
	return form ? multipartEdit(body as FormView, form) : jsonEdit((body ?? {}) as Record<string, unknown>)
}
const variationOf = (body: unknown, request: Request): ImageCall => variation(formOf(request) && (body as FormView), formOf(request))

/** The file ids a JSON edit names (`images[i].file_id`, `mask.file_id`). */
const jsonFileIds = (call: ImageCall, json: { mask?: { file_id?: unknown } } | undefined): Array<{ id: string; param: string }> => {
	const named = (call.edit?.images ?? []).flatMap((i) => ('fileId' in i ? [{ id: i.fileId, param: i.at }] : []))
	const mask = json?.mask?.file_id
	if (typeof mask === 'string') named.push({ id: mask, param: 'mask.file_id' })
	return named
}

/** Whether Google's methods serve a model: Gemini channels serve it and no OpenAI-type channel does. */
const servedByGoogle = (route: Route): boolean => route.channels.some((c) => c.type === 'gemini') && !route.channels.some((c) => OPENAI_TYPES.includes(c.type))

/** Relays one image call, streamed or JSON; always answers (errors in OpenAI's shape). */
function relayImages(ctx: CallContext, call: ImageCall): Promise<Response> {
	const { job } = call
	if (call.stream) return relayImageStream(ctx, call, job)
	return relayPassthrough({
		...ctx,
		endpoint: call.endpoint,
		model: call.model,
		types: OPENAI_TYPES,
		hold: (price) => imageHold(price, job),
		request: call.request,
		async respond(res, _ch, _upstreamModel, price) {
			// An event stream the request did not ask for is read to its end and answered as JSON (stream.ts).
			const json = isEventStream(res) && res.body ? await answerOfEvents(res.body) : await readJson<ImagesAnswer>(res)
			const c = imageCost(price, job, tallyOf(json))
			return { response: jsonResponse(json, ctx.requestId), cost: c.cost, input: c.input, output: c.output, estimated: c.estimated }
		},
	})
}

export const imagesModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		.use(modelAuth(svc))
		.post(
			IMAGES_ENDPOINT,
			({ body: sent, token, requestId, startedAt, request }) => {
				checkSize(sent.size)
				const body = { ...sent, model: imageModelOf(sent) }
				const ctx = { svc, token, requestId, startedAt, signal: request.signal }
				// Google's image models answer in their own terms (google.ts); a model any OpenAI-type channel serves stays on those.
				const route = resolveModel(svc, token, body.model)
				if (servedByGoogle(route)) return relayGoogleImages(ctx, body, route)
				const job: ImageJob = { made: pricedAs(body.model, body.size, body.quality), n: body.n ?? 1, prompt: countText(body.prompt) }
				const req = (ch: Channel, upstreamModel: string) => ({ url: openaiUrl(ch, upstreamModel, '/images/generations'), headers: jsonHeaders(ch), body: JSON.stringify(withModel(body, upstreamModel)) })
				const call: ImageCall = { endpoint: IMAGES_ENDPOINT, family: 'image_generation', model: body.model, stream: body.stream === true, job, request: req }
				return relayImages(ctx, call)
			},
			{
				body: ImagesRequest,
				response: { 200: ImagesResponse, ...openaiErrors },
				detail: {
					summary: 'Create images',
					description:
						'OpenAI image generation. Priced per delivered image: `per_image_<size>_<quality>`, `per_image_<size>`, `per_image_<quality>`, `per_image`, then `per_request`, then the highest `per_image_*` listed; without any, by the tokens the upstream reports. With `"stream": true` (GPT image models) the answer is `text/event-stream`: `image_generation.partial_image` and `image_generation.completed` events as the upstream sends them, billed from the completed events when the stream ends. A model served by Gemini channels (and no OpenAI-type one) is converted: Imagen models to `:predict` (`n` as `sampleCount`, at most 4; priced per image), Gemini image models to one `:generateContent` per image with `responseModalities: ["IMAGE"]` (priced per image when listed, else by the reported tokens); `size` becomes the nearest aspect ratio and `imageSize` the model makes, and `response_format: "url"`, `stream`, `style`, `quality` other than auto/standard and other options Google lacks are 400.',
				},
			},
		)
		.post(
			'/v1/images/edits',
			async ({ body, token, requestId, startedAt, request }) => {
				const call = checkedCalls.get(request) ?? editOf(body, request)
				const ctx = { svc, token, requestId, startedAt, signal: request.signal }
				// Gemini image models edit through :generateContent (google-edits.ts), decided as generations decide.
				const route = resolveModel(svc, token, call.model)
				if (call.edit && servedByGoogle(route)) return relayGoogleEdit(ctx, call.edit, route)
				// Files named by id must be the account's: every account shares the channel's key (batches/refs.ts).
				const named = jsonFileIds(call, formOf(request) ? undefined : (body as { mask?: { file_id?: unknown } } | undefined))
				if (named.length) await checkFileIds(svc, token.accountId, named)
				return relayImages(ctx, call)
			},
			{
				parse: readPlainForm,
				transform: ({ body, request }) => void checkedCalls.set(request, editOf(body, request)),
				body: ImageEditRequest,
				response: { 200: ImagesResponse, ...uploadErrors },
				detail: {
					summary: 'Edit images',
					description:
						'OpenAI image edits. multipart/form-data (limit MAX_UPLOAD_BYTES): `image` (dall-e-2: one square PNG), or up to 16 images as repeated `image[]` files (GPT image models), optional `mask` file; forwarded field by field with the files unchanged. GPT image models also take JSON (`application/json`) with `images: [{"image_url": …} | {"file_id": …}]` and an optional `mask` reference. Priced as generations: per image by size and quality, else by the tokens the upstream reports (input images included). With `stream: true` (GPT image models) the answer is `text/event-stream`: `image_edit.partial_image` and `image_edit.completed` events, billed from the completed events. A Gemini image model served by Gemini channels (and no OpenAI-type one) is converted: the images (files, `data:` URLs, or web URLs fetched under the outbound guard) go as `inlineData` parts before the prompt to one `:generateContent` per image, billed by the tokens Google reports (input images at `image_input_per_mtok` when listed); a `mask`, an Imagen model (its editing is on Vertex AI only), a `file_id`, `stream` and `response_format: "url"` are 400.',
				},
			},
		)
		.post(
			'/v1/images/variations',
			({ body, token, requestId, startedAt, request }) =>
				relayImages({ svc, token, requestId, startedAt, signal: request.signal }, checkedCalls.get(request) ?? variationOf(body, request)),
			{
				parse: readPlainForm,
				transform: ({ body, request }) => void checkedCalls.set(request, variationOf(body, request)),
				body: ImageVariationRequest,
				response: { 200: ImagesResponse, ...uploadErrors },
				detail: {
					summary: 'Create image variations',
					description:
						'OpenAI image variations (dall-e-2, the default model): multipart/form-data with one `image` file (limit MAX_UPLOAD_BYTES), forwarded field by field with the file unchanged. Priced per image by size (`per_image_<size>`, `per_image`, `per_request`).',
				},
			},
		)
