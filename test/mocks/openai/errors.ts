/**
 * OpenAI error bodies: `{ error: { message, type, param, code } }` (platform.openai.com/docs/guides/error-codes).
 * @module
 */

import { json, type JsonReply } from '../shared/reply'

/** An OpenAI-shaped error reply. */
export function openaiError(status: number, message: string, param: string | null = null, code: string | null = null, type?: string): JsonReply {
	return json({ error: { message, type: type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'), param, code } }, status)
}

/** The organization a mock 429 names (a vendor account detail no gateway caller should see). */
export const MOCK_ORG = 'org-MockOrg4kQ9zT2'

/** The body of an injected `status` fault, worded as OpenAI words it. */
export function openaiStatusBody(status: number): unknown {
	// As OpenAI words it: the organization (the gateway's own account) and its limits are in the message.
	if (status === 429)
		return {
			error: {
				message: `Rate limit reached for gpt-4o-mini in organization ${MOCK_ORG} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
				type: 'requests',
				param: null,
				code: 'rate_limit_exceeded',
			},
		}
	if (status === 401) return { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }
	if (status === 503) return { error: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', param: null, code: null } }
	if (status >= 500) return { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } }
	return { error: { message: `Mock error ${status}`, type: 'invalid_request_error', param: null, code: null } }
}

/** 401 for a missing or wrong `Authorization: Bearer` key, or undefined when the key is right. */
export function checkBearer(headers: Headers, apiKey: string): JsonReply | undefined {
	const auth = headers.get('authorization')
	if (!auth) {
		return openaiError(
			401,
			"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
			null,
			null,
		)
	}
	const key = auth.startsWith('Bearer ') ? auth.slice(7).trim() : ''
	if (key === apiKey) return
	const shown = key.length > 8 ? `${key.slice(0, 3)}*****${key.slice(-4)}` : key
	return openaiError(401, `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`, null, 'invalid_api_key')
}

/** The 400 OpenAI gives when the body is not JSON. */
export const invalidJson = (): JsonReply =>
	openaiError(
		400,
		"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
	)

/** Body must be a JSON object; returns the error reply otherwise. */
export function requireObject(body: unknown, jsonError: boolean): JsonReply | undefined {
	if (jsonError || !body || typeof body !== 'object' || Array.isArray(body)) return invalidJson()
}

/** The 404 for an unknown model (only when the mock was started with `models`). */
export const modelNotFound = (model: string): JsonReply =>
	openaiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, null, 'model_not_found')

/** Checks `model` is present (and served, when the mock has a model list). */
export function checkModel(model: unknown, models: string[] | undefined): JsonReply | undefined {
	if (typeof model !== 'string' || !model) return openaiError(400, 'you must provide a model parameter')
	if (models && !models.includes(model)) return modelNotFound(model)
}

/** A function name OpenAI takes: letters, digits, `_` and `-`, at most 64 (https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools). */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]+$/

/** OpenAI's 400 for a function name it refuses at `param` (`tools[0].function.name`), or undefined for a good one. */
export function checkFunctionName(name: unknown, param: string): JsonReply | undefined {
	if (typeof name !== 'string') return
	if (!FUNCTION_NAME.test(name)) return openaiError(400, `Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, param, 'invalid_value')
	if (name.length > 64) return openaiError(400, `Invalid '${param}': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`, param, 'string_above_max_length')
}

/**
 * OpenAI's 400 for a `user` past 64 characters (chat and Responses alike; Claude Code's ~150-character
 * `metadata.user_id` is the usual one), or undefined.
 */
export function checkUser(user: unknown): JsonReply | undefined {
	if (typeof user === 'string' && user.length > 64)
		return openaiError(400, `Invalid 'user': string too long. Expected a string with maximum length 64, but got a string with length ${user.length} instead.`, 'user', 'string_above_max_length')
}
