/** Schemas of the video task API: POST /v1/video/generations (JSON or multipart), GET /v1/video/generations/{id}. */
import { t } from 'elysia'
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
