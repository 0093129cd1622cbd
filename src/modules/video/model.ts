/** Schemas of the video task APIs: /v1/video/generations (the gateway's own) and /v1/videos (OpenAI's Videos API). */
import { type TSchema, t } from 'elysia'
import { Integer } from '../../protocols/json-types'

export const VideoRequest = t.Object(
	{
		model: t.String({ minLength: 1 }),
		prompt: t.String({ minLength: 1, maxLength: 32000 }),
		seconds: t.Optional(t.Union([t.Number({ exclusiveMinimum: 0, maximum: 600 }), t.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })], { description: 'Clip length in seconds' })),
		// A string too: a multipart submit (with an `input_reference` file) carries every field as text.
		duration: t.Optional(t.Union([t.Number({ exclusiveMinimum: 0, maximum: 600 }), t.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' })], { description: 'Alias of `seconds`' })),
		size: t.Optional(t.String({ description: '`WxH`, e.g. 1280x720' })),
	},
	{ additionalProperties: true },
)
export type VideoRequest = typeof VideoRequest.static

export const VideoStatus = t.Union([t.Literal('queued'), t.Literal('in_progress'), t.Literal('completed'), t.Literal('failed')])

export const VideoTask = t.Object({
	id: t.String({ description: "Switchboard's task id" }),
	object: t.Literal('video'),
	model: t.String(),
	status: VideoStatus,
	progress: Integer({ minimum: 0, maximum: 100 }),
	created_at: Integer({ description: 'Unix seconds' }),
	seconds: t.Optional(t.String()),
	size: t.Optional(t.String()),
	url: t.Optional(t.String({ description: 'When completed: where to download the video (the upstream URL, or this gateway streaming it with your key)' })),
	error: t.Optional(t.Object({ code: t.String(), message: t.String() })),
})
export type VideoTask = typeof VideoTask.static

export const TaskIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 128 }) })

/**
 * OpenAI's `POST /videos` body as `client.videos.create` sends it (multipart; JSON also taken): `model` defaults to
 * sora-2 there, so it may be left out (developers.openai.com/api/reference/resources/videos/methods/create).
 */
export const VideoCreateBody = t.Composite([t.Omit(VideoRequest, ['model']), t.Object({ model: t.Optional(t.String({ minLength: 1 })) })], { additionalProperties: true })

/** `POST /videos/{video_id}/remix`: the new prompt. */
export const VideoRemixBody = t.Object({ prompt: t.String({ minLength: 1, maxLength: 32000 }) }, { additionalProperties: true })

const Nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()])

/** OpenAI's Video object, field for field (developers.openai.com/api/reference/resources/videos: "Video"). */
export const Video = t.Object({
	id: t.String({ description: "Switchboard's task id" }),
	object: t.Literal('video'),
	model: t.String(),
	status: VideoStatus,
	progress: Integer({ minimum: 0, maximum: 100 }),
	created_at: Integer({ description: 'Unix seconds' }),
	completed_at: Nullable(Integer({ description: 'Unix seconds, once completed' })),
	expires_at: Nullable(Integer({ description: "Unix seconds when the upstream's downloadable assets expire, if set" })),
	prompt: Nullable(t.String()),
	seconds: t.String(),
	size: Nullable(t.String()),
	remixed_from_video_id: Nullable(t.String({ description: 'The source video (its Switchboard id) of a remix' })),
	error: Nullable(t.Object({ code: t.String(), message: t.String() })),
})
export type Video = typeof Video.static

export const VideoList = t.Object({
	object: t.Literal('list'),
	data: t.Array(Video),
	first_id: Nullable(t.String()),
	last_id: Nullable(t.String()),
	has_more: t.Boolean(),
})

export const VideoListQuery = t.Object(
	{
		after: t.Optional(t.String({ minLength: 1, maxLength: 128, description: 'The id of the last video of the previous page' })),
		limit: t.Optional(t.Numeric({ minimum: 0, maximum: 100, multipleOf: 1, description: 'Videos per page (default 20)' })),
		order: t.Optional(t.Union([t.Literal('asc'), t.Literal('desc')], { description: 'By creation time (default desc)' })),
	},
	{ additionalProperties: true },
)

export const VideoDeleted = t.Object({ id: t.String(), object: t.Literal('video.deleted'), deleted: t.Boolean() })

export const VideoVariantQuery = t.Object(
	{ variant: t.Optional(t.Union([t.Literal('video'), t.Literal('thumbnail'), t.Literal('spritesheet')], { description: 'Which asset (default video)' })) },
	{ additionalProperties: true },
)
