/**
 * Schemas of Imagen's `:predict` and Veo's `:predictLongRunning` (ai.google.dev/gemini-api/docs/imagen,
 * …/docs/video) and of the long-running Operation (`google.longrunning.Operation`) a video is polled through.
 * Permissive like the other Gemini schemas: unknown fields pass to the upstream.
 * @module
 */
import { t } from 'elysia'
import { Integer } from '../../protocols/json-types'

const open = { additionalProperties: true } as const

/** Body of `:predict` and `:predictLongRunning`: the instances (prompt, images) and the generation parameters. */
export const PredictRequest = t.Object(
	{
		instances: t.Array(t.Object({ prompt: t.Optional(t.String()) }, open), { minItems: 1 }),
		parameters: t.Optional(
			t.Object(
				{
					sampleCount: t.Optional(Integer({ minimum: 1, description: 'Images (Imagen, default 4) or videos (Veo, default 1) to make' })),
					imageSize: t.Optional(t.String({ description: 'Imagen: `1K` (default) or `2K`; a square image is priced `per_image_1024x1024` or `per_image_2048x2048`' })),
					durationSeconds: t.Optional(t.Union([t.Number({ exclusiveMinimum: 0 }), t.String()], { description: 'Veo: seconds of video (default 8)' })),
					resolution: t.Optional(t.String({ description: 'Veo: `720p` (default) or `1080p`; priced `per_second_1280x720`, `per_second_1920x1080` (9:16: `720x1280`, `1080x1920`)' })),
				},
				open,
			),
		),
	},
	open,
)
export type PredictRequest = typeof PredictRequest.static

/** `:predict`'s answer: one prediction per image, or the reason a filtered one was withheld. */
export const PredictResponse = t.Object(
	{ predictions: t.Optional(t.Array(t.Object({ bytesBase64Encoded: t.Optional(t.String()), mimeType: t.Optional(t.String()), raiFilteredReason: t.Optional(t.String()) }, open))) },
	open,
)

/** A long-running operation as Gemini answers it: done with a `response` or an `error` (google.rpc.Status). */
export const GeminiOperation = t.Object(
	{
		name: t.String({ description: "The gateway's operation name, `models/{model}/operations/{id}`" }),
		done: t.Optional(t.Boolean()),
		metadata: t.Optional(t.Record(t.String(), t.Unknown())),
		response: t.Optional(
			t.Object(
				{
					generateVideoResponse: t.Object(
						{ generatedSamples: t.Optional(t.Array(t.Object({ video: t.Object({ uri: t.String({ description: "A gateway URL: download it with the caller's key" }) }, open) }, open))) },
						open,
					),
				},
				open,
			),
		),
		error: t.Optional(t.Object({ code: Integer(), message: t.String(), status: t.Optional(t.String()) }, open)),
	},
	open,
)
export type GeminiOperation = typeof GeminiOperation.static
