/**
 * An upstream's non-2xx answer → GatewayError, whatever its vendor: OpenAI and Gemini put `{error:{message}}`,
 * Anthropic `{type:'error', error:{type,message}}`. The status decides retry and blame (core upstreamStatusError):
 * an overload (Anthropic 529 overloaded_error, OpenAI 503, Gemini 503 UNAVAILABLE) is 503 to every caller, other
 * 5xx the gateway's 502.
 */
import { type GatewayError, upstreamStatusError } from '../core/errors'

export function upstreamError(status: number, text: string, retryAfterHeader: string | null): GatewayError {
	let message = text.slice(0, 500) || `upstream returned HTTP ${status}`
	const said: { code?: string; param?: string } = {}
	try {
		const body = JSON.parse(text) as { error?: { message?: unknown; details?: unknown; code?: unknown; param?: unknown; type?: unknown; status?: unknown } | string; message?: unknown }
		const m = typeof body.error === 'object' ? body.error?.message : typeof body.error === 'string' ? body.error : body.message
		if (typeof m === 'string' && m) message = m
		// OpenAI's `code` and `param` (Gemini's `code` is the HTTP status, a number: not taken).
		if (typeof body.error === 'object' && typeof body.error?.code === 'string') said.code = body.error.code
		if (typeof body.error === 'object' && typeof body.error?.param === 'string') said.param = body.error.param
		// Gemini refuses a wrong key with 400 API_KEY_INVALID, not 401: still the channel's key, not the caller's request.
		if (status === 400 && typeof body.error === 'object' && keyInvalid(body.error?.details)) status = 401
		// A 5xx whose body names an overload (Anthropic `overloaded_error`, Gemini `UNAVAILABLE`) is one, whatever
		// the status a proxy in between gave it: 503 like the vendors' own.
		if (status >= 500 && typeof body.error === 'object' && (body.error?.type === 'overloaded_error' || body.error?.status === 'UNAVAILABLE')) status = 503
	} catch {
		// not JSON: keep the text
	}
	return upstreamStatusError(status, message, parseRetryAfter(retryAfterHeader), said)
}

const keyInvalid = (details: unknown) => Array.isArray(details) && details.some((d) => (d as { reason?: unknown } | null)?.reason === 'API_KEY_INVALID')

/** `retry-after` is seconds or an HTTP date. */
export function parseRetryAfter(v: string | null): number | undefined {
	if (!v) return undefined
	const n = Number(v)
	if (Number.isFinite(n)) return Math.max(0, n)
	const d = Date.parse(v)
	return Number.isNaN(d) ? undefined : Math.max(0, (d - Date.now()) / 1000)
}
