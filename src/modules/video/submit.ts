/**
 * Submitting video jobs, shared by the gateway's `/v1/video/generations` and OpenAI's `/v1/videos` routes: a new
 * video (`POST /videos`, JSON or multipart) and a remix of a finished one (`POST /videos/{id}/remix`, on the channel
 * that holds the source). Each is a task charged when the upstream accepts it:
 * `per_request` + seconds × (`per_second_<size>` or `per_second`), the seconds and size being those the upstream says
 * it will render (developers.openai.com/api/reference/resources/videos).
 * @module
 */
import type { AuthToken } from '../../auth/api-key'
import { GatewayError } from '../../core/errors'
import { requestFee, unitPrice } from '../../passthrough/pricing'
import { readJson, relayPassthrough } from '../../passthrough/relay'
import { authHeaders, channelUrl, jsonHeaders, withModel } from '../../passthrough/upstream'
import { checkSize } from '../../passthrough/validate'
import type { ModelInfo } from '../../routing/catalog'
import type { Services } from '../../services'
import { type TaskRow, newTaskId } from '../../tasks/store'
import { type Acceptance, taskOp } from '../../tasks/submit'
import { videoUpdate } from '../../tasks/upstream'
import { upstreamVideoForm } from './form'
import { checkFileIds } from '../batches/refs'

/** OpenAI's default clip length. */
export const DEFAULT_VIDEO_SECONDS = 4

/** @example videoCost(price, 8, '1280x720') */
export function videoCost(p: ModelInfo, seconds: number, size?: string): number {
	const perSecond = unitPrice(p, ...(size ? [`per_second_${size}`] : []), 'per_second') ?? 0
	return requestFee(p) + Math.ceil(seconds) * perSecond
}

/** Who submits, and how the recorded task is answered. */
export type VideoCall = {
	svc: Services
	token: AuthToken
	requestId: string
	startedAt: number
	request: Request
	/** The usage rows' endpoint. */
	endpoint: string
	reply: (task: TaskRow) => Response
}

export type VideoBody = Record<string, unknown> & { model: string; prompt: string; seconds?: number | string; duration?: number | string; size?: string }

/** A field holds an uploaded file (or several): the body cannot be sent as JSON. */
const hasBlob = (body: Record<string, unknown>): boolean => Object.values(body).some((v) => v instanceof Blob || (Array.isArray(v) && v.some((x) => x instanceof Blob)))

/**
 * Reads the upstream's accept answer (a Video object): its id, state, and the seconds and size it will render, which
 * set the charge. `recorded` is kept with the task (the prompt, a remix's source).
 */
async function acceptVideo(res: Response, price: ModelInfo, seconds: number, size: string | undefined, recorded: Record<string, unknown>): Promise<Acceptance> {
	const v = await readJson<{ id?: unknown; seconds?: unknown; size?: unknown }>(res)
	if (typeof v.id !== 'string' || !v.id) throw new GatewayError('upstream', 'upstream accepted the video without a task id', { code: 'upstream_malformed' })
	const update = videoUpdate(v)
	const answered = Number(v.seconds)
	const billed = Number.isFinite(answered) && answered > 0 ? answered : seconds
	const rendered = typeof v.size === 'string' ? v.size : size
	return {
		response: new Response(null),
		upstreamId: v.id,
		update,
		cost: videoCost(price, billed, rendered),
		result: { ...update?.result, ...recorded, seconds: String(billed), ...(rendered ? { size: rendered } : {}) },
	}
}

/** A new video: the body goes upstream as the client wrote it (multipart stays multipart), model renamed, seconds as OpenAI's string. */
export async function submitVideo(c: VideoCall, body: VideoBody): Promise<Response> {
	checkSize(body.size)
	// A reference image by file id must be one of the account's files: every account shares the channel's key (batches/refs.ts).
	const ref = body.input_reference as { file_id?: unknown } | null | undefined
	if (ref && typeof ref === 'object' && typeof ref.file_id === 'string') await checkFileIds(c.svc, c.token.accountId, [{ id: ref.file_id, param: 'input_reference.file_id' }])
	const asked = body.seconds ?? body.duration
	const seconds = asked === undefined ? DEFAULT_VIDEO_SECONDS : Number(asked)
	if (!(seconds > 0 && seconds <= 600)) throw new GatewayError('invalid_request', `Invalid 'seconds': ${String(asked)}`, { param: 'seconds', code: 'invalid_request_error' })
	const { duration: _alias, ...rest } = body
	const multipart = (c.request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data') || hasBlob(rest)
	return relayPassthrough(
		taskOp({
			ctx: { svc: c.svc, token: c.token, requestId: c.requestId, startedAt: c.startedAt, signal: c.request.signal },
			kind: 'video',
			endpoint: c.endpoint,
			model: body.model,
			types: ['video'],
			id: newTaskId('video'),
			cost: (p) => videoCost(p, seconds, body.size),
			request(ch, upstreamModel) {
				// OpenAI's `seconds` is a string enum ("4", "8", "12").
				const up = withModel({ ...rest, ...(asked !== undefined ? { seconds: String(seconds) } : {}) }, upstreamModel)
				// A File would serialize to `{}` in JSON: a multipart submit goes on as multipart (fetch sets the boundary).
				if (multipart) return { url: channelUrl(ch, '/videos'), headers: authHeaders(ch), body: upstreamVideoForm(up) }
				return { url: channelUrl(ch, '/videos'), headers: jsonHeaders(ch), body: JSON.stringify(up) }
			},
			accept: (res, _ch, price) => acceptVideo(res, price, seconds, body.size, { prompt: body.prompt }),
			reply: c.reply,
		}),
	)
}

/**
 * A remix of `source`: a new task of the source's model, sent to the channel that made the source (only it knows the
 * upstream id), priced like the source's seconds and size unless the upstream says otherwise.
 */
export function remixVideo(c: VideoCall, source: TaskRow, body: Record<string, unknown> & { prompt: string }): Promise<Response> {
	const r = source.result ?? {}
	const asked = Number(r.seconds)
	const seconds = Number.isFinite(asked) && asked > 0 ? asked : DEFAULT_VIDEO_SECONDS
	const size = typeof r.size === 'string' ? r.size : undefined
	const upstreamId = source.upstreamId!
	return relayPassthrough(
		taskOp({
			ctx: { svc: c.svc, token: c.token, requestId: c.requestId, startedAt: c.startedAt, signal: c.request.signal },
			kind: 'video',
			endpoint: c.endpoint,
			model: source.model,
			types: ['video'],
			pin: (ch) => ch.id === source.channelId,
			id: newTaskId('video'),
			cost: (p) => videoCost(p, seconds, size),
			request: (ch) => ({ url: channelUrl(ch, `/videos/${encodeURIComponent(upstreamId)}/remix`), headers: jsonHeaders(ch), body: JSON.stringify(body) }),
			accept: (res, _ch, price) => acceptVideo(res, price, seconds, size, { prompt: body.prompt, remixed_from_video_id: source.id }),
			reply: c.reply,
		}),
	)
}
