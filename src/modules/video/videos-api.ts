/**
 * OpenAI's Videos API as the official SDKs call it with `baseURL: {root}/v1` (`client.videos.create`, `retrieve`,
 * `list`, `delete`, `downloadContent`, `remix`): `/v1/videos`, `/v1/videos/{id}`, `/v1/videos/{id}/content`,
 * `/v1/videos/{id}/remix`, answering OpenAI's Video object (developers.openai.com/api/reference/resources/videos).
 * They serve the same tasks as `/v1/video/generations` (a task made by either is read by both): the gateway's own
 * ids, a charge when the upstream accepts, one refund when a video fails, and only the owning account sees a video
 * (others get 404). A remix is a new task, billed like a new video of the source's seconds and size, on the source's
 * channel. The list reads this gateway's records, newest first; open videos in it show their last known state
 * (a retrieve, or the background poller, asks the upstream).
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError, notFound } from '../../core/errors'
import { readPlainForm } from '../../http/form-view'
import { modelAuth } from '../../http/model-auth'
import { jsonResponse } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { authHeaders, channelUrl } from '../../passthrough/upstream'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Services } from '../../services'
import { deleteFinished, isTerminal, listOwned } from '../../tasks/store'
import { ownVideo, videoContent } from './content'
import { TaskIdParams, Video, VideoCreateBody, VideoDeleted, VideoList, VideoListQuery, VideoRemixBody, VideoVariantQuery } from './model'
import { remixVideo, submitVideo } from './submit'
import { openaiVideo } from './view'
import { listPage } from '../../http/list-page'

/** OpenAI's default model for `POST /videos` when the body names none. */
const DEFAULT_VIDEO_MODEL = 'sora-2'
/** Videos per list page when `limit` is not given, as OpenAI's cursor lists. */
const DEFAULT_LIST_LIMIT = 20

export const videosApiModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		// Reads (retrieve, list, content) are not counted against rpm_limit: clients poll them every few seconds.
		.use(modelAuth(svc, { counted: 'submits' }))
		.post(
			'/v1/videos',
			({ body, token, requestId, startedAt, request }) =>
				submitVideo({ svc, token, requestId, startedAt, request, endpoint: '/v1/videos', reply: (task) => jsonResponse(openaiVideo(task), requestId) }, { ...body, model: body.model ?? DEFAULT_VIDEO_MODEL }),
			{
				// The SDK sends multipart: its fields are read as the text they are (a prompt written as JSON stays a string).
				parse: readPlainForm,
				body: VideoCreateBody,
				response: { 200: Video, ...openaiErrors },
				detail: { summary: 'Create a video', description: "OpenAI's `POST /videos` (multipart or JSON). Charged when the upstream accepts; poll it with GET /v1/videos/{id}." },
			},
		)
		.get(
			'/v1/videos',
			async ({ query, token }) => {
				const limit = query.limit ?? DEFAULT_LIST_LIMIT
				const rows = await listOwned(svc.db, 'video', token.accountId, { after: query.after, limit, order: query.order ?? 'desc' })
				const page = rows.slice(0, limit)
				return listPage(page.map((task) => openaiVideo(task)), rows.length > limit)
			},
			{ query: VideoListQuery, response: { 200: VideoList, 400: OpenAIErrorBody, 401: OpenAIErrorBody }, detail: { summary: 'List videos', description: "The account's videos, newest first (`order=asc` for oldest), paged with `after` and `limit`." } },
		)
		.get('/v1/videos/:id', async ({ params, token, request }) => openaiVideo(await ownVideo(svc, params.id, token.accountId, request.signal)), {
			params: TaskIdParams,
			response: { 200: Video, 401: OpenAIErrorBody, 404: OpenAIErrorBody },
			detail: { summary: 'Retrieve a video', description: 'Its state, asked of the upstream while it is being generated.' },
		})
		.delete(
			'/v1/videos/:id',
			async ({ params, token, request }) => {
				const task = await ownVideo(svc, params.id, token.accountId, request.signal)
				// OpenAI deletes "a completed or failed video"; an open one still holds a charge its failure would refund.
				if (!isTerminal(task.status))
					throw new GatewayError('invalid_request', `Video '${task.id}' is still being generated (status ${task.status}); only a completed or failed video can be deleted`, { code: 'video_not_finished' })
				const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
				if (!ch) throw new GatewayError('unavailable', 'The channel that made this video is no longer available', { code: 'channel_unavailable' })
				const { res } = await fetchUpstream(channelUrl(ch, `/videos/${encodeURIComponent(task.upstreamId!)}`), { method: 'DELETE', headers: authHeaders(ch) }, channelTimeouts(ch.settings), request.signal)
				await res.body?.cancel().catch(() => undefined)
				// A 404 upstream: the assets are gone already (expired), which is what the caller wants.
				if (!res.ok && res.status !== 404) throw new GatewayError('upstream', `upstream could not delete the video (HTTP ${res.status})`, { code: 'upstream_error' })
				if (!(await deleteFinished(svc.db, 'video', task.id, token.accountId))) throw notFound(`No video task "${params.id}"`, 'task_not_found')
				return { id: task.id, object: 'video.deleted' as const, deleted: true }
			},
			{
				params: TaskIdParams,
				response: { 200: VideoDeleted, 400: OpenAIErrorBody, 401: OpenAIErrorBody, 404: OpenAIErrorBody, 502: OpenAIErrorBody, 503: OpenAIErrorBody },
				detail: { summary: 'Delete a video', description: 'A completed or failed video, upstream and here; it is not found afterwards.' },
			},
		)
		.get('/v1/videos/:id/content', ({ params, query, token, request, requestId }) => videoContent(svc, params.id, token.accountId, query.variant, request, requestId), {
			params: TaskIdParams,
			query: VideoVariantQuery,
			response: {
				200: t.File({ description: 'The MP4 (`video`), a WebP `thumbnail` or a JPEG `spritesheet`, streamed from the upstream' }),
				401: OpenAIErrorBody,
				404: OpenAIErrorBody,
				409: OpenAIErrorBody,
				502: OpenAIErrorBody,
				503: OpenAIErrorBody,
			},
			detail: { summary: 'Download video content' },
		})
		.post(
			'/v1/videos/:id/remix',
			async ({ params, body, token, requestId, startedAt, request }) => {
				const source = await ownVideo(svc, params.id, token.accountId, request.signal)
				return remixVideo({ svc, token, requestId, startedAt, request, endpoint: '/v1/videos/{id}/remix', reply: (task) => jsonResponse(openaiVideo(task), requestId) }, source, body)
			},
			{
				params: TaskIdParams,
				body: VideoRemixBody,
				response: { 200: Video, ...openaiErrors },
				detail: { summary: 'Remix a video', description: 'A new video from a completed one with a new prompt: a new task, charged like a video of the same model, seconds and size.' },
			},
		)
