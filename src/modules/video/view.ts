/** A video task as the client sees it. */
import type { TaskRow, TaskStatus } from '../../tasks/store'
import type { Video, VideoTask } from './model'
import { DEFAULT_VIDEO_SECONDS } from './submit'

/** The base URL clients reach this gateway at: PUBLIC_URL when set (behind a proxy), else the request's origin. */
export const publicBase = (publicUrl: string | undefined, request: Request): string => (publicUrl || new URL(request.url).origin).replace(/\/+$/, '')

/** @example videoView(task, 'https://gw.example.com') */
export function videoView(task: TaskRow, base: string): VideoTask {
	const r = task.result ?? {}
	const out: VideoTask = {
		id: task.id,
		object: 'video',
		model: task.model,
		status: task.status as TaskStatus,
		progress: task.status === 'completed' ? 100 : task.progress,
		created_at: Math.floor(task.createdAt.getTime() / 1000),
	}
	if (r.seconds !== undefined) out.seconds = String(r.seconds)
	if (typeof r.size === 'string') out.size = r.size
	if (task.status === 'completed') out.url = typeof r.url === 'string' ? r.url : `${base}/v1/video/generations/${encodeURIComponent(task.id)}/content`
	if (task.status === 'failed') out.error = { code: 'video_generation_failed', message: task.error ?? 'video generation failed' }
	return out
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : null)
const text = (v: unknown): string | null => (typeof v === 'string' && v ? v : null)

/**
 * A video task as OpenAI's Video object (what `client.videos.*` reads): every field present, null when unknown.
 * @example openaiVideo(task) // { id: 'video_…', object: 'video', status: 'queued', completed_at: null, … }
 */
export function openaiVideo(task: TaskRow): Video {
	const r = task.result ?? {}
	const completed = task.status === 'completed'
	return {
		id: task.id,
		object: 'video',
		model: task.model,
		status: task.status as TaskStatus,
		progress: completed ? 100 : task.progress,
		created_at: Math.floor(task.createdAt.getTime() / 1000),
		// The upstream's time when it said; else when this gateway saw it finish (a terminal row is not touched again).
		completed_at: completed ? (num(r.completed_at) ?? Math.floor(task.updatedAt.getTime() / 1000)) : null,
		expires_at: num(r.expires_at),
		prompt: text(r.prompt),
		seconds: r.seconds === undefined || r.seconds === null ? String(DEFAULT_VIDEO_SECONDS) : String(r.seconds),
		size: text(r.size),
		remixed_from_video_id: text(r.remixed_from_video_id),
		error: task.status === 'failed' ? { code: 'video_generation_failed', message: task.error ?? 'video generation failed' } : null,
	}
}
