/**
 * Reading a task's state from its upstream. Each kind maps its vendor's status words onto ours; a poll that fails
 * (network, timeout, non-2xx, unreadable body) yields nothing, and nothing is not a failure (WIRE-NOTES #20,
 * elizaOS/eliza PR #11920): the task stays open and is asked again later.
 * @module
 */
import { fetchUpstream } from '../relay/upstream-fetch'
import { authHeaders, channelUrl } from '../passthrough/upstream'
import type { Channel } from '../routing/catalog'
import type { TaskKind, TaskStatus, TaskUpdate } from './store'

/** A poll is short: the next one comes soon. */
const POLL_TIMEOUTS = { firstByteMs: 15_000, idleMs: 15_000 }

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined)
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined)

/** `"45%"`, `"45"` or 45 → 45. */
export function percent(v: unknown): number {
	const n = typeof v === 'number' ? v : typeof v === 'string' ? Number.parseFloat(v) : Number.NaN
	return Number.isFinite(n) ? Math.max(0, Math.min(100, n)) : 0
}

/** An OpenAI video object (`GET /videos/{id}`) → update. Status: queued | in_progress | completed | failed. */
export function videoUpdate(v: unknown): TaskUpdate | undefined {
	const o = obj(v)
	const s = str(o?.status)?.toLowerCase()
	if (!o || !s) return undefined
	const status: TaskStatus = s === 'completed' || s === 'succeeded' ? 'completed' : s === 'failed' || s === 'cancelled' ? 'failed' : s === 'queued' || s === 'pending' ? 'queued' : 'in_progress'
	const result: Obj = {}
	for (const k of ['seconds', 'size', 'completed_at', 'expires_at']) if (o[k] !== undefined && o[k] !== null) result[k] = o[k]
	const url = str(o.url) ?? str(o.video_url)
	if (url) result.url = url
	const err = obj(o.error)
	return { status, progress: percent(o.progress), result, error: str(err?.message) ?? str(err?.code) ?? (status === 'failed' ? 'video generation failed' : undefined) }
}

/** A midjourney-proxy task (`GET /mj/task/{id}/fetch`): NOT_START | SUBMITTED | MODAL | IN_PROGRESS | SUCCESS | FAILURE | CANCEL. */
export function mjUpdate(v: unknown): TaskUpdate | undefined {
	const o = obj(v)
	const s = str(o?.status)?.toUpperCase()
	if (!o || !s) return undefined
	const status: TaskStatus = s === 'SUCCESS' ? 'completed' : s === 'FAILURE' || s === 'CANCEL' ? 'failed' : s === 'IN_PROGRESS' ? 'in_progress' : 'queued'
	return { status, progress: percent(o.progress), result: o, error: str(o.failReason) ?? (status === 'failed' ? `midjourney task ${s.toLowerCase()}` : undefined) }
}

/** A Suno task (`data` of `GET /suno/fetch/{id}`): submitted | queued | in_progress | success | failure (any case). */
export function sunoUpdate(v: unknown): TaskUpdate | undefined {
	const o = obj(v)
	const s = str(o?.status)?.toLowerCase()
	if (!o || !s) return undefined
	const status: TaskStatus = ['success', 'succeeded', 'complete', 'completed'].includes(s)
		? 'completed'
		: ['failure', 'failed', 'fail', 'error'].includes(s)
			? 'failed'
			: ['in_progress', 'processing', 'streaming', 'running'].includes(s)
				? 'in_progress'
				: 'queued'
	return { status, progress: percent(o.progress), result: o, error: str(o.fail_reason) ?? (status === 'failed' ? 'suno task failed' : undefined) }
}

/**
 * A Gemini long-running Operation (`GET /v1beta/{name}`, ai.google.dev/gemini-api/docs/video): not `done` yet →
 * in progress; done with `error` (a google.rpc.Status) → failed; done with videos → completed, their upstream URIs kept
 * (`samples`); done with none (all withheld by the safety filter, `raiMediaFilteredCount`) → failed, nothing delivered.
 */
export function veoUpdate(v: unknown): TaskUpdate | undefined {
	const o = obj(v)
	if (!o || typeof o.name !== 'string') return undefined
	if (o.done !== true) return { status: 'in_progress', progress: percent(obj(o.metadata)?.progressPercent) }
	const err = obj(o.error)
	if (err) return { status: 'failed', error: str(err.message) ?? 'video generation failed' }
	const answer = obj(obj(o.response)?.generateVideoResponse)
	const samples = (Array.isArray(answer?.generatedSamples) ? answer.generatedSamples : []).map((s) => str(obj(obj(s)?.video)?.uri)).filter((u): u is string => !!u)
	const filtered: Obj = {}
	for (const k of ['raiMediaFilteredCount', 'raiMediaFilteredReasons']) if (answer?.[k] !== undefined) filtered[k] = answer[k]
	if (!samples.length) {
		const reasons = Array.isArray(answer?.raiMediaFilteredReasons) ? answer.raiMediaFilteredReasons.filter((r) => typeof r === 'string') : []
		return { status: 'failed', error: reasons.length ? `no video was generated: ${reasons.join('; ')}` : 'no video was generated' }
	}
	return { status: 'completed', result: { samples, ...filtered } }
}

/** GET a JSON document from the channel; undefined when the answer is not a readable 2xx. */
export async function pollJson(ch: Channel, path: string, signal: AbortSignal): Promise<unknown> {
	const { res } = await fetchUpstream(channelUrl(ch, path), { method: 'GET', headers: authHeaders(ch) }, POLL_TIMEOUTS, signal)
	const text = await res.text().catch(() => '')
	if (!res.ok) return undefined
	try {
		return JSON.parse(text)
	} catch {
		return undefined
	}
}

/** Where each kind's task state is read, and how. */
export const TASK_POLLERS: Record<Exclude<TaskKind, 'batch' | 'file' | 'message_batch' | 'gemini_batch' | 'anthropic_file' | 'anthropic_container' | 'gemini_file'>, (ch: Channel, upstreamId: string, signal: AbortSignal) => Promise<TaskUpdate | undefined>> = {
	video: async (ch, id, signal) => videoUpdate(await pollJson(ch, `/videos/${encodeURIComponent(id)}`, signal)),
	mj: async (ch, id, signal) => mjUpdate(await pollJson(ch, `/mj/task/${encodeURIComponent(id)}/fetch`, signal)),
	suno: async (ch, id, signal) => sunoUpdate(obj(await pollJson(ch, `/suno/fetch/${encodeURIComponent(id)}`, signal))?.data),
	// The upstream's operation name (`models/{model}/operations/{id}`) is a path under the API version.
	veo: async (ch, name, signal) => veoUpdate(await pollJson(ch, `/v1beta/${name.split('/').map(encodeURIComponent).join('/')}`, signal)),
}
