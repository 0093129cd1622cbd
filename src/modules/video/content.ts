/**
 * Serving a finished video's assets from the channel that made it: `GET /videos/{id}/content?variant=` streams the MP4
 * (`video`, the default), a WebP `thumbnail` or a JPEG `spritesheet` (developers.openai.com/api/docs/guides/video-generation,
 * "Download variants"). The task is brought up to date first, so a video that finished since the last poll is served.
 * @module
 */
import { GatewayError, notFound } from '../../core/errors'
import { authHeaders, channelUrl } from '../../passthrough/upstream'
import { channelTimeouts, fetchUpstream } from '../../relay/upstream-fetch'
import type { Services } from '../../services'
import { refreshTask } from '../../tasks/refresh'
import { findOwned } from '../../tasks/store'

export type VideoVariant = 'video' | 'thumbnail' | 'spritesheet'

/** Each asset's type, when the upstream does not say. */
const CONTENT_TYPES: Record<VideoVariant, string> = { video: 'video/mp4', thumbnail: 'image/webp', spritesheet: 'image/jpeg' }

/** The account's video task, up to date; 404 for an unknown id or another account's. */
export async function ownVideo(svc: Services, id: string, accountId: number, signal: AbortSignal) {
	const task = await findOwned(svc.db, 'video', id, accountId)
	if (!task || !task.upstreamId) throw notFound(`No video task "${id}"`, 'task_not_found')
	return refreshTask(svc, task, { signal })
}

/** The asset's bytes streamed through, with the upstream's type and length. */
export async function videoContent(svc: Services, id: string, accountId: number, variant: VideoVariant | undefined, request: Request, requestId: string): Promise<Response> {
	const task = await ownVideo(svc, id, accountId, request.signal)
	if (task.status !== 'completed') throw new GatewayError('invalid_request', `The video is not ready (status ${task.status})`, { status: 409, code: 'video_not_ready' })
	const ch = task.channelId === null ? undefined : svc.catalog.channel(task.channelId)
	if (!ch) throw new GatewayError('unavailable', 'The channel that made this video is no longer available', { code: 'channel_unavailable' })
	const q = variant ? `?variant=${encodeURIComponent(variant)}` : ''
	const { res } = await fetchUpstream(channelUrl(ch, `/videos/${encodeURIComponent(task.upstreamId!)}/content${q}`), { method: 'GET', headers: authHeaders(ch) }, channelTimeouts(ch.settings), request.signal)
	if (!res.ok || !res.body) {
		await res.body?.cancel().catch(() => undefined)
		throw new GatewayError('upstream', `upstream could not serve the video (HTTP ${res.status})`, { code: 'upstream_error' })
	}
	const headers: Record<string, string> = { 'content-type': res.headers.get('content-type') ?? CONTENT_TYPES[variant ?? 'video'], 'x-request-id': requestId }
	const len = res.headers.get('content-length')
	if (len) headers['content-length'] = len
	return new Response(res.body, { status: 200, headers })
}
