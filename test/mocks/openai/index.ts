/**
 * Mock OpenAI API server: routes, auth (`Authorization: Bearer`) and the vendor's 404s.
 * @module
 */

import { frame, json, type Reply } from '../shared/reply'
import { startMockServer, type MockRequest } from '../shared/server'
import type { MockOptions, VendorMock } from '../shared/types'
import { chatCompletions } from './chat'
import { completions } from './completions'
import { rerank, embeddings, moderations } from './embeddings'
import { checkBearer, openaiError, openaiStatusBody } from './errors'
import { imageFile, imageGenerations, speech, transcriptions } from './media'
import { imageEdits, imageVariations } from './image-edits'
import { translations } from './audio-translations'
import { responses } from './responses'
import { compactResponse } from './responses-compact'
import { storedResponseRoute, storeOf } from './responses-store'
import { filesAndBatches, unknownFile } from './batches'

/** Models listed by GET /v1/models when the mock has no explicit list. */
export const OPENAI_MODELS = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'o3-mini', 'text-embedding-3-small', 'text-embedding-3-large', 'whisper-1', 'tts-1', 'dall-e-3']

/** The model requests whose content parts may name files by id. */
const MODEL_PATHS = new Set(['/v1/chat/completions', '/v1/responses', '/v1/responses/compact', '/v1/responses/input_tokens'])

function route(req: MockRequest, opts: MockOptions): Reply | Promise<Reply> {
	const { method, path, body, jsonError } = req
	// Image URLs are public (like the CDN links OpenAI returns), so they skip auth.
	if (method === 'GET' && path.startsWith('/v1/mock-files/')) return imageFile()
	const unauthorized = checkBearer(req.headers, opts.apiKey)
	if (unauthorized) return unauthorized
	if (method === 'GET' && path === '/v1/models') {
		const ids = opts.models ?? OPENAI_MODELS
		return json({ object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'system' })) })
	}
	if (method === 'GET' && path.startsWith('/v1/models/')) {
		const id = decodeURIComponent(path.slice('/v1/models/'.length))
		if (opts.models && !opts.models.includes(id)) return openaiError(404, `The model '${id}' does not exist`, 'model', 'model_not_found')
		return json({ id, object: 'model', created: 1700000000, owned_by: 'system' })
	}
	// A file named in a model request must be one the organisation holds (uploaded, or a batch's output).
	const noFile = method === 'POST' && MODEL_PATHS.has(path) ? unknownFile(opts, body) : undefined
	if (noFile) return noFile
	if (method === 'POST' && path === '/v1/responses/compact') return compactResponse(body, jsonError, opts.models, storeOf(opts))
	const stored = path.startsWith('/v1/responses/') ? storedResponseRoute(storeOf(opts), method, path, req.query, body) : undefined
	if (stored) return stored
	const batchRoute = path.startsWith('/v1/files') || path.startsWith('/v1/batches') ? filesAndBatches(opts, method, path, body, req.form) : undefined
	if (batchRoute) return batchRoute
	if (method === 'POST') {
		switch (path) {
			case '/v1/chat/completions':
				return chatCompletions(body, jsonError, opts.models, opts.alnum9ToolCallIds, opts.prefix)
			case '/v1/completions':
				return completions(body, jsonError, opts.models)
			case '/v1/responses':
				return responses(body, jsonError, opts.models, storeOf(opts))
			case '/v1/embeddings':
				return embeddings(body, jsonError, opts.models)
			case '/v1/moderations':
				return moderations(body, jsonError)
			case '/v1/rerank':
				return rerank(body, jsonError)
			case '/v1/images/generations':
				return imageGenerations(body, jsonError, req.origin)
			case '/v1/images/edits':
				return imageEdits(body, req.form, jsonError, req.origin)
			case '/v1/images/variations':
				return imageVariations(req.form, req.origin)
			case '/v1/audio/speech':
				return speech(body, jsonError, opts.speechStreamFormat)
			case '/v1/audio/transcriptions':
				return transcriptions(req.form)
			case '/v1/audio/translations':
				return translations(req.form)
		}
	}
	return openaiError(404, `Invalid URL (${method} ${path})`, null, null, 'invalid_request_error')
}

/**
 * In-stream errors: Chat Completions sends a bare `data: {"error":…}`; the Responses API an `error` event; image
 * streams an `error` event with the error object (what the SDK raises as an APIError).
 */
function streamError({ path }: { path: string }, sequence: number, status = 500): { frame: string; status: number } {
	const error = (openaiStatusBody(status) as { error: { message: string; type: string; code: string | null } }).error
	if (path.endsWith('/responses')) {
		return { frame: frame({ type: 'error', code: error.code ?? 'server_error', message: error.message, param: null, sequence_number: sequence }, 'error'), status }
	}
	if (path.endsWith('/images/generations') || path.endsWith('/images/edits')) return { frame: frame({ type: 'error', error }, 'error'), status }
	return { frame: frame({ error }), status }
}

/**
 * Starts a mock OpenAI API on a free port; `url` is `http://127.0.0.1:PORT/v1`.
 * @example
 * const m = await startOpenAIMock({ apiKey: 'up-key' })
 * await fetch(`${m.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer up-key' }, body })
 * await m.stop()
 */
export async function startOpenAIMock(opts: MockOptions): Promise<VendorMock> {
	return startMockServer({ basePath: '/v1', handle: (req) => route(req, opts), statusBody: openaiStatusBody, streamError }, opts)
}
