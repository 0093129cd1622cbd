/**
 * Imagen's `:predict` (ai.google.dev/gemini-api/docs/imagen): `{ instances: [{ prompt }], parameters: { sampleCount,
 * aspectRatio, imageSize, … } }` goes verbatim to a Gemini channel (the model is in the path, renamed by model_map),
 * and its `{ predictions: [{ bytesBase64Encoded, mimeType } | { raiFilteredReason }] }` comes back as sent.
 * Priced per image as OpenAI images are (`per_image_<WxH>` for a square image, `per_image`, `per_request`;
 * passthrough/pricing.ts),
 * charged for the images returned: an image the safety filter withheld costs nothing, a failed call nothing at all.
 * The hold covers `sampleCount` images per instance (Imagen's default is 4).
 * @module
 */
import { GatewayError } from '../../core/errors'
import { hasTokenPrice, imageUnitPrice } from '../../passthrough/pricing'
import { readJson, relayPassthrough } from '../../passthrough/relay'
import { geminiMethodUrl } from '../../providers/native-endpoints'
import { jsonHeaders } from '../../passthrough/upstream'
import type { ModelInfo } from '../../routing/catalog'
import type { ModelCall } from './generate'
import { checkBody } from './target'
import { PredictRequest } from './predict-model'

/** Images Imagen makes when `sampleCount` is left out. */
export const DEFAULT_IMAGE_SAMPLES = 4

/**
 * The pixel size of a square image (`aspectRatio` 1:1, Imagen's default) by `imageSize` (1K, the default, or 2K), so
 * it is priced `per_image_<WxH>` as OpenAI images are; other aspect ratios are priced `per_image`.
 * @example squareSize({}) // '1024x1024'
 */
export function squareSize(parameters: { aspectRatio?: unknown; imageSize?: unknown } = {}): string | undefined {
	if (parameters.aspectRatio !== undefined && parameters.aspectRatio !== '1:1') return undefined
	return parameters.imageSize === '2K' ? '2048x2048' : parameters.imageSize === undefined || parameters.imageSize === '1K' ? '1024x1024' : undefined
}

/** micro-USD per image; a model priced by tokens alone cannot price Imagen's images (they report no tokens). */
export function perImage(price: ModelInfo, model: string, size: string | undefined): number {
	const each = imageUnitPrice(price, size)
	if (each !== undefined) return each
	if (hasTokenPrice(price)) throw new GatewayError('permission', `The model "${model}" has no per-image price configured (per_image); ask an administrator`, { code: 'model_not_priced' })
	return 0
}

/** Predictions that carry an image (a withheld one has only `raiFilteredReason`). */
const delivered = (body: { predictions?: unknown }): number =>
	Array.isArray(body.predictions) ? body.predictions.filter((p) => p && typeof p === 'object' && typeof (p as { bytesBase64Encoded?: unknown }).bytesBase64Encoded === 'string' && (p as { bytesBase64Encoded: string }).bytesBase64Encoded !== '').length : 0

export function predictImages(c: ModelCall, body: unknown): Promise<Response> {
	const wire = checkBody(PredictRequest, body)
	const n = (wire.parameters?.sampleCount ?? DEFAULT_IMAGE_SAMPLES) * wire.instances.length
	const size = squareSize(wire.parameters)
	const text = JSON.stringify(wire)
	return relayPassthrough({
		svc: c.svc,
		token: c.token,
		requestId: c.requestId,
		startedAt: c.startedAt,
		signal: c.request.signal,
		endpoint: `${c.version}/models/{model}:predict`,
		model: c.model,
		types: ['gemini'],
		shape: 'gemini',
		hold: (price) => {
			const all = perImage(price, c.model, size) * n
			return { want: all, min: all }
		},
		request: (ch, upstreamModel) => ({ url: geminiMethodUrl(ch, upstreamModel, 'predict'), headers: jsonHeaders(ch), body: text }),
		async respond(res, _ch, _upstreamModel, price) {
			// The answer goes back byte for byte; it is read only to count its images.
			const raw = await res.text().catch(() => '')
			const images = delivered(await readJson<{ predictions?: unknown }>(new Response(raw)))
			return { response: new Response(raw, { status: 200, headers: { 'content-type': 'application/json', 'x-request-id': c.requestId } }), cost: perImage(price, c.model, size) * images }
		},
	})
}
