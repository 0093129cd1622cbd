/**
 * Errors in Gemini's shape: `{error: {code: <http status>, message, status: <google.rpc.Code name>}}`
 * (https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes). Mid-stream, the same object is one `data:`
 * frame; the Google SDKs throw an ApiError for any chunk carrying `error` with a 4xx/5xx `code`.
 *
 * Insufficient balance (402): Google APIs have no 402, but 429 RESOURCE_EXHAUSTED would make SDKs retry what cannot
 * succeed. We keep HTTP 402 with status RESOURCE_EXHAUSTED (the closest rpc code) and say "billing" in the message
 * (only that: the message says whether the account's balance or the key's spend limit refused).
 *
 * A known wait rides in `details` as a `google.rpc.RetryInfo` (`retryDelay`, a protobuf Duration such as "37s"), where
 * Gemini puts it (https://ai.google.dev/gemini-api/docs/rate-limits), besides the `retry-after` header: Gemini CLI
 * reads the wait only from there (its `classifyGoogleError`); without it, it retries on its own backoff (5 s doubling
 * to 30 s, ten tries) whatever the vendor asked, and with it waits at least that long, or stops at once past 5 minutes.
 *
 * A refused key is answered as Google answers one with an API key, never 401 UNAUTHENTICATED (which Google says only to
 * OAuth bearers): unknown 400 INVALID_ARGUMENT "API key not valid…" (verbatim) with ErrorInfo `API_KEY_INVALID`,
 * expired `API_KEY_EXPIRED`, a disabled key or account 403 PERMISSION_DENIED `CONSUMER_SUSPENDED`, none 403
 * PERMISSION_DENIED. Google's clients and tools tell them apart by `details[].reason` (`KEY_REFUSALS`).
 * @module
 */
import type { ErrorKind, GatewayError } from '../../core/errors'
import type { SseFrame } from '../../core/sse'
import type { EncodedError } from '../codec'
import type { GeminiErrorBody, GeminiErrorStatus } from './model'
import { get, isObj, str } from './read'

const STATUS: Record<ErrorKind, GeminiErrorStatus> = {
	invalid_request: 'INVALID_ARGUMENT',
	authentication: 'UNAUTHENTICATED',
	insufficient_quota: 'RESOURCE_EXHAUSTED',
	permission: 'PERMISSION_DENIED',
	not_found: 'NOT_FOUND',
	payload_too_large: 'INVALID_ARGUMENT',
	rate_limit: 'RESOURCE_EXHAUSTED',
	api_error: 'INTERNAL',
	upstream: 'INTERNAL',
	unavailable: 'UNAVAILABLE',
	overloaded: 'UNAVAILABLE',
	timeout: 'DEADLINE_EXCEEDED',
}

/** The Gemini rpc status name for an error kind. */
export const geminiStatusOf = (kind: ErrorKind): GeminiErrorStatus => STATUS[kind]

const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo'
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'
const LOCALIZED = 'type.googleapis.com/google.rpc.LocalizedMessage'

/** How Google refuses an API key: its status, its own words (where the gateway's would not be recognised), its reason. */
export type KeyRefusal = { code: number; status: GeminiErrorStatus; message?: string; reason?: string }

/** By the gateway's code for the refusal (auth/key-refusal.ts, auth/api-key.ts, http/model-auth.ts). */
const KEY_REFUSALS: Record<string, KeyRefusal> = {
	invalid_api_key: { code: 400, status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.', reason: 'API_KEY_INVALID' },
	api_key_expired: { code: 400, status: 'INVALID_ARGUMENT', message: 'API key expired. Please renew the API key.', reason: 'API_KEY_EXPIRED' },
	api_key_disabled: { code: 403, status: 'PERMISSION_DENIED', reason: 'CONSUMER_SUSPENDED' },
	account_disabled: { code: 403, status: 'PERMISSION_DENIED', reason: 'CONSUMER_SUSPENDED' },
	// The gateway's message stays: it names the header to send, where Google's ("unregistered callers") does not.
	missing_api_key: { code: 403, status: 'PERMISSION_DENIED' },
}

/** Google's refusal for a key the gateway refused, or undefined for any other error. */
export const keyRefusalOf = (err: GatewayError): KeyRefusal | undefined =>
	err.kind === 'authentication' && err.code !== undefined ? KEY_REFUSALS[err.code] : undefined

function keyRefusalBody(err: GatewayError, k: KeyRefusal): GeminiErrorBody {
	const message = k.message ?? err.message
	const error: GeminiErrorBody['error'] = { code: k.code, message, status: k.status }
	if (k.reason) {
		const details: Record<string, unknown>[] = [{ '@type': ERROR_INFO, reason: k.reason, domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }]
		// Google localises its own words only.
		if (k.message) details.push({ '@type': LOCALIZED, locale: 'en-US', message })
		error.details = details
	}
	return { error }
}

function body(err: GatewayError): GeminiErrorBody {
	const refusal = keyRefusalOf(err)
	if (refusal) return keyRefusalBody(err, refusal)
	let message = err.message
	if (err.kind === 'insufficient_quota' && !/billing/i.test(message)) message = `${message} (billing)`
	const error: GeminiErrorBody['error'] = { code: err.status, message, status: STATUS[err.kind] }
	// Whole seconds, as the retry-after header says them.
	if (err.retryAfter !== undefined) error.details = [{ '@type': RETRY_INFO, retryDelay: `${Math.ceil(err.retryAfter)}s` }]
	return { error }
}

/** An error response in Gemini's shape, with `retry-after` when known. */
export function encodeError(err: GatewayError): EncodedError {
	const out: EncodedError = { status: keyRefusalOf(err)?.code ?? err.status, body: body(err) }
	if (err.retryAfter !== undefined) out.headers = { 'retry-after': String(Math.ceil(err.retryAfter)) }
	return out
}

/** The error as one SSE `data:` frame (Gemini streams have no event names). */
export function encodeStreamError(err: GatewayError): SseFrame {
	return { data: JSON.stringify(body(err)) }
}

/** Reads `{error:{code,message,status}}` (or the one-element array form of the non-SSE stream endpoint). */
export function errorDetails(payload: unknown): { code?: number; message: string; status?: string } | undefined {
	const o = Array.isArray(payload) ? payload[0] : payload
	if (!isObj(o) || !isObj(o.error)) return undefined
	const e = o.error
	const code = typeof e.code === 'number' ? e.code : undefined
	return { code, message: str(e.message) ?? str(get(e, 'status')) ?? 'upstream error', status: str(e.status) }
}

