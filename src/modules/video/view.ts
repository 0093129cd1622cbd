/** A video task as the client sees it. */
import type { TaskRow, TaskStatus } from '../../tasks/store'
import type { VideoTask } from './model'

/** The base URL clients reach this gateway at: PUBLIC_URL when set (behind a proxy), else the request's origin. */
export const publicBase = (vars: Record<string, string | undefined>, request: Request): string => (vars.PUBLIC_URL || new URL(request.url).origin).replace(/\/+$/, '')

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
