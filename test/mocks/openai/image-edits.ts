/**
 * POST /v1/images/edits and /v1/images/variations as OpenAI's image API reference documents them
 * (platform.openai.com/docs/api-reference/images/createEdit, …/createVariation):
 * - edits: multipart with `image` (one file) or repeated `image[]` files (GPT image models, up to 16), an optional
 *   `mask` file, `prompt`; or, for GPT image models only, JSON with `images: [{image_url}|{file_id}]` and `mask`.
 *   The model defaults to dall-e-2, which takes one square PNG and no JSON. GPT image models answer b64_json with
 *   usage (input tokens: the prompt's words plus 194 per input image; 272 output tokens per image) and stream
 *   `image_edit.partial_image` / `image_edit.completed` events.
 * - variations: multipart with one `image` file (PNG), dall-e-2 only; `n` 1–10, sizes 256/512/1024 square.
 * @module
 */

import { asStr, type Obj } from '../shared/json'
import { frame, json, type Reply, sse } from '../shared/reply'
import { countWords, stableId, unixNow } from '../shared/text'
import { openaiError } from './errors'
import { PNG_1X1, renderedSettings } from './media'

/** Input tokens the mock counts per input image of a GPT image edit. */
export const EDIT_IMAGE_TOKENS = 194

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47]
const DALL_E_SIZES = ['256x256', '512x512', '1024x1024']
const GPT_SIZES = ['1024x1024', '1536x1024', '1024x1536', 'auto']

const missing = (name: string) => openaiError(400, `Missing required parameter: '${name}'.`, name, 'missing_required_parameter')
const invalid = (param: string, message: string) => openaiError(400, message, param, 'invalid_value')

async function isPng(f: File): Promise<boolean> {
	const head = new Uint8Array(await f.slice(0, 4).arrayBuffer())
	return PNG_MAGIC.every((b, i) => head[i] === b)
}

/** The request's fields as text (a multipart form's text fields, or a JSON body's values). */
type Fields = { get(name: string): unknown }

function countOf(fields: Fields): number | Reply {
	const raw = fields.get('n')
	const n = raw === undefined || raw === null ? 1 : Number(raw)
	if (!Number.isInteger(n) || n < 1 || n > 10) return invalid('n', `Invalid 'n': expected an integer between 1 and 10, but got ${String(raw)} instead.`)
	return n
}

function images(model: string, prompt: string, n: number, inputs: number, format: string, origin: string, fields: Fields): Reply {
	const gptImage = model.startsWith('gpt-image')
	const seed = stableId('edit-', `${model}|${prompt}|${inputs}`, 16)
	const data = Array.from({ length: n }, (_, i) => (gptImage || format === 'b64_json' ? { b64_json: PNG_1X1 } : { url: `${origin}/v1/mock-files/${seed}-${i}.png` }))
	const out: Obj = { created: unixNow(), data }
	if (gptImage) {
		Object.assign(out, renderedSettings(fields.get('size'), fields.get('quality'), fields.get('output_format')))
		const text = countWords(prompt)
		const image = EDIT_IMAGE_TOKENS * inputs
		out.usage = { input_tokens: text + image, input_tokens_details: { text_tokens: text, image_tokens: image }, output_tokens: 272 * n, total_tokens: text + image + 272 * n }
	}
	return json(out)
}

function editStream(fields: Fields, prompt: string, n: number, inputs: number): Reply {
	const partials = Math.min(3, Math.max(0, Number(fields.get('partial_images') ?? 0) || 0))
	const settings = renderedSettings(fields.get('size'), fields.get('quality'), fields.get('output_format'))
	const text = countWords(prompt)
	const image = EDIT_IMAGE_TOKENS * inputs
	const usage = { input_tokens: text + image, input_tokens_details: { text_tokens: text, image_tokens: image }, output_tokens: 272, total_tokens: text + image + 272 }
	const chunks: string[] = []
	for (let i = 0; i < n; i++) {
		for (let p = 0; p < partials; p++) chunks.push(frame({ type: 'image_edit.partial_image', b64_json: PNG_1X1, created_at: unixNow(), partial_image_index: p, ...settings }, 'image_edit.partial_image'))
		chunks.push(frame({ type: 'image_edit.completed', b64_json: PNG_1X1, created_at: unixNow(), ...settings, usage }, 'image_edit.completed'))
	}
	return sse(chunks, 1)
}

/** What an edit asks for once its images are checked: the checks common to both body forms. */
function edit(fields: Fields, inputs: number, origin: string): Reply {
	const model = asStr(fields.get('model')) ?? 'dall-e-2'
	const gptImage = model.startsWith('gpt-image')
	const prompt = asStr(fields.get('prompt'))
	if (!prompt) return missing('prompt')
	if (!gptImage && prompt.length > 1000) return openaiError(400, `Invalid 'prompt': string too long. Expected a string with maximum length 1000, but got a string with length ${prompt.length} instead.`, 'prompt', 'string_above_max_length')
	const n = countOf(fields)
	if (typeof n !== 'number') return n
	const size = asStr(fields.get('size'))
	if (size !== undefined && !(gptImage ? GPT_SIZES : DALL_E_SIZES).includes(size)) return invalid('size', `Invalid value: '${size}'. Supported values are: ${(gptImage ? GPT_SIZES : DALL_E_SIZES).map((s) => `'${s}'`).join(', ')}.`)
	const format = asStr(fields.get('response_format'))
	if (gptImage && format !== undefined) return openaiError(400, "Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter')
	const stream = fields.get('stream')
	if (stream === true || stream === 'true') {
		if (!gptImage) return openaiError(400, `Streaming is not supported for model '${model}'.`, 'stream', 'unsupported_value')
		return editStream(fields, prompt, n, inputs)
	}
	return images(model, prompt, n, inputs, format ?? 'url', origin, fields)
}

const formFields = (form: FormData): Fields => ({ get: (name) => form.get(name) ?? undefined })

/** POST /v1/images/edits, multipart or JSON. */
export async function imageEdits(body: unknown, form: FormData | undefined, jsonError: boolean, origin: string): Promise<Reply> {
	if (form) {
		const model = String(form.get('model') ?? 'dall-e-2')
		const gptImage = model.startsWith('gpt-image')
		const single = form.getAll('image')
		const many = form.getAll('image[]')
		const files = [...single, ...many]
		if (!files.length) return missing('image')
		if (files.some((f) => !(f instanceof File))) return invalid('image', "Invalid 'image': expected a file upload.")
		if (!gptImage && (files.length > 1 || many.length)) return invalid('image', `Invalid 'image': ${model} edits exactly one image.`)
		if (files.length > 16) return invalid('image', `Invalid 'image': expected at most 16 images, but got ${files.length}.`)
		// The type the part declares, not one sniffed from the bytes (an untyped PNG is refused as application/octet-stream).
		const accepted = gptImage ? ['image/jpeg', 'image/png', 'image/webp'] : ['image/png']
		const wrong = (files as File[]).findIndex((f) => !accepted.includes(f.type))
		if (wrong !== -1) {
			const param = many.length ? `image[${wrong}]` : 'image'
			const list = accepted.length === 1 ? `'${accepted[0]}'` : `${accepted.slice(0, -1).map((t) => `'${t}'`).join(', ')}, and '${accepted.at(-1)}'`
			return openaiError(400, `Invalid file '${param}': unsupported mimetype ('${(files as File[])[wrong]!.type || 'application/octet-stream'}'). Supported file formats are ${list}.`, param, 'unsupported_file_mimetype')
		}
		for (const f of files as File[]) {
			if (f.size === 0) return invalid('image', `Invalid 'image': the file '${f.name}' is empty.`)
			if (!gptImage && !(await isPng(f))) return invalid('image', "Invalid 'image': dall-e-2 edits take a square PNG file.")
		}
		const mask = form.get('mask')
		if (mask !== null && (!(mask instanceof File) || !(await isPng(mask)))) return invalid('mask', "Invalid 'mask': expected a PNG file.")
		return edit(formFields(form), files.length, origin)
	}
	if (jsonError || !body || typeof body !== 'object' || Array.isArray(body)) return openaiError(400, 'Invalid Content-Type header (expected multipart/form-data or application/json).', null)
	const b = body as Obj
	const model = asStr(b.model) ?? 'dall-e-2'
	if (!model.startsWith('gpt-image')) return invalid('model', `JSON image edits support GPT image models only; send ${model} edits as multipart/form-data.`)
	const refs = Array.isArray(b.images) ? b.images : undefined
	if (!refs?.length) return missing('images')
	const bad = refs.findIndex((r) => {
		const o = r as Obj
		return !o || typeof o !== 'object' || (typeof o.image_url === 'string') === (typeof o.file_id === 'string')
	})
	if (bad !== -1) return invalid(`images[${bad}]`, "Provide exactly one of 'image_url' or 'file_id'.")
	return edit({ get: (name) => b[name] }, refs.length, origin)
}

/** POST /v1/images/variations: multipart, dall-e-2 only. */
export async function imageVariations(form: FormData | undefined, origin: string): Promise<Reply> {
	if (!form) return openaiError(400, 'Invalid Content-Type header (expected multipart/form-data).', null)
	const model = String(form.get('model') ?? 'dall-e-2')
	if (model !== 'dall-e-2') return invalid('model', `Invalid value: '${model}'. Image variations support 'dall-e-2' only.`)
	const image = form.get('image')
	if (image === null) return missing('image')
	if (!(image instanceof File) || !(await isPng(image))) return invalid('image', "Invalid 'image': expected a square PNG file.")
	const n = countOf(formFields(form))
	if (typeof n !== 'number') return n
	const size = asStr(form.get('size') ?? undefined)
	if (size !== undefined && !DALL_E_SIZES.includes(size)) return invalid('size', `Invalid value: '${size}'. Supported values are: ${DALL_E_SIZES.map((s) => `'${s}'`).join(', ')}.`)
	const format = asStr(form.get('response_format') ?? undefined) ?? 'url'
	if (format !== 'url' && format !== 'b64_json') return invalid('response_format', `Invalid value: '${format}'. Supported values are: 'url' and 'b64_json'.`)
	return images(model, `variation of ${image.name}`, n, 1, format, origin, formFields(form))
}
