/**
 * One error type for the whole gateway. Protocol codecs render it in their caller's shape
 * (OpenAI `{error:{message,type,code}}`, Anthropic `{type:"error",error:{type,message}}`,
 * Gemini `{error:{code,message,status}}`); routing reads `retryable` to decide on failover.
 * @module
 */

/** What went wrong, independent of protocol. Each kind has one HTTP status. */
export type ErrorKind =
	| 'invalid_request' // 400
	| 'authentication' // 401
	| 'insufficient_quota' // 402: not 429, so SDKs do not retry what cannot succeed
	| 'permission' // 403
	| 'not_found' // 404
	| 'payload_too_large' // 413
	| 'rate_limit' // 429
	| 'api_error' // 500
	| 'upstream' // 502
	| 'unavailable' // 503
	| 'overloaded' // 529 upstream, 503 to callers
	| 'timeout' // 504

const STATUS: Record<ErrorKind, number> = {
	invalid_request: 400,
	authentication: 401,
	insufficient_quota: 402,
	permission: 403,
	not_found: 404,
	payload_too_large: 413,
	rate_limit: 429,
	api_error: 500,
	upstream: 502,
	unavailable: 503,
	overloaded: 503,
	timeout: 504,
}

export class GatewayError extends Error {
	readonly kind: ErrorKind
	readonly status: number
	/** Machine-readable code, e.g. `model_not_found`, `insufficient_quota`, `invalid_api_key`. */
	readonly code?: string
	/** Whether another channel might succeed where this one failed (network, 429, 5xx). */
	readonly retryable: boolean
	/** Seconds to wait, from the upstream's or our own `retry-after`. */
	readonly retryAfter?: number
	/** Field or parameter the error is about, when known. */
	readonly param?: string
	/**
	 * What the upstream said, for the log and the operator (a channel's disabled reason and health) only: never
	 * rendered to the caller, since it can name the gateway's account (a key hint, an organisation).
	 */
	readonly detail?: string
	/**
	 * Anthropic's machine-readable `error.details` (`{error_code: 'thread_not_found'}`), which its SDK acts on (it replays
	 * a lost message thread) and types its errors by: rendered in Anthropic's shape only.
	 */
	readonly details?: ErrorDetails
	/**
	 * A prompt longer than the model's context window (code `context_length_exceeded`): the token counts the vendor
	 * gave, so each protocol words it as its own API does (Anthropic: "prompt is too long: N tokens > M maximum").
	 */
	readonly overflow?: ContextOverflow
	/**
	 * Whether the caller may succeed by asking again, sent as `x-should-retry` (the OpenAI and Anthropic SDKs obey it over
	 * the status, which otherwise has them retry every 408, 409, 429 and 5xx twice). Unset: the status decides.
	 */
	readonly clientRetry?: boolean

	constructor(
		kind: ErrorKind,
		message: string,
		opts: {
			code?: string
			status?: number
			retryable?: boolean
			retryAfter?: number
			param?: string
			detail?: string
			details?: ErrorDetails
			overflow?: ContextOverflow
			clientRetry?: boolean
			cause?: unknown
		} = {},
	) {
		super(message, { cause: opts.cause })
		this.name = 'GatewayError'
		this.kind = kind
		this.status = opts.status ?? STATUS[kind]
		this.code = opts.code
		this.retryable = opts.retryable ?? false
		this.retryAfter = opts.retryAfter
		this.param = opts.param
		this.detail = opts.detail
		this.details = opts.details
		this.overflow = opts.overflow
		this.clientRetry = opts.clientRetry
	}
}

/** The prompt's tokens and the model's maximum, when the vendor's refusal of an overlong prompt names them. */
export type ContextOverflow = { tokens?: number; max?: number }

/** The code of a prompt longer than the context window, OpenAI's, which agents compact their history on. */
export const CONTEXT_LENGTH_EXCEEDED = 'context_length_exceeded'

/** Anthropic's `error.details`: its `error_code`, and for `thread_unsupported_request` the fields it names. */
export type ErrorDetails = { error_code: string; unsupported?: string[] }

/** The client went away before its call was answered (a request it aborted): the relay's error for it, never sent. */
export const clientClosed = (): GatewayError => new GatewayError('api_error', 'client closed the request', { code: 'client_closed' })

const SENT_UPSTREAM = 'the request had reached the upstream'

/** As clientClosed, once the vendor had the request: it bills the input whether or not anyone reads the answer. */
export const clientClosedAfterSend = (): GatewayError => new GatewayError('api_error', 'client closed the request', { code: 'client_closed', detail: SENT_UPSTREAM })

/** Whether `e` is clientClosedAfterSend's. */
export const closedAfterSend = (e: GatewayError): boolean => e.code === 'client_closed' && e.detail === SENT_UPSTREAM

export const badRequest = (message: string, param?: string) =>
	new GatewayError('invalid_request', message, { param, code: 'invalid_request_error' })

export const notFound = (message: string, code = 'not_found') => new GatewayError('not_found', message, { code })

/**
 * A request one of the model's channels cannot take (it needs what only another kind of channel gives). Retryable:
 * the failover loop moves on to the next channel without holding it against this one (routing/attempts.ts); not
 * retryable when no channel of the model could take it, answered before anything is reserved.
 */
export const unsupportedForModel = (message: string, retryable: boolean, param?: string) =>
	new GatewayError('invalid_request', message, { code: 'unsupported_for_model', retryable, param })

/**
 * The vendor rate-limited the gateway's account (its 429): 429 to the caller, whose SDK retries it with backoff (after
 * `retry-after` when the vendor said how long), but told apart from the caller's own key limit (`rate_limit_exceeded`,
 * src/limits/rate-limit.ts) by its code (`upstream_rate_limited`; OpenAI's shape shows it, Anthropic's and Gemini's
 * have only the message), and in the gateway's words: the vendor's name the gateway's account and its limits
 * ("Rate limit reached for gpt-4o in organization org-… on tokens per min"), so they go to `detail` (log, health).
 * @example upstreamRateLimited('Rate limit reached … org-123 …', 20).message.includes('org-123') === false
 */
export const upstreamRateLimited = (said: string, retryAfter?: number) =>
	new GatewayError('rate_limit', 'the upstream provider is rate limiting requests for this model; retry after a short wait', {
		retryable: true,
		retryAfter,
		code: 'upstream_rate_limited',
		detail: said,
	})

/**
 * Classifies an upstream HTTP failure. 429, 5xx and 529 may succeed elsewhere (429 stays 429, `upstreamRateLimited`;
 * 503 and 529, an overload, stay 503; other 5xx are the gateway's 502); other 4xx are about the request,
 * except 401 and 403: those refuse the gateway's own credentials, so they are our failure (502 when no channel
 * succeeds) with a message of our own; the vendor's words go to `detail`.
 * @example upstreamStatusError(429, 'slow down', 3).retryable === true
 */
export function upstreamStatusError(
	status: number,
	message: string,
	retryAfter?: number,
	said: { code?: string; param?: string; details?: ErrorDetails; overflow?: ContextOverflow; detail?: string } = {},
): GatewayError {
	// What the vendor said, whole, for the log and the channel's health (`message` may be the gateway's own by now).
	const detail = said.detail ?? message
	if (status === 429) return upstreamRateLimited(detail, retryAfter)
	// An overloaded upstream (Anthropic 529 overloaded_error, OpenAI and Gemini 503 / UNAVAILABLE) reaches every
	// caller as 503 in its own shape, so a client's overload handling works whichever vendor served it. Its words, and
	// any other 5xx's, are the upstream's trouble (a proxy's page naming its hosts, a stack trace): the caller gets ours.
	if (status === 529 || status === 503) return new GatewayError('overloaded', 'the upstream provider is overloaded; retry after a short wait', { retryable: true, retryAfter, detail })
	if (status >= 500) return new GatewayError('upstream', `the upstream provider failed (HTTP ${status})`, { retryable: true, code: 'upstream_error', detail })
	// A vendor's (or its proxy's) own timeout, not the caller's fault: another channel may answer, and the SDKs retry a 408.
	if (status === 408) return new GatewayError('timeout', 'the upstream provider timed out (HTTP 408)', { retryable: true, code: 'upstream_timeout', retryAfter, detail })
	if (status === 401)
		// The channel's key is wrong or revoked: no request can succeed on it (routing disables the channel).
		return new GatewayError('upstream', "the upstream provider refused the gateway's credentials for this model", { retryable: true, code: 'upstream_auth', detail })
	if (status === 403)
		// Often one model the vendor account may not use, not the whole channel: another channel may serve it.
		return new GatewayError('upstream', 'the upstream provider refused the gateway access to this model', { retryable: true, code: 'upstream_forbidden', detail })
	const also = detail === message ? undefined : detail
	// A 404 naming no other thing missing is the model, absent from this channel's vendor (a glob or a mapping claimed it,
	// or the vendor retired it): another channel may serve it. Anthropic's thread_not_found (a message thread it no longer
	// keeps) and OpenAI's previous_response_not_found are about the request, and are its answer.
	if (status === 404) {
		const code = said.details?.error_code ?? said.code ?? 'model_not_found'
		return new GatewayError('not_found', message, { code, details: said.details, detail: also, retryable: code === 'model_not_found' })
	}
	if (status === 413) return new GatewayError('payload_too_large', message, { detail: also })
	// The request's own fault: the vendor's code and param go with it (`context_length_exceeded` is what agents compact on).
	if (said.overflow) return new GatewayError('invalid_request', message, { status: 400, code: CONTEXT_LENGTH_EXCEEDED, param: said.param, overflow: said.overflow, detail: also })
	return new GatewayError('invalid_request', message, { status: status >= 400 && status < 500 ? status : 400, code: said.code, param: said.param, details: said.details, detail: also })
}
