/**
 * Which protocol's error shape a path answers in, and the rendering of a GatewayError as a Response.
 * Every error the gateway returns goes through `errorResponse`, so the shape and status are decided in one place.
 * @module
 */
import { GatewayError } from '../core/errors'
import { encodeError as encodeAnthropicError } from '../protocols/anthropic-messages/error'
import type { EncodedError } from '../protocols/codec'
import { gemini } from '../protocols/gemini'
import { openaiChat } from '../protocols/openai-chat'
import { encodeMjError, encodeSunoError } from '../passthrough/task-errors'

/** `midjourney` and `suno`: the task services' own shapes (passthrough/task-errors.ts). */
export type ErrorShape = 'openai' | 'anthropic' | 'gemini' | 'midjourney' | 'suno'

/** Bedrock's InvokeModel paths, with the trailing slash the dialect serves too (request-guard.ts `pathOf`). */
const BEDROCK_INVOKE = /^\/model\/[^/]+\/invoke(-with-response-stream)?\/?$/

/**
 * `/v1/messages…` speaks Anthropic (and Claude in Vertex's format, `…/publishers/anthropic/models/…`), `/v1beta/…` Gemini, and so do Gemini model methods under `/v1/models/{model}:{method}`
 * (where @google/genai 3.x calls them), its Interactions API under `/v1/interactions`, its uploads under `/upload/…`, its
 * downloads under `/download/…` and its Live API under `/ws/google.ai.…`; `/mj/…` midjourney-proxy's and `/suno/…`
 * new-api's task shape, which their clients read; everything else (incl. /api) OpenAI's shape.
 */
export function shapeForPath(path: string): ErrorShape {
	if (path.startsWith('/mj/') || path === '/mj') return 'midjourney'
	if (path.startsWith('/suno/') || path === '/suno') return 'suno'
	if (path.startsWith('/v1/messages')) return 'anthropic'
	// Claude in Vertex AI's format (vertex-dialect.ts), refused before its body is read: Claude Code reads Anthropic's.
	if (path.includes('/publishers/anthropic/models/')) return 'anthropic'
	// Claude in Bedrock's format (bedrock-dialect.ts), refused before its rewrite onto /v1/messages: the Anthropic Bedrock
	// SDK reads Anthropic's, as the rewritten call answers. Not Converse (`/model/{id}/converse`), which is not served.
	if (BEDROCK_INVOKE.test(path)) return 'anthropic'
	if (path.startsWith('/v1beta/') || path === '/v1beta' || path.startsWith('/v1alpha/') || path.startsWith('/upload/') || path.startsWith('/download/')) return 'gemini'
	if (path === '/v1/interactions' || path.startsWith('/v1/interactions/')) return 'gemini'
	if (path === '/v1/cachedContents' || path.startsWith('/v1/cachedContents/')) return 'gemini'
	if (path.startsWith('/ws/google.ai.') || path.startsWith('//ws/google.ai.')) return 'gemini'
	if (path.startsWith('/v1/models/') && /:[A-Za-z]+$|\/operations\/[^/]+$/.test(path)) return 'gemini'
	return 'openai'
}

/**
 * A request from Anthropic's clients: they send `anthropic-version` (the SDKs always do) or `anthropic-beta`, and
 * authenticate with `x-api-key` where OpenAI's send `Authorization: Bearer`. Tells Anthropic's Files API from OpenAI's
 * on the paths they share (`/v1/files…`).
 */
export const isAnthropicClient = (request: Request): boolean => {
	const h = request.headers
	return h.has('anthropic-version') || h.has('anthropic-beta') || (h.has('x-api-key') && !h.has('authorization'))
}

/** A request from Google's clients: they authenticate with `x-goog-api-key` or `?key=` where others send a bearer. */
const isGoogleClient = (request: Request): boolean =>
	request.headers.has('x-goog-api-key') || (!request.headers.has('authorization') && new URL(request.url).searchParams.has('key'))

/**
 * `/v1/files…` is OpenAI's Files API, Anthropic's, and where @google/genai (its default `apiVersion` being `v1`) looks
 * for Gemini's: the caller's clients tell which shape it answers in. So does `/v1/models…`, whose lists answer
 * Anthropic's shape to a request with `anthropic-version` and Gemini's to Google's clients (modules/models/shapes.ts
 * `shapeOf`): its errors (a bad key) too, with `request-id`, which the Anthropic SDK's `models.list()` reads.
 */
export function shapeForRequest(request: Request, path: string): ErrorShape {
	const shape = shapeForPath(path)
	if (shape !== 'openai') return shape
	const files = path.startsWith('/v1/files')
	const models = path.startsWith('/v1/models') && (path.length === 10 || path[10] === '/')
	if (!files && !models) return shape
	if (files ? isAnthropicClient(request) : request.headers.get('anthropic-version')) return 'anthropic'
	return isGoogleClient(request) ? 'gemini' : shape
}

/**
 * An unknown path has no protocol of its own, so its 404 speaks the caller's: Anthropic's clients send
 * `anthropic-version` and call `…/messages` (the SDK given `{root}/v1` calls /v1/v1/messages), Google's send
 * `x-goog-api-key` or call under /v1beta; anyone else reads OpenAI's shape.
 */
export function shapeForUnknownPath(request: Request, path: string): ErrorShape {
	if (request.headers.has('anthropic-version') || /\/messages(\/count_tokens)?\/?$/.test(path)) return 'anthropic'
	if (request.headers.has('x-goog-api-key')) return 'gemini'
	return shapeForPath(path)
}

/** `requestId` is used where the shape has a place for it (Anthropic's `request_id`, and its `request-id` header). */
const renderers: Record<ErrorShape, (e: GatewayError, requestId?: string) => EncodedError> = {
	openai: openaiChat.encodeError,
	anthropic: encodeAnthropicError,
	gemini: gemini.encodeError,
	midjourney: encodeMjError,
	suno: encodeSunoError,
}

export function errorResponse(err: unknown, shape: ErrorShape, requestId?: string): Response {
	const e = err instanceof GatewayError ? err : new GatewayError('api_error', 'Internal error')
	const out = renderers[shape](e, requestId)
	const headers: Record<string, string> = { 'content-type': 'application/json', ...out.headers }
	if (requestId) headers['x-request-id'] = requestId
	if (e.retryAfter !== undefined) {
		headers['retry-after'] = String(Math.ceil(e.retryAfter))
		// The exact wait beside the whole seconds: the OpenAI and Anthropic SDKs read `retry-after-ms` before `retry-after`,
		// so a 300 ms wait (an upstream's `retry-after-ms: 300`) is not rounded up to a second.
		headers['retry-after-ms'] = String(Math.max(0, Math.round(e.retryAfter * 1000)))
	}
	if (e.clientRetry !== undefined) headers['x-should-retry'] = String(e.clientRetry)
	// The openai SDK waits at most a minute as told, and past that retries on its own backoff, a second or so later:
	// refused again (a key's limit counts that retry too, pushing the wait further out). Told not to, its caller gets the
	// wait at once. The Anthropic SDK waits whatever it is told, so its callers keep their retry.
	else if (shape === 'openai' && e.retryAfter !== undefined && e.retryAfter > OPENAI_SDK_MAX_WAIT_S) headers['x-should-retry'] = 'false'
	return new Response(JSON.stringify(out.body), { status: out.status, headers })
}

/** The longest `retry-after` the openai SDK honours (its client.js: a wait over 60 s is replaced by its own backoff). */
const OPENAI_SDK_MAX_WAIT_S = 60
