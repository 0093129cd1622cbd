/**
 * Anthropic error bodies: `{ type: 'error', error: { type, message }, request_id }`
 * (docs.anthropic.com/en/api/errors), and the header checks every endpoint makes.
 * @module
 */

import { json, type JsonReply } from '../shared/reply'

/** Error `type` per HTTP status, as listed in Anthropic's error docs. */
const TYPES: Record<number, string> = {
	400: 'invalid_request_error',
	401: 'authentication_error',
	402: 'billing_error',
	403: 'permission_error',
	404: 'not_found_error',
	413: 'request_too_large',
	429: 'rate_limit_error',
	500: 'api_error',
	504: 'timeout_error',
	529: 'overloaded_error',
}

/** The organization a mock 429 names (a vendor account detail no gateway caller should see). */
export const MOCK_ORG = '5b0c9d2e-7f41-4a36-9e58-0d1c2b3a4f5e'

const MESSAGES: Record<number, string> = {
	// As Anthropic words it (https://docs.anthropic.com/en/api/rate-limits): the organization is in the message.
	429: `This request would exceed the rate limit for your organization (${MOCK_ORG}) of 50,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.`,
	500: 'Internal server error',
	504: 'Request timeout',
	529: 'Overloaded',
}

let counter = 0
const requestId = (): string => `req_mock${(++counter).toString(36).padStart(8, '0')}`

/** The error body for `status` (and a message). */
export function anthropicBody(status: number, message?: string): unknown {
	const type = TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
	return { type: 'error', error: { type, message: message ?? MESSAGES[status] ?? `Mock error ${status}` }, request_id: requestId() }
}

/** An Anthropic-shaped error reply. */
export const anthropicError = (status: number, message: string): JsonReply => json(anthropicBody(status, message), status)

/** 400 invalid_request_error, the shape of every validation failure. */
export const invalid = (message: string): JsonReply => anthropicError(400, message)

/**
 * Auth and the required `anthropic-version` header, in the order the API checks them. The key is read from
 * `x-api-key`, or from `Authorization: Bearer`, which the official TypeScript SDK (1.x) sends for API keys.
 */
export function checkHeaders(headers: Headers, apiKey: string): JsonReply | undefined {
	const bearer = headers.get('authorization')
	const key = headers.get('x-api-key') ?? (bearer?.startsWith('Bearer ') ? bearer.slice(7).trim() : undefined)
	if (!key) return anthropicError(401, 'x-api-key header is required')
	if (key !== apiKey) return anthropicError(401, 'invalid x-api-key')
	if (!headers.get('anthropic-version')) return invalid('anthropic-version: header is required')
}
