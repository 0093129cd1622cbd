/**
 * An upstream's non-2xx answer → GatewayError, whatever its vendor: OpenAI and Gemini put `{error:{message}}`,
 * Anthropic `{type:'error', error:{type,message}}`. The status decides retry and blame (core upstreamStatusError):
 * an overload (Anthropic 529 overloaded_error, OpenAI 503, Gemini 503 UNAVAILABLE) is 503 to every caller, other
 * 5xx the gateway's 502; a rate limit (429) is 429 `upstream_rate_limited` in the gateway's words. How long to wait
 * comes from `retry-after-ms`, `retry-after` or, for Gemini, the body's `google.rpc.RetryInfo`.
 *
 * What the caller reads: the vendor's message only for a 4xx about its own request, and only when the vendor said it
 * in JSON (a proxy's HTML page or plain text names hosts, addresses and software versions: the gateway's own words
 * then), with the vendor account's organization and project ids masked. The raw text goes to `detail` (log, health).
 */
import { CONTEXT_LENGTH_EXCEEDED, type ContextOverflow, type ErrorDetails, type GatewayError, upstreamStatusError } from '../core/errors'

/**
 * @param retryAfter the response's headers (read for `retry-after-ms` and `retry-after`), or the `retry-after`
 * value alone.
 */
export function upstreamError(status: number, text: string, retryAfter: Headers | string | null): GatewayError {
	let message = text.slice(0, 500) || `upstream returned HTTP ${status}`
	let worded = false
	const said: { code?: string; param?: string; details?: ErrorDetails; overflow?: ContextOverflow; detail?: string } = {}
	let wait = typeof retryAfter === 'string' || retryAfter === null ? parseRetryAfter(retryAfter) : retryAfterOf(retryAfter)
	try {
		const body = JSON.parse(text) as { error?: { message?: unknown; details?: unknown; code?: unknown; param?: unknown; type?: unknown; status?: unknown } | string; message?: unknown }
		const m = typeof body.error === 'object' ? body.error?.message : typeof body.error === 'string' ? body.error : body.message
		if (typeof m === 'string' && m) {
			message = m
			worded = true
		}
		// OpenAI's `code` and `param` (Gemini's `code` is the HTTP status, a number: not taken). Azure OpenAI's 404
		// `DeploymentNotFound` is the model missing from this resource, as OpenAI's `model_not_found`: another channel may serve it.
		if (typeof body.error === 'object' && typeof body.error?.code === 'string') said.code = body.error.code === 'DeploymentNotFound' ? 'model_not_found' : body.error.code
		if (typeof body.error === 'object' && typeof body.error?.param === 'string') said.param = body.error.param
		if (typeof body.error === 'object') said.details = anthropicDetails(body.error?.details)
		// Gemini refuses a wrong or expired key with 400 API_KEY_INVALID or API_KEY_EXPIRED, not 401: still the channel's key,
		// not the caller's request.
		if (status === 400 && typeof body.error === 'object' && keyInvalid(body.error?.details)) status = 401
		// A 5xx whose body names an overload (Anthropic `overloaded_error`, Gemini `UNAVAILABLE`) is one, whatever
		// the status a proxy in between gave it: 503 like the vendors' own.
		if (status >= 500 && typeof body.error === 'object' && (body.error?.type === 'overloaded_error' || body.error?.status === 'UNAVAILABLE')) status = 503
		if (wait === undefined && typeof body.error === 'object') wait = retryDelayOf(body.error?.details)
	} catch {
		// not JSON: keep the text
	}
	if (status === 400) said.overflow = contextOverflow(message, said.code)
	said.detail = message
	const shown = worded || said.overflow ? maskAccountIds(message) : `the upstream provider answered HTTP ${status}`
	return upstreamStatusError(status, shown, wait, said)
}

/**
 * A vendor account's ids, as OpenAI words them in errors ("… in organization org-AbC… ", "project proj_…"): the
 * operator's, not the caller's business.
 * @example maskAccountIds('quota of organization org-AbC123 exceeded') === 'quota of organization org-*** exceeded'
 */
export const maskAccountIds = (text: string) => text.replace(/\b(org|proj)([-_])[A-Za-z0-9]{4,}/g, '$1$2***')

/**
 * A vendor's refusal of a prompt longer than the model's context window, with the counts its words give:
 * Anthropic "prompt is too long: 208656 tokens > 200000 maximum" (https://docs.anthropic.com/en/api/errors), OpenAI
 * `code: "context_length_exceeded"` ("This model's maximum context length is 128000 tokens. However, your messages
 * resulted in 130532 tokens…", or without counts), Gemini INVALID_ARGUMENT "The input token count (1196265) exceeds
 * the maximum number of tokens allowed (1048575)."
 * @example contextOverflow('prompt is too long: 208656 tokens > 200000 maximum') // { tokens: 208656, max: 200000 }
 */
export function contextOverflow(message: string, code?: string): ContextOverflow | undefined {
	let m = /prompt is too long: (\d+) tokens > (\d+) maximum/.exec(message)
	if (m) return { tokens: Number(m[1]), max: Number(m[2]) }
	m = /input token count \(?(\d+)\)? exceeds the maximum number of tokens allowed \(?(\d+)\)?/.exec(message)
	if (m) return { tokens: Number(m[1]), max: Number(m[2]) }
	m = /maximum context length is (\d+) tokens[^]*?(?:resulted in|requested) (\d+) tokens/.exec(message)
	if (m) return { tokens: Number(m[2]), max: Number(m[1]) }
	return code === CONTEXT_LENGTH_EXCEEDED ? {} : undefined
}

/**
 * Anthropic's `error.details` (an object; Gemini's `details` is a list): its `error_code` and, for
 * `thread_unsupported_request`, the `unsupported` fields it names. Only these documented members are kept: the
 * caller's SDK recovers by them (a lost message thread is replayed), and nothing else of the vendor's answer reaches it.
 * @example anthropicDetails({ error_code: 'thread_not_found' }) // { error_code: 'thread_not_found' }
 */
function anthropicDetails(details: unknown): ErrorDetails | undefined {
	if (typeof details !== 'object' || details === null || Array.isArray(details)) return undefined
	const d = details as { error_code?: unknown; unsupported?: unknown }
	if (typeof d.error_code !== 'string' || !d.error_code) return undefined
	const out: ErrorDetails = { error_code: d.error_code }
	if (Array.isArray(d.unsupported) && d.unsupported.every((u) => typeof u === 'string')) out.unsupported = d.unsupported as string[]
	return out
}

const KEY_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED'])
const keyInvalid = (details: unknown) => Array.isArray(details) && details.some((d) => KEY_REASONS.has((d as { reason?: unknown } | null)?.reason as string))

/** `retry-after` is seconds or an HTTP date. */
export function parseRetryAfter(v: string | null): number | undefined {
	if (!v) return undefined
	const n = Number(v)
	if (Number.isFinite(n)) return Math.max(0, n)
	const d = Date.parse(v)
	return Number.isNaN(d) ? undefined : Math.max(0, (d - Date.now()) / 1000)
}

/**
 * Seconds to wait from a response's headers: `retry-after-ms` first (milliseconds; OpenAI-compatible APIs such as
 * Azure OpenAI send it, and the OpenAI and Anthropic SDKs read it before `retry-after`), else `retry-after`.
 * @example retryAfterOf(new Headers({ 'retry-after-ms': '1500' })) === 1.5
 */
export function retryAfterOf(h: Headers): number | undefined {
	const ms = Number(h.get('retry-after-ms') ?? Number.NaN)
	if (Number.isFinite(ms) && ms >= 0) return ms / 1000
	return parseRetryAfter(h.get('retry-after'))
}

/**
 * Gemini says how long to wait in its error's details, not in a header: a `google.rpc.RetryInfo` whose `retryDelay`
 * is a protobuf Duration in JSON, decimal seconds with an `s` (https://ai.google.dev/gemini-api/docs/rate-limits,
 * https://protobuf.dev/reference/protobuf/google.protobuf/#duration).
 * @example retryDelayOf([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }]) === 37
 */
export function retryDelayOf(details: unknown): number | undefined {
	if (!Array.isArray(details)) return undefined
	for (const d of details) {
		const o = d as { '@type'?: unknown; retryDelay?: unknown } | null
		if (typeof o?.['@type'] !== 'string' || !o['@type'].endsWith('google.rpc.RetryInfo') || typeof o.retryDelay !== 'string') continue
		const m = /^(\d+(?:\.\d+)?)s$/.exec(o.retryDelay)
		if (m) return Number(m[1])
	}
	return undefined
}

/** The members a body that is only an error may carry beside `error` (vendors' and proxies' envelopes). */
const ERROR_ENVELOPE = new Set(['error', 'type', 'status', 'code', 'message', 'success', 'request_id', 'requestId'])

/**
 * A 2xx answer that is only an error, `{"error": {…}}` with nothing of an answer beside it: some OpenAI-compatible
 * vendors and proxies answer a failure so. It is the failure its words say (`answeredError`), tried on the next channel
 * and never charged, as the same vendor's error sent as a stream event is. Undefined for any other body.
 * @example errorOnlyAnswer({ error: { message: 'busy', type: 'server_error' } }, new Headers())?.retryable === true
 */
export function errorOnlyAnswer(body: unknown, headers: Headers): GatewayError | undefined {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
	const { error } = body as Record<string, unknown>
	if (typeof error !== 'object' || error === null || Array.isArray(error)) return undefined
	for (const k in body) if (!ERROR_ENVELOPE.has(k)) return undefined
	return answeredError(error as Record<string, unknown>, headers)
}

/**
 * An error object an upstream sent in a 2xx answer, as the HTTP failure it stands for: the status its numeric `code`
 * names (Gemini's), 429 for a rate limit in OpenAI's or Anthropic's words, else 502.
 */
export function answeredError(error: Record<string, unknown>, headers: Headers): GatewayError {
	const code = error.code
	const status =
		typeof code === 'number' && code >= 400 && code < 600
			? code
			: code === 'rate_limit_exceeded' || error.type === 'rate_limit_error'
				? 429
				: 502
	return upstreamError(status, JSON.stringify({ error }), headers)
}
