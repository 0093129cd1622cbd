/**
 * Mock OpenAI video API (developers.openai.com/api/reference/resources/videos): `POST /v1/videos` (JSON or
 * multipart, `input_reference` checked as OpenAI does) answers a queued video job, `GET /v1/videos/{id}` advances it (see progress.ts),
 * `GET /v1/videos/{id}/content?variant=` serves the MP4 (`video`, the default), a WebP `thumbnail` or a JPEG
 * `spritesheet` once it completed, `POST /v1/videos/{id}/remix` `{ prompt }` starts a new job from a completed one
 * (same model, seconds and size, `remixed_from_video_id` set), and `DELETE /v1/videos/{id}` removes a completed or
 * failed job (`{ id, object: 'video.deleted', deleted: true }`). A prompt with `#reject` is refused like the
 * moderation system does; `#fail` makes the job fail.
 * @module
 */

import { asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { startMockServer } from '../shared/server'
import { unixNow } from '../shared/text'
import type { VendorMock } from '../shared/types'
import { checkBearer, openaiError, openaiStatusBody } from '../openai/errors'
import { type MockTask, type TaskMockOptions, percentOf, phaseOf, poll } from './progress'

const SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024']
const SECONDS = ['4', '8', '12']
/** What every finished video is: an `ftyp` box header and some filler. */
export const VIDEO_BYTES = new Uint8Array([0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70, 0x6d, 0x70, 0x34, 0x32, ...new Array(4096).fill(7)])
/** The preview assets of a finished video: a WebP thumbnail (`RIFF….WEBP`) and a JPEG spritesheet (`FF D8 FF`). */
export const THUMBNAIL_BYTES = new Uint8Array([0x52, 0x49, 0x46, 0x46, 0x24, 0, 0, 0, 0x57, 0x45, 0x42, 0x50, ...new Array(64).fill(3)])
export const SPRITESHEET_BYTES = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, ...new Array(64).fill(5), 0xff, 0xd9])

/** What each `variant` of `GET /videos/{id}/content` serves (the guide: video mp4, thumbnail webp, spritesheet jpg). */
const ASSETS: Record<string, { contentType: string; body: Uint8Array<ArrayBuffer> }> = {
	video: { contentType: 'video/mp4', body: VIDEO_BYTES },
	thumbnail: { contentType: 'image/webp', body: THUMBNAIL_BYTES },
	spritesheet: { contentType: 'image/jpeg', body: SPRITESHEET_BYTES },
}

export interface VideoMock extends VendorMock {
	readonly videos: Map<string, MockTask>
}

function view(t: MockTask): Obj {
	const phase = phaseOf(t)
	const status = phase === 'queued' ? 'queued' : phase === 'running' ? 'in_progress' : phase === 'done' ? 'completed' : 'failed'
	return {
		id: t.id,
		object: 'video',
		model: t.meta.model,
		status,
		progress: percentOf(t),
		created_at: t.createdAt,
		completed_at: phase === 'done' ? unixNow() : null,
		expires_at: phase === 'done' ? unixNow() + 3600 : null,
		prompt: t.prompt,
		seconds: t.meta.seconds,
		size: t.meta.size,
		remixed_from_video_id: (t.meta.remixedFrom as string | undefined) ?? null,
		error: phase === 'failed' ? { code: 'video_generation_failed', message: 'The video could not be generated.' } : null,
	}
}

function create(body: Obj, videos: Map<string, MockTask>, steps: number): Reply {
	const prompt = asStr(body.prompt)
	if (!prompt) return openaiError(400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter')
	const seconds = body.seconds === undefined ? '4' : String(body.seconds)
	if (!SECONDS.includes(seconds)) return openaiError(400, `Invalid value: '${seconds}'. Supported values are: '4', '8', and '12'.`, 'seconds', 'invalid_value')
	const size = asStr(body.size) ?? '720x1280'
	if (!SIZES.includes(size)) return openaiError(400, `Invalid value: '${size}'. Supported values are: ${SIZES.map((s) => `'${s}'`).join(', ')}.`, 'size', 'invalid_value')
	if (prompt.includes('#reject')) return openaiError(400, 'Your request was blocked by our moderation system.', null, 'moderation_blocked')
	const id = `video_${crypto.randomUUID().replaceAll('-', '')}`
	const t: MockTask = { id, prompt, polls: 0, steps, fails: prompt.includes('#fail'), createdAt: unixNow(), meta: { model: asStr(body.model) ?? 'sora-2', seconds, size } }
	videos.set(id, t)
	return json(view(t))
}

/**
 * `input_reference`: in multipart an image file; in JSON `{ image_url }` or `{ file_id }` (ImageInputReferenceParam).
 * Anything else (a text field, `{}`) is refused as OpenAI refuses it.
 */
function checkReference(form: FormData | undefined, body: Obj): Reply | undefined {
	const ref = form ? form.get('input_reference') : body.input_reference
	if (ref === null || ref === undefined) return undefined
	if (form) {
		if (!(ref instanceof File)) return openaiError(400, "Invalid 'input_reference': expected a file.", 'input_reference', 'invalid_type')
		if (ref.size === 0 || !/^image\/(png|jpeg|webp)$/.test(ref.type)) return openaiError(400, `Invalid file 'input_reference': unsupported mimetype ('${ref.type}'). Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.`, 'input_reference', 'invalid_value')
		return undefined
	}
	const r = ref as Obj
	if (typeof r !== 'object' || Array.isArray(r) || (typeof r.image_url !== 'string' && typeof r.file_id !== 'string'))
		return openaiError(400, "Invalid 'input_reference': expected an object with 'image_url' or 'file_id'.", 'input_reference', 'invalid_value')
	return undefined
}

/** `POST /videos/{id}/remix`: a new job like its completed source, with the new prompt. */
function remix(source: MockTask, body: Obj, videos: Map<string, MockTask>, steps: number): Reply {
	const prompt = asStr(body.prompt)
	if (!prompt) return openaiError(400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter')
	if (phaseOf(source) !== 'done') return openaiError(400, `Video '${source.id}' is not completed and cannot be remixed.`, null, 'invalid_request')
	const id = `video_${crypto.randomUUID().replaceAll('-', '')}`
	const t: MockTask = { id, prompt, polls: 0, steps, fails: prompt.includes('#fail'), createdAt: unixNow(), meta: { ...source.meta, remixedFrom: source.id } }
	videos.set(id, t)
	return json(view(t))
}

/**
 * Starts the mock on a free port; `url` is `http://127.0.0.1:PORT/v1` (a `video` channel's base_url).
 * @example const m = await startVideoMock({ apiKey: 'up-video', steps: 2 })
 */
export async function startVideoMock(opts: TaskMockOptions): Promise<VideoMock> {
	const videos = new Map<string, MockTask>()
	const steps = opts.steps ?? 2
	const mock = startMockServer(
		{
			basePath: '/v1',
			handle(req) {
				const bad = checkBearer(req.headers, opts.apiKey)
				if (bad) return bad
				const { method, path } = req
				if (method === 'POST' && path === '/v1/videos') {
					const body = req.form ? Object.fromEntries([...req.form.entries()].filter(([, v]) => typeof v === 'string')) : req.body
					if (req.jsonError || !body || typeof body !== 'object') return openaiError(400, 'We could not parse the JSON body of your request.')
					const bad = checkReference(req.form, body as Obj)
					return bad ?? create(body as Obj, videos, steps)
				}
				const m = /^\/v1\/videos\/([^/]+)(\/content|\/remix)?$/.exec(path)
				const t = m ? videos.get(m[1]!) : undefined
				if (m && !t) return openaiError(404, `Video with id '${m[1]}' not found.`, null, 'not_found')
				if (method === 'GET' && t && !m![2]) {
					poll(t)
					return json(view(t))
				}
				if (method === 'GET' && t && m![2] === '/content') {
					if (phaseOf(t) !== 'done') return openaiError(400, 'Video is not ready yet.', null, 'video_not_ready')
					const asset = ASSETS[req.query.variant ?? 'video']
					if (!asset) return openaiError(400, `Invalid value: '${req.query.variant}'. Supported values are: 'video', 'thumbnail', and 'spritesheet'.`, 'variant', 'invalid_value')
					return { type: 'raw', status: 200, contentType: asset.contentType, body: asset.body }
				}
				if (method === 'POST' && t && m![2] === '/remix') {
					const body = req.form ? Object.fromEntries(req.form.entries()) : req.body
					if (req.jsonError || !body || typeof body !== 'object') return openaiError(400, 'We could not parse the JSON body of your request.')
					return remix(t, body as Obj, videos, steps)
				}
				if (method === 'DELETE' && t && !m![2]) {
					const phase = phaseOf(t)
					if (phase !== 'done' && phase !== 'failed') return openaiError(400, `Video '${t.id}' is still being generated; only a completed or failed video can be deleted.`, null, 'invalid_request')
					videos.delete(t.id)
					return json({ id: t.id, object: 'video.deleted', deleted: true })
				}
				return openaiError(404, `Invalid URL (${method} ${path})`)
			},
			statusBody: openaiStatusBody,
			streamError: () => ({ frame: '', status: 500 }),
		},
		{ apiKey: opts.apiKey },
	)
	return Object.assign(mock, { videos })
}
