/**
 * POST /v1/images/edits and /v1/images/variations (platform.openai.com/docs/api-reference/images/createEdit,
 * …/createVariation): the request is checked, then relayed to OpenAI-type channels as it came. A multipart body goes
 * on as multipart with every field, file and repeated `image[]` kept (form.ts), only `model` renamed; a JSON edit
 * (GPT image models: `images` by `image_url` or `file_id`) goes on as JSON. Priced as generations are (pricing.ts):
 * per image by size and quality, else by the tokens the upstream reports, which for an edit count the input images.
 * `stream: true` (GPT image models) relays `image_edit.partial_image` / `image_edit.completed` events (stream.ts).
 * Each checked edit also keeps its inputs as given (`edit`), for a Gemini image model's edit (google-edits.ts).
 * @module
 */
import { badRequest } from '../../core/errors'
import { authHeaders, jsonHeaders, openaiUrl, withModel } from '../../passthrough/upstream'
import { checkSize } from '../../passthrough/validate'
import { countText } from '../../relay/estimate'
import type { Channel } from '../../routing/catalog'
import { type FormView, valuesOf } from '../../http/form-view'
import { upstreamImageForm } from './form'
import { type ImageJob, pricedAs } from './pricing'
import type { ImageEventFamily } from './stream'

export const EDITS_ENDPOINT = '/v1/images/edits'
export const VARIATIONS_ENDPOINT = '/v1/images/variations'

/** Input images a GPT image model edits at most ("You can provide up to 16 images"). */
export const MAX_EDIT_IMAGES = 16

/** An input image of an edit as the client gave it (`at` names its field): an uploaded file, or a JSON reference. */
export type EditImage = { at: string } & ({ file: File } | { url: string } | { fileId: string })

/**
 * An edit as given, for an upstream that takes it in other terms (Gemini, google-edits.ts): the prompt, the input
 * images, whether a mask came, and the other options as a generation would name them (`n` and `stream` read).
 */
export type EditSource = { prompt: string; images: EditImage[]; mask: boolean; options: Record<string, unknown> & { n: number; stream: boolean } }

/** One checked edit or variation: what pricing needs, whether it streams, and its upstream call per channel. */
export type ImageCall = {
	endpoint: string
	family: ImageEventFamily
	model: string
	stream: boolean
	job: ImageJob
	request(ch: Channel, upstreamModel: string): { url: string; headers: Record<string, string>; body: BodyInit }
	/** An edit's own inputs (absent for a variation). */
	edit?: EditSource
}

/** `n` as sent (a number in JSON, text in a form): an integer 1–10, or absent. */
function countOf(v: unknown): number {
	if (v === undefined || v === null || v === '') return 1
	const n = typeof v === 'number' ? v : /^\d{1,2}$/.test(String(v)) ? Number(v) : Number.NaN
	if (!Number.isInteger(n) || n < 1 || n > 10) throw badRequest(`Invalid 'n': ${JSON.stringify(v)}. Expected an integer between 1 and 10.`, 'n')
	return n
}

/** `stream` as sent: JSON true/false/null, or the text `true`/`false` of a form field. */
function streamOf(v: unknown): boolean {
	if (v === undefined || v === null || v === false || v === 'false') return false
	if (v === true || v === 'true') return true
	throw badRequest(`Invalid 'stream': ${JSON.stringify(v)}. Expected true or false.`, 'stream')
}

const textOf = (v: unknown, name: string): string | undefined => {
	if (v === undefined || v === null) return undefined
	if (typeof v !== 'string') throw badRequest(`Invalid '${name}': expected a string.`, name)
	return v
}

/** An uploaded file that is there: a field given as text, or an empty file, is refused naming the field. */
function fileOf(v: unknown, name: string): File {
	if (!(v instanceof File)) throw badRequest(`Invalid '${name}': expected an image file (multipart/form-data upload), got text.`, name)
	if (v.size === 0) throw badRequest(`Invalid '${name}': the file "${v.name}" is empty.`, name)
	return v
}

/** The job pricing sees. */
function jobOf(model: string, view: { size?: string; quality?: string; n: number }, prompt: string, inputImages: number): ImageJob {
	return { made: pricedAs(model, view.size, view.quality), n: view.n, prompt: countText(prompt), inputImages }
}

/** A multipart edit: `image` or repeated `image[]` files (at most 16), an optional `mask` file. */
export function multipartEdit(view: FormView, form: FormData): ImageCall {
	const model = textOf(view.model, 'model') ?? ''
	const prompt = textOf(view.prompt, 'prompt') ?? ''
	const images = [...valuesOf(view, 'image'), ...valuesOf(view, 'image[]')]
	if (!images.length) throw badRequest("Missing required parameter: 'image' (the image file to edit; several as repeated 'image[]' fields).", 'image')
	if (images.length > MAX_EDIT_IMAGES) throw badRequest(`Too many images: ${images.length}. At most ${MAX_EDIT_IMAGES} may be edited at once.`, 'image')
	const at = view.image === undefined ? 'image[]' : 'image'
	const files = images.map((f) => fileOf(f, at))
	if (view.mask !== undefined) fileOf(Array.isArray(view.mask) ? view.mask[0] : view.mask, 'mask')
	const v = { n: countOf(view.n), size: textOf(view.size, 'size'), quality: textOf(view.quality, 'quality'), stream: streamOf(view.stream) }
	const call = checked(model, prompt, v, images.length, (ch, upstreamModel) => ({
		url: openaiUrl(ch, upstreamModel, '/images/edits'),
		headers: authHeaders(ch),
		body: upstreamImageForm(form, upstreamModel),
	}))
	// The text fields as given (the last of a repeated one), for an upstream that takes them by name.
	const fields = Object.fromEntries(Object.entries(view).flatMap(([k, x]) => (['image', 'image[]', 'mask'].includes(k) ? [] : [[k, Array.isArray(x) ? x.at(-1) : x]])))
	const edit: EditSource = { prompt, images: files.map((file) => ({ at, file })), mask: view.mask !== undefined, options: { ...fields, model, prompt, ...v } }
	return { ...call, edit }
}

/** An image of a JSON edit: exactly one of `image_url` and `file_id`, a non-empty string. */
function checkRef(ref: unknown, at: string) {
	const r = (ref ?? {}) as { image_url?: unknown; file_id?: unknown }
	const given = [r.image_url, r.file_id].filter((x) => x !== undefined && x !== null)
	const ok = typeof ref === 'object' && ref !== null && !Array.isArray(ref) && given.length === 1 && typeof given[0] === 'string' && given[0] !== ''
	if (!ok) throw badRequest(`Invalid '${at}': expected an object with exactly one of 'image_url' (a URL or data URL) and 'file_id'.`, at)
}

/** A JSON edit (GPT image models): `images` (1–16 references) and an optional `mask` reference. */
export function jsonEdit(body: Record<string, unknown>): ImageCall {
	const model = textOf(body.model, 'model') ?? ''
	const prompt = textOf(body.prompt, 'prompt') ?? ''
	const images = body.images
	if (!Array.isArray(images) || images.length === 0)
		throw badRequest("Missing required parameter: 'images' (a JSON edit names its images as [{\"image_url\": …} or {\"file_id\": …}]; or upload them as multipart 'image' files).", 'images')
	if (images.length > MAX_EDIT_IMAGES) throw badRequest(`Too many images: ${images.length}. At most ${MAX_EDIT_IMAGES} may be edited at once.`, 'images')
	images.forEach((r, i) => checkRef(r, `images[${i}]`))
	const mask = body.mask !== undefined && body.mask !== null
	if (mask) checkRef(body.mask, 'mask')
	const v = { n: countOf(body.n), size: textOf(body.size, 'size'), quality: textOf(body.quality, 'quality'), stream: streamOf(body.stream) }
	const call = checked(model, prompt, v, images.length, (ch, upstreamModel) => ({
		url: openaiUrl(ch, upstreamModel, '/images/edits'),
		headers: jsonHeaders(ch),
		body: JSON.stringify(withModel(body, upstreamModel)),
	}))
	const refs = (images as Array<{ image_url?: string; file_id?: string }>).map((r, i): EditImage => {
		const at = `images[${i}]`
		return typeof r.image_url === 'string' ? { at: `${at}.image_url`, url: r.image_url } : { at: `${at}.file_id`, fileId: r.file_id! }
	})
	const { images: _, mask: __, ...rest } = body
	return { ...call, edit: { prompt, images: refs, mask, options: { ...rest, model, prompt, ...v } } }
}

function checked(model: string, prompt: string, v: { n: number; size?: string; quality?: string; stream: boolean }, inputImages: number, request: ImageCall['request']): ImageCall {
	if (!model) throw badRequest("Missing required parameter: 'model' (dall-e-2 or a GPT image model).", 'model')
	if (!prompt) throw badRequest("Missing required parameter: 'prompt'.", 'prompt')
	checkSize(v.size)
	return { endpoint: EDITS_ENDPOINT, family: 'image_edit', model, stream: v.stream, job: jobOf(model, v, prompt, inputImages), request }
}

/**
 * A variation (multipart only): one `image` file; the model defaults to dall-e-2, the only one the endpoint serves.
 * No prompt, no stream.
 */
export function variation(view: FormView | undefined, form: FormData | undefined): ImageCall {
	if (!view || !form) throw badRequest("Image variations take multipart/form-data with the image as an 'image' file.", 'image')
	const model = textOf(view.model, 'model') || 'dall-e-2'
	const images = valuesOf(view, 'image')
	if (images.length !== 1) throw badRequest(images.length ? "Only one 'image' may be varied at once." : "Missing required parameter: 'image' (the image file to vary).", 'image')
	fileOf(images[0], 'image')
	if (view.stream !== undefined) throw badRequest("Unknown parameter: 'stream'. Image variations do not stream.", 'stream')
	const size = textOf(view.size, 'size')
	checkSize(size)
	const n = countOf(view.n)
	return {
		endpoint: VARIATIONS_ENDPOINT,
		family: 'image_generation',
		model,
		stream: false,
		job: jobOf(model, { size, n }, '', 1),
		request: (ch, upstreamModel) => ({ url: openaiUrl(ch, upstreamModel, '/images/variations'), headers: authHeaders(ch), body: upstreamImageForm(form, upstreamModel) }),
	}
}
