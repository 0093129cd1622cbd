/**
 * Video generation as an asynchronous task on channels of type `video`, which speak OpenAI's video API at their
 * base_url (…/v1): `POST /videos`, `GET /videos/{id}`, `GET /videos/{id}/content`
 * (developers.openai.com/api/reference/resources/videos). Submitting charges the model's price when the upstream
 * accepts the job and answers with Switchboard's own task id; polling maps to the upstream task; a failure is refunded
 * once; only the account that created a task can read it (others get 404).
 * Price: `per_request` + seconds × (`per_second_<size>` or `per_second`); seconds default to 4 (OpenAI's default).
 * The same tasks are served in OpenAI's own shape at `/v1/videos` (videos-api.ts).
 * A multipart submit (an `input_reference` image uploaded as a file, as OpenAI's `POST /videos` takes it and the
 * OpenAI SDK's `videos.create` sends it) is forwarded as multipart with the file's bytes, name and type unchanged;
 * a JSON submit stays JSON (there `input_reference` is `{ image_url }` or `{ file_id }`).
 * @module
 */
import { Elysia, t } from 'elysia'
import { readPlainForm } from '../../http/form-view'
import { modelAuth } from '../../http/model-auth'
import { jsonResponse } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import type { Services } from '../../services'
import { ownVideo, videoContent } from './content'
import { TaskIdParams, VideoRequest, VideoTask, VideoVariantQuery } from './model'
import { submitVideo } from './submit'
import { publicBase, videoView } from './view'

export const videoModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		// Polls (GET …/{id}, …/content) are not counted against rpm_limit: only the submit calls a model.
		.use(modelAuth(svc, { counted: 'submits' }))
		.post(
			'/v1/video/generations',
			({ body, token, requestId, startedAt, request }) => {
				const base = publicBase(svc.env.publicUrl, request)
				return submitVideo({ svc, token, requestId, startedAt, request, endpoint: '/v1/video/generations', reply: (task) => jsonResponse(videoView(task, base), requestId) }, body)
			},
			{
				// A multipart submit's fields are read as the text they are (a prompt written as JSON stays a string).
				parse: readPlainForm,
				body: VideoRequest,
				response: { 200: VideoTask, ...openaiErrors },
				detail: { summary: 'Create a video (async task)', description: 'Charges the model price when the upstream accepts; answers a task to poll with GET /v1/video/generations/{id}.' },
			},
		)
		.get(
			'/v1/video/generations/:id',
			async ({ params, token, request }) => videoView(await ownVideo(svc, params.id, token.accountId, request.signal), publicBase(svc.env.publicUrl, request)),
			{ params: TaskIdParams, response: { 200: VideoTask, 401: OpenAIErrorBody, 404: OpenAIErrorBody }, detail: { summary: 'Get a video task', description: 'Status, progress and, when completed, the video URL.' } },
		)
		.get('/v1/video/generations/:id/content', ({ params, query, token, request, requestId }) => videoContent(svc, params.id, token.accountId, query.variant, request, requestId), {
			params: TaskIdParams,
			query: VideoVariantQuery,
			response: { 200: t.File({ description: 'The video bytes (video/mp4), streamed from the upstream' }), 401: OpenAIErrorBody, 404: OpenAIErrorBody, 409: OpenAIErrorBody, 502: OpenAIErrorBody },
			detail: { summary: 'Download a completed video' },
		})
