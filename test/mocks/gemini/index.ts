/**
 * Mock Gemini API server (generativelanguage.googleapis.com shape): /v1beta/models/{model}:{method}, GET /v1beta/models
 * and POST /v1beta/interactions (interactions.ts), also served under /v1 (which @google/genai 3.x calls by default);
 * Imagen's `:predict`, Veo's `:predictLongRunning`, their operations and files (predict.ts); Batch Mode's
 * `:batchGenerateContent` and `/batches` (batches.ts); the Files API's resumable uploads and `/files` (files.ts).
 * Auth is the `x-goog-api-key` header or the `key` query parameter.
 * @module
 */

import { asObj } from '../shared/json'
import { json, type Reply } from '../shared/reply'
import { startMockServer, type MockRequest } from '../shared/server'
import type { MockOptions, VendorMock } from '../shared/types'
import { type GeminiBatchStore, geminiBatches } from './batches'
import { batchEmbedContents, embedContent } from './embed'
import { checkKey, geminiBody, geminiError } from './errors'
import { countTokens, generate } from './generate'
import { createInteraction } from './interactions'
import { checkFileRefs, type GeminiFileStore, geminiFiles, newFileStore } from './files'
import { downloadFile, getOperation, type MediaState, newMediaState, predict, predictLongRunning } from './predict'

/** Models listed by GET /v1beta/models when the mock has no explicit list. */
export const GEMINI_MODELS = ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-3-pro-preview', 'gemini-embedding-001', 'text-embedding-004']

const METHOD_PATH = /^\/(v1beta|v1)\/models\/([^/:]+):([A-Za-z]+)$/

function modelInfo(id: string) {
	const embedding = id.includes('embedding')
	return {
		name: `models/${id}`,
		version: '001',
		displayName: id,
		description: `Mock ${id}`,
		inputTokenLimit: embedding ? 2048 : 1048576,
		outputTokenLimit: embedding ? 1 : 65536,
		supportedGenerationMethods: embedding ? ['embedContent', 'batchEmbedContents'] : ['generateContent', 'countTokens'],
		...(embedding ? {} : { temperature: 1, topP: 0.95, topK: 64, maxTemperature: 2, thinking: true }),
	}
}

/** Imagen's and Veo's operations and files (predict.ts): read `steps` times before they are done. */
const OPERATION = /^\/(v1beta|v1)\/(models\/[^/:]+\/operations\/[^/:]+)$/
const FILE = /^\/(v1beta|v1)\/files\/([a-z0-9]+):download$/

function route(req: MockRequest, opts: MockOptions, media: MediaState, batches: GeminiBatchStore, files: GeminiFileStore): Reply {
	const bad = checkKey(req.headers, req.query, opts.apiKey)
	if (bad) return bad
	const { method, path, body, jsonError } = req
	// A batch request naming a file reads it as generateContent does: from this key's files only.
	const run = (model: string, request: Record<string, unknown>) => checkFileRefs(files, request, req.origin) ?? generate({ model, version: 'v1beta' }, request, false, false, false, opts.models)
	const batch = geminiBatches(batches, files, method, path, req.query, body, run, req.origin)
	if (batch) return batch
	const filed = geminiFiles(files, method, path, req.query, req.headers, body, req.bytes, req.origin)
	if (filed) return filed
	const op = method === 'GET' ? OPERATION.exec(path) : null
	if (op) return getOperation(media, op[2]!, req.origin, op[1]!)
	const file = method === 'GET' ? FILE.exec(path) : null
	if (file) return downloadFile(media, file[2]!, req.query)
	if (method === 'GET' && (path === '/v1beta/models' || path === '/v1/models')) return json({ models: (opts.models ?? GEMINI_MODELS).map(modelInfo) })
	if (method === 'GET' && /^\/(v1beta|v1)\/models\/[^/:]+$/.test(path)) {
		const id = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1))
		if (opts.models && !opts.models.includes(id)) return geminiError(404, `models/${id} is not found for API version ${path.split('/')[1]}`)
		return json(modelInfo(id))
	}
	if (method === 'POST' && (path === '/v1beta/interactions' || path === '/v1/interactions')) return createInteraction(body, jsonError)
	const m = method === 'POST' ? METHOD_PATH.exec(path) : null
	if (m) {
		const model = decodeURIComponent(m[2])
		const target = { model, version: m[1] }
		const unreadable = m[3] === 'generateContent' || m[3] === 'streamGenerateContent' || m[3] === 'countTokens' ? checkFileRefs(files, asObj(asObj(body)?.generateContentRequest) ?? body, req.origin) : undefined
		if (unreadable) return unreadable
		switch (m[3]) {
			case 'generateContent':
				return generate(target, body, jsonError, false, false, opts.models)
			case 'streamGenerateContent': {
				const sse = req.query.alt === 'sse'
				const reply = generate(target, body, jsonError, true, sse, opts.models)
				// Without alt=sse even an error comes as a JSON array: `[{ "error": … }]`.
				return !sse && reply.type === 'json' && reply.status >= 400 ? { ...reply, body: [reply.body] } : reply
			}
			case 'countTokens':
				return countTokens(target, body, jsonError, opts.models, opts.countTools)
			case 'embedContent':
				return embedContent(model, body, jsonError)
			case 'batchEmbedContents':
				return batchEmbedContents(model, body, jsonError)
			case 'predict':
				return predict(model, body, jsonError)
			case 'predictLongRunning':
				return predictLongRunning(media, model, body, jsonError, 2)
		}
	}
	return geminiError(404, `Method not found: ${method} ${path}`)
}

/** The in-stream error is an `{ error }` object (503 UNAVAILABLE): a `data:` frame with alt=sse, else an array element. */
function streamError(req: { query: Record<string, string> }, sequence: number, status = 503): { frame: string; status: number } {
	const error = JSON.stringify(geminiBody(status))
	if (req.query.alt === 'sse') return { frame: `data: ${error}\r\n\r\n`, status }
	return { frame: `${sequence === 0 ? '[' : '\r\n,'}${error}]`, status }
}

/**
 * Starts a mock Gemini API on a free port; `url` is the bare origin `http://127.0.0.1:PORT`.
 * @example
 * const m = await startGeminiMock({ apiKey: 'up-key' })
 * new GoogleGenAI({ apiKey: 'up-key', httpOptions: { baseUrl: m.url } })
 */
export async function startGeminiMock(opts: MockOptions): Promise<VendorMock & { media: MediaState; files: GeminiFileStore }> {
	const media = newMediaState()
	const batches: GeminiBatchStore = new Map()
	const files = newFileStore()
	const mock = await startMockServer({ basePath: '', handle: (req) => route(req, opts, media, batches, files), statusBody: (s) => geminiBody(s), streamError }, opts)
	return Object.assign(mock, { media, files })
}
