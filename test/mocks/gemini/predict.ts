/**
 * Gemini's Imagen and Veo methods (ai.google.dev/gemini-api/docs/imagen, …/docs/video):
 * - `POST /v1beta/models/{imagen…}:predict` `{ instances: [{ prompt }], parameters: { sampleCount (1–4, default 4), … } }`
 *   answers `{ predictions: [{ bytesBase64Encoded, mimeType }] }`. A prompt with `#filter` has its last image withheld
 *   by the safety filter (listed as `{ raiFilteredReason }` only with `includeRaiReason`, as Imagen does); `#filterall`
 *   has every image withheld. An `aspectRatio` outside 1:1, 3:4, 4:3, 9:16, 16:9 and an `imageSize` other than 1K/2K
 *   (or any on Imagen 4 Fast and older models) are refused with 400.
 * - `POST /v1beta/models/{veo…}:predictLongRunning` answers a long-running Operation `{ name }`
 *   (`models/{model}/operations/{id}`); `GET /v1beta/{name}` advances it (test/mocks/tasks/progress.ts: running, then
 *   done) to `{ name, done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri } }] } } }`,
 *   or `{ done: true, error }` for a prompt with `#fail`, or no samples but `raiMediaFilteredCount` for `#filter`.
 * - `GET /v1beta/files/{id}:download?alt=media` serves a finished sample's MP4 (the URI above), with the key.
 * @module
 */

import { VIDEO_BYTES } from '../tasks/video'
import { type MockTask, phaseOf, poll } from '../tasks/progress'
import { asArr, asNum, asObj, asStr, type Obj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { unixNow } from '../shared/text'
import { badRequest, geminiError } from './errors'

/** A PNG signature and some filler: what every generated image is. */
export const IMAGE_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array(56).fill(9)])

/** The operations (and their files) one mock holds. */
export type MediaState = { operations: Map<string, MockTask>; files: Map<string, string> }

export const newMediaState = (): MediaState => ({ operations: new Map(), files: new Map() })

/** The prompt of the first instance; a reply when the body is not a predict request. */
function promptOf(body: unknown, jsonError: boolean): { prompt: string; parameters: Obj; samples: number } | Reply {
	const b = asObj(body)
	if (jsonError || !b) return geminiError(400, 'Invalid JSON payload received.')
	const instances = asArr(b.instances)
	const prompt = asStr(asObj(instances[0])?.prompt)
	if (!prompt) return badRequest([{ field: 'instances[0].prompt', description: 'A prompt is required.' }])
	const parameters = asObj(b.parameters) ?? {}
	const samples = parameters.sampleCount === undefined ? undefined : asNum(parameters.sampleCount)
	if (samples !== undefined && !(Number.isInteger(samples) && samples >= 1 && samples <= 4))
		return badRequest([{ field: 'parameters.sample_count', description: 'sampleCount must be between 1 and 4.' }])
	return { prompt, parameters, samples: samples ?? 0 }
}

/** Imagen's aspect ratios; `imageSize` 1K or 2K on Imagen 4 Standard and Ultra only (ai.google.dev/gemini-api/docs/imagen). */
const IMAGEN_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9']
const sized = (model: string) => model.startsWith('imagen-4') && !model.includes('fast')

/** Imagen's refusal of its `aspectRatio` or `imageSize`, or undefined. */
function shapeRefusal(model: string, parameters: Obj): Reply | undefined {
	const ratio = parameters.aspectRatio
	if (ratio !== undefined && !IMAGEN_RATIOS.includes(String(ratio)))
		return badRequest([{ field: 'parameters.aspect_ratio', description: `Unsupported aspect ratio: ${String(ratio)}. Supported values: ${IMAGEN_RATIOS.join(', ')}.` }])
	const size = parameters.imageSize
	if (size !== undefined && (!sized(model) || !['1K', '2K'].includes(String(size))))
		return badRequest([{ field: 'parameters.image_size', description: `Unsupported image size: ${String(size)} for models/${model}.` }])
}

/** `:predict` on an Imagen model. */
export function predict(model: string, body: unknown, jsonError: boolean): Reply {
	if (!model.startsWith('imagen-')) return geminiError(400, `models/${model} does not support predict.`)
	const p = promptOf(body, jsonError)
	if ('type' in p) return p
	const bad = shapeRefusal(model, p.parameters)
	if (bad) return bad
	const made = p.samples || 4
	const shown = p.prompt.includes('#filterall') ? 0 : p.prompt.includes('#filter') ? made - 1 : made
	const mimeType = asStr(asObj(p.parameters.outputOptions)?.mimeType) ?? 'image/png'
	const predictions: Obj[] = Array.from({ length: shown }, () => ({ bytesBase64Encoded: Buffer.from(IMAGE_BYTES).toString('base64'), mimeType }))
	if (shown < made && p.parameters.includeRaiReason === true) predictions.push({ raiFilteredReason: 'Filtered by the mock safety filter.' })
	return json({ predictions })
}

/** `:predictLongRunning` on a Veo model: a new operation, done after `steps` reads. */
export function predictLongRunning(state: MediaState, model: string, body: unknown, jsonError: boolean, steps: number): Reply {
	if (!model.startsWith('veo-')) return geminiError(400, `models/${model} does not support predictLongRunning.`)
	const p = promptOf(body, jsonError)
	if ('type' in p) return p
	const duration = p.parameters.durationSeconds
	if (duration !== undefined && !(Number(duration) >= 4 && Number(duration) <= 8)) return badRequest([{ field: 'parameters.duration_seconds', description: 'durationSeconds must be between 4 and 8.' }])
	const id = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
	const name = `models/${model}/operations/${id}`
	state.operations.set(name, { id, prompt: p.prompt, polls: 0, steps, fails: p.prompt.includes('#fail'), createdAt: unixNow(), meta: { samples: p.samples || 1 } })
	return json({ name })
}

/** `GET /v1beta/{operation name}`. */
export function getOperation(state: MediaState, name: string, origin: string, version: string): Reply {
	const t = state.operations.get(name)
	if (!t) return geminiError(404, `Operation ${name} not found.`)
	const phase = poll(t)
	if (phase === 'queued' || phase === 'running') return json({ name })
	if (phase === 'failed') return json({ name, done: true, error: { code: 13, message: 'Video generation failed due to an internal error.' } })
	if (t.prompt.includes('#filter'))
		return json({ name, done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['Filtered by the mock safety filter.'] } } })
	const generatedSamples = Array.from({ length: Number(t.meta.samples) }, (_, i) => {
		const file = `${t.id}${i}`
		state.files.set(file, name)
		return { video: { uri: `${origin}/${version}/files/${file}:download?alt=media` } }
	})
	return json({ name, done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: { generatedSamples } } })
}

/** `GET /v1beta/files/{id}:download?alt=media`: a generated sample's bytes. */
export function downloadFile(state: MediaState, file: string, query: Record<string, string>): Reply {
	if (query.alt !== 'media') return geminiError(400, 'alt=media is required to download a file.')
	if (!state.files.has(file)) return geminiError(404, `File ${file} not found.`)
	return { type: 'raw', status: 200, contentType: 'video/mp4', body: VIDEO_BYTES }
}
