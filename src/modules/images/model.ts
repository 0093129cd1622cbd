/** Schemas of POST /v1/images/generations (platform.openai.com/docs/api-reference/images/create). */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'

export const ImagesRequest = t.Object(
	{
		model: t.Optional(t.String({ minLength: 1, description: 'dall-e-2 when left out, or gpt-image-1 when a GPT image parameter is sent (`background`, `moderation`, `output_compression`, `output_format`, `partial_images`, `stream`, `quality` low/medium/high)' })),
		prompt: t.String({ minLength: 1, maxLength: 32000 }),
		n: t.Optional(Integer({ minimum: 1, maximum: 10 })),
		size: t.Optional(t.String({ description: '`WxH` in pixels, each side 64–8192 (e.g. 1024x1024), or `auto`' })),
		quality: t.Optional(t.String({ description: 'standard | hd (dall-e-3); low | medium | high | auto (gpt-image)' })),
		response_format: t.Optional(t.Union([t.Literal('url'), t.Literal('b64_json')])),
		style: t.Optional(t.String()),
		user: t.Optional(t.String()),
		stream: t.Optional(
			t.Union([t.Boolean(), t.Null()], {
				description: 'GPT image models: answer with server-sent events (`image_generation.partial_image`, `image_generation.completed`) instead of JSON',
			}),
		),
		partial_images: t.Optional(t.Union([Integer({ minimum: 0, maximum: 3 }), t.Null()], { description: 'partial images to stream before each final one (0–3)' })),
	},
	{ additionalProperties: true },
)
export type ImagesRequest = typeof ImagesRequest.static

/** A generation with its model decided ({@link imageModelOf}), as the relays take it. */
export type ImageGeneration = ImagesRequest & { model: string }

/** Fields only the GPT image models take; `quality` is one of them when it names their levels. */
const GPT_IMAGE_FIELDS = ['background', 'moderation', 'output_compression', 'output_format', 'partial_images', 'stream'] as const

/**
 * The model of a generation that names none, as OpenAI picks it: "Defaults to `dall-e-2` unless a parameter specific
 * to `gpt-image-1` is used" (images API reference, `model`).
 * @example imageModelOf({ prompt: 'x' }) // 'dall-e-2'; imageModelOf({ prompt: 'x', output_format: 'webp' }) // 'gpt-image-1'
 */
export function imageModelOf(body: ImagesRequest): string {
	if (body.model) return body.model
	const sent = body as Record<string, unknown>
	const gpt = GPT_IMAGE_FIELDS.some((k) => sent[k] !== undefined && sent[k] !== null) || ['low', 'medium', 'high'].includes(body.quality ?? '')
	return gpt ? 'gpt-image-1' : 'dall-e-2'
}

export const ImagesResponse = t.Object(
	{
		created: Integer(),
		data: t.Array(t.Object({ url: t.Optional(t.String()), b64_json: t.Optional(t.String()), revised_prompt: t.Optional(t.String()) })),
		usage: t.Optional(t.Object({ input_tokens: Integer(), output_tokens: Integer(), total_tokens: Integer() }, { additionalProperties: true })),
	},
	{ additionalProperties: true },
)

/**
 * An input image of a JSON edit: exactly one of `image_url` (an https URL or a `data:` URL) or `file_id` (an uploaded
 * file), OpenAI's `ImageRefParam` (platform.openai.com/docs/api-reference/images/createEdit, JSON body).
 */
export const ImageRef = t.Object({ image_url: t.Optional(t.String()), file_id: t.Optional(t.String()) }, { additionalProperties: true })

const ImageFiles = t.Union([t.File(), t.Array(t.File())])
const TextOrNumber = t.Union([t.String(), t.Number()])

/**
 * POST /v1/images/edits: multipart (`image`, or `image[]` repeated, as files; `mask` a file; other fields as text) or,
 * for GPT image models, JSON with `images` (ImageRef[]) and `mask` (ImageRef). Both are read and checked by
 * edits.ts; this schema documents them.
 */
export const ImageEditRequest = t.Object(
	{
		model: t.String({ minLength: 1, description: 'dall-e-2, a GPT image model, or a Gemini image model (served by Gemini channels: no mask)' }),
		prompt: t.String({ minLength: 1, maxLength: 32000 }),
		image: t.Optional(t.Union([ImageFiles], { description: 'multipart: the image to edit (dall-e-2: one square PNG)' })),
		'image[]': t.Optional(t.Union([ImageFiles], { description: 'multipart, GPT image models: up to 16 images, the field repeated' })),
		images: t.Optional(t.Array(ImageRef, { description: 'JSON, GPT image models: up to 16 images by URL or file id' })),
		mask: t.Optional(t.Union([t.File(), ImageRef], { description: 'PNG whose transparent areas say where to edit (applied to the first image)' })),
		n: t.Optional(TextOrNumber),
		size: t.Optional(t.String()),
		quality: t.Optional(t.String()),
		stream: t.Optional(t.Union([t.String(), t.Boolean(), t.Null()], { description: 'GPT image models: answer with `image_edit.partial_image` and `image_edit.completed` events' })),
		partial_images: t.Optional(t.Union([TextOrNumber, t.Null()])),
	},
	{ additionalProperties: true },
)
export type ImageEditRequest = typeof ImageEditRequest.static

/** POST /v1/images/variations (dall-e-2): multipart with `image`, one square PNG. */
export const ImageVariationRequest = t.Object(
	{
		image: t.File({ description: 'the image to vary: one square PNG under 4 MB' }),
		model: t.Optional(t.String({ minLength: 1, description: 'dall-e-2 (the default)' })),
		n: t.Optional(t.String()),
		size: t.Optional(t.String({ description: '256x256, 512x512 or 1024x1024' })),
		response_format: t.Optional(t.String({ description: 'url or b64_json' })),
	},
	{ additionalProperties: true },
)
export type ImageVariationRequest = typeof ImageVariationRequest.static
