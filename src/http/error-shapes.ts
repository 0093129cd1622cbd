/**
 * Which protocol's error shape a path answers in, and the rendering of a GatewayError as a Response.
 * Every error the gateway returns goes through `errorResponse`, so the shape and status are decided in one place.
 * @module
 */
import { GatewayError } from '../core/errors'
import type { EncodedError } from '../protocols/codec'

export type ErrorShape = 'openai' | 'anthropic' | 'gemini'

/** `/v1/messages…` speaks Anthropic, `/v1beta/…` Gemini, everything else (incl. /api) OpenAI's shape. */
export function shapeForPath(path: string): ErrorShape {
	if (path.startsWith('/v1/messages')) return 'anthropic'
	if (path.startsWith('/v1beta/') || path === '/v1beta') return 'gemini'
	return 'openai'
}

type Renderer = (e: GatewayError) => EncodedError
const renderers: Partial<Record<ErrorShape, Renderer>> = {}

/** Protocol codecs register their `encodeError` here at start (see protocols/registry.ts). */
export function registerErrorRenderer(shape: ErrorShape, r: Renderer) {
	renderers[shape] = r
}

/** Minimal OpenAI-shape fallback, used before codecs register and for the management API. */
const fallback: Renderer = (e) => ({
	status: e.status,
	body: { error: { message: e.message, type: e.kind === 'invalid_request' ? 'invalid_request_error' : e.kind, param: e.param ?? null, code: e.code ?? null } },
})

export function errorResponse(err: unknown, shape: ErrorShape, requestId?: string): Response {
	const e = err instanceof GatewayError ? err : new GatewayError('api_error', 'Internal error')
	const out = (renderers[shape] ?? fallback)(e)
	const headers: Record<string, string> = { 'content-type': 'application/json', ...out.headers }
	if (requestId) headers['x-request-id'] = requestId
	if (e.retryAfter !== undefined) headers['retry-after'] = String(Math.ceil(e.retryAfter))
	return new Response(JSON.stringify(out.body), { status: out.status, headers })
}
