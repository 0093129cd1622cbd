/** Schemas of POST /v1/images/generations (platform.openai.com/docs/api-reference/images/create). */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'

export const ImagesRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
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

export const ImagesResponse = t.Object(
	{
		created: Integer(),
		data: t.Array(t.Object({ url: t.Optional(t.String()), b64_json: t.Optional(t.String()), revised_prompt: t.Optional(t.String()) })),
		usage: t.Optional(t.Object({ input_tokens: Integer(), output_tokens: Integer(), total_tokens: Integer() }, { additionalProperties: true })),
	},
	{ additionalProperties: true },
)
