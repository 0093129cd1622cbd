/**
 * Veo's `:predictLongRunning` (ai.google.dev/gemini-api/docs/video) as a task of kind `veo` (src/tasks): the body goes
 * verbatim to a Gemini channel, and once it answers an Operation `{ name }` the job is charged
 * (`per_request` + seconds × videos × (`per_second_<WxH>` of the frame, or `per_second`), the seconds from
 * `parameters.durationSeconds`, Veo's default 8 when absent) and recorded to the account. The client gets the gateway's
 * own operation name, `models/{model}/operations/{task id}`, which only that account can poll (operations.ts); a
 * failed operation is refunded once. The finished Operation's video URIs point at the gateway (`/v1beta/files/…`),
 * which streams each video from the channel with the channel's key.
 * @module
 */
import { GatewayError } from '../../core/errors'
import { randomString } from '../../lib/ids'
import { jsonResponse, readJson, relayPassthrough } from '../../passthrough/relay'
import { geminiMethodUrl } from '../../providers/native-endpoints'
import { jsonHeaders } from '../../passthrough/upstream'
import type { TaskRow } from '../../tasks/store'
import { taskOp } from '../../tasks/submit'
import { veoUpdate } from '../../tasks/upstream'
import { videoCost } from '../video/submit'
import type { ModelCall } from './generate'
import { type GeminiOperation, PredictRequest } from './predict-model'
import { checkBody } from './target'

/** Seconds Veo renders when `durationSeconds` is left out (Veo 2, 3 and 3.1 all default to 8). */
export const DEFAULT_VEO_SECONDS = 8

/**
 * A task id that is also a Gemini file id: lowercase letters and digits only, since @google/genai's `files.download`
 * takes the id from a video URI as the run of `[a-z0-9]` after `files/`.
 */
const newVeoId = (): string => `veo${randomString(24).toLowerCase()}`

/** The id of sample `i` of a task, and back (the task id has a fixed length). */
export const sampleFile = (taskId: string, i: number): string => `${taskId}${i}`
export function parseSampleFile(file: string): { taskId: string; index: number } | undefined {
	const m = /^(veo[a-z0-9]{24})(\d{1,2})$/.exec(file)
	return m ? { taskId: m[1]!, index: Number(m[2]) } : undefined
}

/** The gateway's operation name for a task. */
export const operationName = (task: Pick<TaskRow, 'id' | 'model'>): string => `models/${task.model}/operations/${task.id}`

/**
 * A task as Gemini's Operation, its videos' URIs on the gateway under /v1beta, as Google's are (`base` is PUBLIC_URL
 * or the request's origin).
 * @example operationView(task, 'https://gw.example.com') // { name: 'models/veo-…/operations/veo…', done: false }
 */
export function operationView(task: TaskRow, base: string): GeminiOperation {
	const name = operationName(task)
	if (task.status === 'failed') return { name, done: true, error: { code: 13, message: task.error ?? 'video generation failed', status: 'INTERNAL' } }
	if (task.status !== 'completed') return { name, done: false }
	const r = task.result ?? {}
	const samples = Array.isArray(r.samples) ? r.samples : []
	const generateVideoResponse: Record<string, unknown> = {
		generatedSamples: samples.map((_, i) => ({ video: { uri: `${base}/v1beta/files/${sampleFile(task.id, i)}:download?alt=media` } })),
	}
	for (const k of ['raiMediaFilteredCount', 'raiMediaFilteredReasons']) if (r[k] !== undefined) generateVideoResponse[k] = r[k]
	return { name, done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse } as GeminiOperation['response'] }
}

/**
 * The frame size Veo renders, `WxH` as OpenAI's video sizes are priced (`per_second_<WxH>`): `resolution` 720p (the
 * default) or 1080p, landscape for `aspectRatio` 16:9 (the default), portrait for 9:16.
 * @example frameSize({ resolution: '1080p' }) // '1920x1080'
 */
export function frameSize(parameters: { resolution?: unknown; aspectRatio?: unknown } = {}): string | undefined {
	const [w, h] = parameters.resolution === undefined || parameters.resolution === '720p' ? [1280, 720] : parameters.resolution === '1080p' ? [1920, 1080] : []
	if (!w) return undefined
	if (parameters.aspectRatio === undefined || parameters.aspectRatio === '16:9') return `${w}x${h}`
	return parameters.aspectRatio === '9:16' ? `${h}x${w}` : undefined
}

/** Seconds asked for; 400 naming the field when it is not a positive number. */
function secondsOf(asked: unknown): number {
	if (asked === undefined) return DEFAULT_VEO_SECONDS
	const s = Number(asked)
	if (!(Number.isFinite(s) && s > 0 && s <= 600)) throw new GatewayError('invalid_request', `Invalid value at 'parameters.durationSeconds': ${String(asked)}`, { param: 'parameters.durationSeconds' })
	return s
}

export function submitVeo(c: ModelCall, body: unknown, base: string): Promise<Response> {
	const wire = checkBody(PredictRequest, body)
	const seconds = secondsOf(wire.parameters?.durationSeconds)
	const videos = (wire.parameters?.sampleCount ?? 1) * wire.instances.length
	const size = frameSize(wire.parameters)
	const text = JSON.stringify(wire)
	const prompt = wire.instances[0]?.prompt
	return relayPassthrough(
		taskOp({
			ctx: { svc: c.svc, token: c.token, requestId: c.requestId, startedAt: c.startedAt, signal: c.request.signal },
			kind: 'veo',
			endpoint: `${c.version}/models/{model}:predictLongRunning`,
			model: c.model,
			types: ['gemini'],
			shape: 'gemini',
			id: newVeoId(),
			cost: (p) => videoCost(p, seconds * videos, size),
			request: (ch, upstreamModel) => ({ url: geminiMethodUrl(ch, upstreamModel, 'predictLongRunning'), headers: jsonHeaders(ch), body: text }),
			async accept(res) {
				const op = await readJson<{ name?: unknown }>(res)
				if (typeof op.name !== 'string' || !op.name) throw new GatewayError('upstream', 'upstream accepted the video without an operation name', { code: 'upstream_malformed' })
				const update = veoUpdate(op)
				return { response: new Response(null), upstreamId: op.name, update: update?.status === 'in_progress' ? undefined : update, result: { seconds, videos, ...(prompt ? { prompt } : {}) } }
			},
			reply: (task) => jsonResponse(operationView(task, base), c.requestId),
		}),
	)
}
