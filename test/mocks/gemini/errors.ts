/**
 * Gemini (Google API) error bodies: `{ error: { code, message, status, details? } }`
 * (ai.google.dev/gemini-api/docs/troubleshooting), and API-key auth (`x-goog-api-key` header or `?key=`).
 * @module
 */

import { json, type JsonReply } from '../shared/reply'

/** google.rpc canonical status names per HTTP status. */
const STATUS: Record<number, string> = {
	400: 'INVALID_ARGUMENT',
	401: 'UNAUTHENTICATED',
	403: 'PERMISSION_DENIED',
	404: 'NOT_FOUND',
	409: 'ABORTED',
	429: 'RESOURCE_EXHAUSTED',
	499: 'CANCELLED',
	500: 'INTERNAL',
	501: 'NOT_IMPLEMENTED',
	503: 'UNAVAILABLE',
	504: 'DEADLINE_EXCEEDED',
}

/** The project a mock 429 names (a vendor account detail no gateway caller should see). */
export const MOCK_PROJECT = 'projects/812345678901'

/** Seconds a mock 429 asks to wait, in its `google.rpc.RetryInfo` (Gemini sends no retry-after header). */
export const MOCK_RETRY_DELAY_S = 37

const MESSAGES: Record<number, string> = {
	429: `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.0-flash, consumer: ${MOCK_PROJECT}\nPlease retry in ${MOCK_RETRY_DELAY_S}.2s.`,
	500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
	503: 'The model is overloaded. Please try again later.',
	504: 'Deadline expired before operation could complete.',
}

/**
 * What Gemini details a 429 with (https://ai.google.dev/gemini-api/docs/rate-limits): the quota that ran out, a help
 * link, and how long to wait (`RetryInfo.retryDelay`, a protobuf Duration).
 */
const RATE_LIMIT_DETAILS = [
	{
		'@type': 'type.googleapis.com/google.rpc.QuotaFailure',
		violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier', quotaDimensions: { location: 'global', model: 'gemini-2.0-flash' }, quotaValue: '10' }],
	},
	{ '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
	{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${MOCK_RETRY_DELAY_S}s` },
]

/** The error body for `status`. */
export function geminiBody(status: number, message?: string, details: unknown[] | undefined = status === 429 && message === undefined ? RATE_LIMIT_DETAILS : undefined): unknown {
	const error: Record<string, unknown> = {
		code: status,
		message: message ?? MESSAGES[status] ?? `Mock error ${status}`,
		status: STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION'),
	}
	if (details) error.details = details
	return { error }
}

/** A Gemini-shaped error reply. */
export const geminiError = (status: number, message: string, details?: unknown[]): JsonReply => json(geminiBody(status, message, details), status)

/** 400 INVALID_ARGUMENT with field violations, as schema errors are reported. */
export function badRequest(violations: { field: string; description: string }[]): JsonReply {
	return geminiError(
		400,
		violations.map((v) => v.description).join('\n'),
		[{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations }],
	)
}

/** Missing key: 403 PERMISSION_DENIED; wrong key: 400 API_KEY_INVALID (what the real endpoint answers, not 401). */
export function checkKey(headers: Headers, query: Record<string, string>, apiKey: string): JsonReply | undefined {
	const key = headers.get('x-goog-api-key') ?? query.key
	if (!key) {
		return geminiError(
			403,
			"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
		)
	}
	if (key === apiKey) return
	const invalid = 'API key not valid. Please pass a valid API key.'
	return geminiError(400, invalid, [
		{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
		{ '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: invalid },
	])
}
