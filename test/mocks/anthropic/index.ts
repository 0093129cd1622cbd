/**
 * Mock Anthropic API server: POST /v1/messages, /v1/messages/count_tokens, the Message Batches API (batches.ts), the
 * Files API (files.ts), GET /v1/models. The code execution tool writes files to the Files store (code-execution.ts).
 * Auth is `x-api-key`; `anthropic-version` is required on every call, as the real API requires it. Messages may
 * name a message thread (threads.ts), kept in this mock's memory.
 * @module
 */

import { frame, json, type Reply } from '../shared/reply'
import { startMockServer, type MockRequest } from '../shared/server'
import type { MockOptions, VendorMock } from '../shared/types'
import { type BatchStore, messageBatches } from './batches'
import { anthropicBody, anthropicError, checkHeaders } from './errors'
import type { ContainerStore } from './code-execution'
import { type FileStore, fileRefsError, files } from './files'
import { countTokens, messages, notFound } from './messages'
import type { PromptCacheStore } from './prompt-cache'
import type { ThreadStore } from './threads'

/** Models listed by GET /v1/models when the mock has no explicit list. */
export const ANTHROPIC_MODELS = ['claude-opus-5', 'claude-sonnet-5', 'claude-haiku-4-5']

const modelInfo = (id: string) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })

async function route(req: MockRequest, opts: MockOptions, threads: ThreadStore, batches: BatchStore, store: FileStore, containers: ContainerStore, caches: PromptCacheStore): Promise<Reply> {
	const bad = checkHeaders(req.headers, opts.apiKey)
	if (bad) return bad
	const { method, path, body, jsonError } = req
	const version = req.headers.get('anthropic-version') ?? ''
	const code = { files: store, containers }
	if (method === 'POST' && path === '/v1/messages') return fileRefsError(store, body, req.headers) ?? messages(body, jsonError, version, opts.models, req.headers, threads, code, caches)
	const file = await files(store, method, path, req.query, req.headers, req.form)
	if (file) return file
	// Files named are read as by /v1/messages: with the beta, and from this key's store only (else 404; in a batch, that request's error).
	if (method === 'POST' && path === '/v1/messages/count_tokens') return fileRefsError(store, body, req.headers) ?? countTokens(body, jsonError, version, opts.countTools)
	if (path.startsWith('/v1/messages/batches')) {
		const run = (params: Record<string, unknown>) => fileRefsError(store, params, req.headers) ?? messages(params, false, version, opts.models, req.headers, threads, code, caches)
		const reply = messageBatches(batches, method, path, req.query, body, req.origin, run)
		if (reply) return reply
	}
	if (method === 'GET' && path === '/v1/models') {
		const ids = opts.models ?? ANTHROPIC_MODELS
		return json({ data: ids.map(modelInfo), has_more: false, first_id: ids[0] ?? null, last_id: ids[ids.length - 1] ?? null })
	}
	if (method === 'GET' && path.startsWith('/v1/models/')) {
		const id = decodeURIComponent(path.slice('/v1/models/'.length))
		return opts.models && !opts.models.includes(id) ? notFound(id) : json(modelInfo(id))
	}
	return anthropicError(404, 'Not Found')
}

/** The in-stream error is an `event: error` frame (an overloaded_error, the 529 of a non-stream call, unless `status` says another). */
const streamError = (_req: unknown, _sequence: number, status = 529): { frame: string; status: number } => ({ frame: frame(anthropicBody(status), 'error'), status })

/**
 * Starts a mock Anthropic API on a free port; `url` is the bare origin `http://127.0.0.1:PORT`.
 * @example
 * const m = await startAnthropicMock({ apiKey: 'up-key' })
 * new Anthropic({ apiKey: 'up-key', baseURL: m.url })
 */
export async function startAnthropicMock(opts: MockOptions): Promise<VendorMock> {
	const threads: ThreadStore = new Map()
	const batches: BatchStore = new Map()
	const store: FileStore = new Map()
	const caches: PromptCacheStore = []
	const containers: ContainerStore = new Set()
	return startMockServer({ basePath: '', handle: (req) => route(req, opts, threads, batches, store, containers, caches), statusBody: (s) => anthropicBody(s), streamError }, opts)
}
