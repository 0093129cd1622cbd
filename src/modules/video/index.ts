/**
 * Video generation as an asynchronous task on channels of type `video`, which speak OpenAI's video API at their
 * base_url (…/v1): `POST /videos`, `GET /videos/{id}`, `GET /videos/{id}/content`
 * (developers.openai.com/api/reference/resources/videos). Submitting charges the model's price when the upstream
 * accepts the job and answers with Switchboard's own task id; polling maps to the upstream task; a failure is refunded
 * once; only the account that created a task can read it (others get 404).
 * Price: `per_request` + seconds × (`per_second_<size>` or `per_second`); seconds default to 4 (OpenAI's default).
 * A multipart submit (an `input_reference` image uploaded as a file, as OpenAI's `POST /videos` takes it and the
 * OpenAI SDK's `videos.create` sends it) is forwarded as multipart with the file's bytes, name and type unchanged;
 * a JSON submit stays JSON (there `input_reference` is `{ image_url }` or `{ file_id }`).
 * @module
 */
import { Elysia, t } from 'elysia'
import { GatewayError, notFound } from '../../core/errors'
import { modelAuth } from '../../http/model-auth'
import { requestFee, unitPrice } from '../../passthrough/pricing'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { openaiErrors } from '../../passthrough/schemas'
import { authHeaders, channelUrl, jsonHeaders, withModel } from '../../passthrough/upstream'
import { checkSize } from '../../passthrough/validate'
import { OpenAIErrorBody } from '../../protocols/openai-chat'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { refreshTask } from '../../tasks/refresh'
import { findOwned, newTaskId } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import { videoUpdate } from '../../tasks/upstream'
import { upstreamVideoForm } from './form'
import { TaskIdParams, VideoRequest, VideoTask } from './model'
import { publicBase, videoView } from './view'

/** A field holds an uploaded file (or several): the body cannot be sent as JSON. */
const hasBlob = (body: Record<string, unknown>): boolean => Object.values(body).some((v) => v instanceof Blob || (Array.isArray(v) && v.some((x) => x instanceof Blob)))

/** OpenAI's default clip length. */
export const DEFAULT_VIDEO_SECONDS = 4

/** @example videoCost(price, 8, '1280x720') */
export function videoCost(p: ModelInfo, seconds: number, size?: string): number {
	const perSecond = unitPrice(p, ...(size ? [`per_second_${size}`] : []), 'per_second') ?? 0
	return requestFee(p) + Math.ceil(seconds) * perSecond
}

export const videoModule = (svc: Services) =>
	new Elysia({ detail: { tags: ['OpenAI'] } })
		// Polls (GET …/{id}, …/content) are not counted against rpm_limit: only the submit calls a model.
		.use(modelAuth(svc, { counted: 'submits' }))
		.post(
			'/v1/video/generations',
			({ body, token, requestId, startedAt, request }) => {
				checkSize(body.size)
				const asked = body.seconds ?? body.duration
				const seconds = asked === undefined ? DEFAULT_VIDEO_SECONDS : Number(asked)
				if (!(seconds > 0 && seconds <= 600)) throw new GatewayError('invalid_request', `Invalid 'seconds': ${String(asked)}`, { param: 'seconds', code: 'invalid_request_error' })
				const { duration: _alias, ...rest } = body
				const multipart = (request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data') || hasBlob(rest)
				const id = newTaskId('video')
				const base = publicBase(svc.env.vars, request)
				return relayPassthrough(
					taskOp({
						ctx: { svc, token, requestId, startedAt, signal: request.signal },
						kind: 'video',
						endpoint: '/v1/video/generations',
						model: body.model,
						types: ['video'],
						id,
						cost: (p) => videoCost(p, seconds, body.size),
						request(ch, upstreamModel) {
							// OpenAI's `seconds` is a string enum ("4", "8", "12").
							const up = withModel({ ...rest, ...(asked !== undefined ? { seconds: String(seconds) } : {}) }, upstreamModel)
							// A File would serialize to `{}` in JSON: a multipart submit goes on as multipart (fetch sets the boundary).
							if (multipart) return { url: channelUrl(ch, '/videos'), headers: authHeaders(ch), body: upstreamVideoForm(up) }
							return { url: channelUrl(ch, '/videos'), headers: jsonHeaders(ch), body: JSON.stringify(up) }
						},
						async accept(res, _ch, price) {
							const v = await readJson<{ id?: unknown; seconds?: unknown; size?: unknown }>(res)
							if (typeof v.id !== 'string' || !v.id) throw new GatewayError('upstream', 'upstream accepted the video without a task id', { code: 'upstream_malformed' })
							const update = videoUpdate(v)
							const answered = Number(v.seconds)
							const billed = Number.isFinite(answered) && answered > 0 ? answered : seconds
							const size = typeof v.size === 'string' ? v.size : body.size
							return { response: new Response(null), upstreamId: v.id, update, cost: videoCost(price, billed, size), result: { ...update?.result, seconds: String(billed), ...(size ? { size } : {}) } }
						},
						reply: (task) => jsonResponse(videoView(task, base), requestId),
					}),
				)
			},
			{
				body: VideoRequest,
				response: { 200: VideoTask, ...openaiErrors },
				detail: { summary: 'Create a video (async task)', description: 'Charges the model price when the upstream accepts; answers a task to poll with GET /v1/video/generations/{id}.' },
			},
		)
		.get(
			'/v1/video/generations/:id',
			async ({ params, token, request }) => {
				const task = await findOwned(svc.db, 'video', params.id, token.accountId)
				if (!task) throw notFound(`No video task "${params.id}"`, 'task_not_found')
				return videoView(await refreshTask(svc, task, { signal: request.signal }), publicBase(svc.env.vars, request))
			},
			{ params: TaskIdParams, response: { 200: VideoTask, 401: OpenAIErrorBody, 404: OpenAIErrorBody }, detail: { summary: 'Get a video task', description: 'Status, progress and, when completed, the video URL.' } },
		)
		.get(
			'/v1/video/generations/:id/content',
			async ({ params, query, token, request, requestId }) => {
				const task = await findOwned(svc.db, 'video', params.id, token.accountId)
				if (!task || !task.upstreamId) throw notFound(`No video task "${params.id}"`, 'task_not_found')
				if (task.status !== 'completed') throw new GatewayError('invalid_request', `The video is not ready (status ${task.status})`, { status: 409, code: 'video_not_ready' })
				const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
				if (!ch) throw new GatewayError('unavailable', 'The channel that made this video is no longer available', { code: 'channel_unavailable' })
				const q = query.variant ? `?variant=${encodeURIComponent(query.variant)}` : ''
				const { res } = await fetchUpstream(channelUrl(ch, `/videos/${encodeURIComponent(task.upstreamId)}/content${q}`), { method: 'GET', headers: authHeaders(ch) }, channelTimeouts(ch.settings), request.signal)
				if (!res.ok || !res.body) throw new GatewayError('upstream', `upstream could not serve the video (HTTP ${res.status})`, { code: 'upstream_error' })
				const headers: Record<string, string> = { 'content-type': res.headers.get('content-type') ?? 'video/mp4', 'x-request-id': requestId }
				const len = res.headers.get('content-length')
				if (len) headers['content-length'] = len
				return new Response(res.body, { status: 200, headers })
			},
			{
				params: TaskIdParams,
				query: t.Object({ variant: t.Optional(t.Union([t.Literal('video'), t.Literal('thumbnail'), t.Literal('spritesheet')])) }, { additionalProperties: true }),
				response: { 200: t.File({ description: 'The video bytes (video/mp4), streamed from the upstream' }), 401: OpenAIErrorBody, 404: OpenAIErrorBody, 409: OpenAIErrorBody, 502: OpenAIErrorBody },
				detail: { summary: 'Download a completed video' },
			},
		)
